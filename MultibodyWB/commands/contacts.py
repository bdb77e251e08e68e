"""The Contact command: two picked faces become a contact between their bodies.

Select a face on each of two bodies (one may be the ground), or a whole solid: each pick's
surface is recognised (:func:`MultibodyWB.objects.contact.recognise`: a planar face is a plane, a
spherical face a sphere, a cylindrical face a cylinder, a box solid a box), a marker is made on
it as the Marker command makes one (the face's middle and outward normal, the sphere's centre,
the cylinder's axis halfway along the face; a box's centre and edges, through the marker's
offset), then the Contact with the stiffness of :func:`~MultibodyWB.objects.contact.
default_stiffness`, all in one undo step, in which the mechanism's Simulation gets an rk4
step short enough for the contact (:func:`~MultibodyWB.document.contact_step.fit_simulation_step`,
said in the Report view); the contact's task panel then opens.

A pick that is no primitive (a cone, a torus, a free-form face, a solid that is not a box), and a
pair of primitives the solver does not take (a cone against a sphere, two planes), becomes the
convex hull of the solid (:func:`~MultibodyWB.objects.contact.convex`: its tessellation's
vertices, its marker at the solid's centre of mass): the first of (as picked, the input's solid
convex, the output's, both) that the solver takes. Edges and vertices, and markers on no solid,
are refused with a message naming the picks and the supported pairs, and nothing is made.
"""

import numpy as np

from ..gui.task_base import literal, with_panel
from ..objects import contact as contact_module
from ..objects import units
from ..objects.base import quantity_value
from ..objects.contact import TYPE as CONTACT
from ..objects.mechanism import mechanism_of
from .base import ACTIONS, DOC, Command, message, ref, run_script
from .hinges import ordered_ends
from .model import FACTORY, end_script, pick_argument
from .selection import Pick, end_body

#: The module whose functions the command's statements call besides the factory's.
CONTACT_MODULE = "MultibodyWB.objects.contact"
STEP_MODULE = "MultibodyWB.document.contact_step"


def _end_shape(end):
    """(recognised primitive or None, a function giving its convex hull or None, what the end
    is in words) of a pick or a marker; the hull is computed only when it is asked for (a
    planar face is a plane: its solid's hull is not needed)."""
    if isinstance(end, Pick):
        found = contact_module.recognise(end.solid, end.sub)
        words = found.what if found else contact_module.surface_name(end.solid, end.sub)
        element = end.sub[:4] if end.sub else ""
        # the marker of a convex shape is made on the whole solid (its offset to the hull's
        # centre): its hull is the whole object's, all its solids
        hull = (lambda: contact_module.convex(end.solid)) if element in ("", "Face") else \
            (lambda: None)
        return found, hull, words
    solid_name, _, sub = end.PickedElement.partition(".")
    solid = end.Document.getObject(solid_name)
    attached = contact_module.marker_solid(end)

    def hull():
        on = contact_module.marker_sub(end)
        if attached is None or contact_module.convex(attached, sub=on) is None:
            return None
        words = contact_module.contact_solid(attached, on)[1]
        # the marker is the hull's frame as it is
        return contact_module.Recognised(
            "convex", tolerance=contact_module.default_tolerance(attached, on),
            what=f"marker '{end.Label}' ('{attached.Label}', its convex hull"
                 f"{f': {words}' if words else ''})")
    if solid is None or not sub:
        return None, hull, f"marker '{end.Label}' (not on a face)"
    found = contact_module.recognise(solid, sub)
    if found is not None and found.offset is not None:
        found = None
    return found, hull, (f"marker '{end.Label}' on {found.what}" if found else
                         f"marker '{end.Label}' on {contact_module.surface_name(solid, sub)}")


def _shapes(primitives, hulls):
    """The shapes of the two ends (:func:`~MultibodyWB.objects.contact.choose_shapes`): the
    primitives when the solver takes them as they are, else with the convex hulls, computed
    only then (``hulls``: per end, a function giving its hull or None)."""
    if None not in primitives and contact_module.supported(*(p.type for p in primitives)):
        return tuple(primitives)
    return contact_module.choose_shapes(primitives, [h() for h in hulls])


def plan(selection):
    """``(statements, None)`` making the contact of the selection, or ``(None, (text,
    details))`` saying why it cannot be made."""
    ends = ordered_ends(selection)
    primitives, hulls, words = zip(*(_end_shape(end) for end in ends))
    shapes = _shapes(primitives, hulls)
    if shapes is None:
        found = [f"{w}: {s.type}" if s else f"{w}: not a contact shape"
                 for s, w in zip(primitives, words)]
        return None, (f"No contact between {words[0]} and {words[1]}: the supported pairs are "
                      f"{contact_module.pairs_text()}. Pick a face or a whole solid on each "
                      "body (a face that is no plane, sphere, cylinder, cone or torus, and a solid "
                      "that is no box, is taken as the solid's convex hull).", found)
    statements, names = [], []
    for end, shape, variable in zip(ends, shapes, ("input_marker", "output_marker")):
        if isinstance(end, Pick) and shape.offset is not None:
            whole = pick_argument(Pick(end.solid, "", end.body))      # on the whole solid
            statements.append(f"{variable} = {FACTORY}.make_marker({DOC}, {ref(end.body)}, "
                              f"{whole}, offset={literal(shape.offset)})")
            names.append(variable)
        else:
            lines, name = end_script(end, variable)
            statements += lines
            names.append(name)
    bodies = [end_body(e) for e in ends]
    mechanism = mechanism_of(bodies[0])
    gravity = float(np.linalg.norm([units.to_si(g, "m/s^2")
                                    for g in quantity_value(mechanism, "Gravity")]))
    stiffness, rule = contact_module.default_stiffness(shapes, bodies, gravity)
    arguments = ", ".join(repr((s.type, s.dimensions())) for s in shapes)
    statements.append(f"{FACTORY}.make_contact({DOC}, {ref(mechanism)}, {names[0]}, {names[1]}, "
                      f"{arguments}, {stiffness!r}, stiffness_rule={rule!r})")
    # the Simulation's rk4 step shortened to what the contact needs, said in the Report view
    statements.append(f"{STEP_MODULE}.fit_simulation_step({ref(mechanism)})")
    return statements, None


def _contact(command, selection):
    statements, refusal = plan(selection)
    if statements is None:
        text, details = refusal
        message(command.MENU_TEXT, text, details)
        return False
    return run_script(command.MENU_TEXT, statements, modules=(FACTORY, CONTACT_MODULE,
                                                               STEP_MODULE))


_contact.builder = lambda selection: plan(selection)[0]
ACTIONS["contact"] = with_panel(_contact, CONTACT)


class CreateContact(Command):
    NAME = "Contact"
    ICON = "Contact.svg"
    MENU_TEXT = "Contact"
    TOOL_TIP = ("Contact: the shapes of two bodies touch (compliant normal force with a "
                "restitution, Coulomb friction). Select a face on each of two bodies (or one on "
                "the ground): planar, spherical, cylindrical, conical or toroidal faces, or a "
                "whole box solid; any other face or solid (an egg, a prism) is its solid's "
                "convex hull; "
                f"supported pairs: {contact_module.pairs_text()}")
    NEEDS = "ends"
    ENDS = 2
    ACTION = "contact"


COMMANDS = (CreateContact,)
