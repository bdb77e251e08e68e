"""Make the Multibody document objects: ``make_x(doc, ...)``, as FEM's ``ObjectsFem`` does.

The GUI commands, the macros they record, the examples and the tests all create objects through
these functions. View providers are attached only when the GUI is up.

Numbers given for quantities are read in the unit the property shows: mm, deg, mm/s, deg/s,
kg/m^3, N/m, N m/rad, N s/m, N m s/rad, s (see each property's tool tip); a text with a unit
(``"12 N*m/rad"``) or a ``FreeCAD.Units.Quantity`` is taken as it is. Drivers and force magnitudes
are expressions in ``t`` (s) in SI units (m, rad, N, N m), the solver's.
"""

import FreeCAD

from ..objects import labels
from ..objects.base import READ_ONLY, set_value, type_of
from ..objects.body import BodyProxy
from ..objects.contact import DIMENSION_PROPERTIES, ContactProxy
from ..objects.coupler import CouplerProxy, coupler_label, update_coordinates
from ..objects.force import ForceProxy, field_properties, type_params
from ..objects.hinge import OPTION_PROPERTIES, HingeProxy, fill_stop_stiffness, property_name
from ..objects.marker import TYPE as MARKER_TYPE
from ..objects.marker import MarkerProxy, attach, get_element
from ..objects.mechanism import MechanismProxy, mechanism_of
from ..objects.result import ResultProxy
from ..objects.simulation import MODEL_ATTRIBUTES, SimulationProxy
from ..objects.study import StudyProxy
from ..solver.api import HINGE_TYPES

#: Keyword of :func:`make_hinge` -> prefix of the per-coordinate properties.
HINGE_OPTIONS = {
    "initial": "Initial", "initial_coordinates": "Initial",
    "rates": "InitialRate", "initial_rates": "InitialRate",
    "stiffness": "Stiffness", "spring_reference": "SpringReference", "damping": "Damping",
    "lower_limits": "LowerLimit", "upper_limits": "UpperLimit",
    "stop_stiffness": "StopStiffness", "stop_restitution": "StopRestitution",
    "stop_impact_speed": "StopImpactSpeed", "drivers": "Driver",
    "motor_speed": "MotorSpeed", "motor_ramp_time": "MotorRampTime",
}
#: Keyword of :func:`make_hinge` -> a per-hinge switch.
HINGE_SWITCHES = {"driver_from_drawing": "DriverFromDrawing",
                  "initial_is_estimate": "InitialIsEstimate",
                  "spring_reference_as_drawn": "SpringReferenceAsDrawn"}
assert set(HINGE_OPTIONS.values()) == {o.prefix for o in OPTION_PROPERTIES}


#: The class of the view provider that objects get while the GUI is up (None without the GUI).
#: :mod:`MultibodyWB.viewproviders.base` sets it when it is imported (the workbench's commands and
#: any document with Multibody objects import it): the view providers sit above this module, as
#: they open the task panels that call it.
view_provider_class = None


def use_view_provider(cls):
    """Give every object made from now on (while the GUI is up) a view provider ``cls(vobj)``."""
    global view_provider_class
    view_provider_class = cls


def attach_view(obj):
    """Give ``obj`` its view provider (GUI up and a class set); return whether it got one."""
    if not FreeCAD.GuiUp or view_provider_class is None or obj.ViewObject is None:
        return False
    view_provider_class(obj.ViewObject)
    return True


def has_view(obj):
    """Whether ``obj`` has a Multibody view provider (false without the GUI)."""
    proxy = getattr(getattr(obj, "ViewObject", None), "Proxy", None)
    return view_provider_class is not None and isinstance(proxy, view_provider_class)


def _view_provider(obj):
    attach_view(obj)


def _new(doc, type_name, proxy_class, name, label="", default_name=None):
    """A new object called ``name`` (labelled so), or ``default_name`` when ``name`` is None
    (the caller then labels it from what it connects)."""
    obj = doc.addObject(type_name, name or default_name)
    proxy_class(obj)
    if name:
        obj.Label = name
    if label:
        obj.Label2 = label
    _view_provider(obj)
    return obj


def _mechanism(obj):
    mechanism = mechanism_of(obj)
    if mechanism is None:
        raise ValueError(f"'{obj.Label}' belongs to no mechanism")
    return mechanism


def make_mechanism(doc, name="Mechanism", gravity=None, description="", simulation=True):
    """A Mechanism container (with a Simulation unless ``simulation`` is False).

    ``gravity``: 3 numbers in mm/s^2 (default 0, 0, -9810).
    """
    obj = _new(doc, "App::DocumentObjectGroupPython", MechanismProxy, name)
    if gravity is not None:
        set_value(obj, obj.Proxy.prop("Gravity"), gravity)
    obj.Description = description
    if simulation:
        make_simulation(doc, obj)
    return obj


def make_body(doc, mechanism, solids, density=None, ground=False, name=None, label="",
              initial_velocity=None, initial_angular_velocity=None):
    """A Body of ``mechanism`` made of ``solids`` (one object or a list of them).

    Parameters
    ----------
    name : str, optional
        Name and label; default: labelled from the first solid ("Crank body", see
        :mod:`~MultibodyWB.objects.labels`).
    density : number, str, Quantity, dict or None
        kg/m^3 (or a quantity with its unit) for the ``Density`` property; a dict is a material
        card (with a ``"Density"`` entry such as ``"7900 kg/m^3"``) for the ``Material`` property;
        None keeps the default (7850 kg/m^3, steel).
    ground : bool
        Make this body the mechanism's ground.
    initial_velocity, initial_angular_velocity : 3 numbers, optional
        mm/s and deg/s, global axes.
    """
    obj = _new(doc, "App::FeaturePython", BodyProxy, name, label, "Body")
    obj.Solids = list(solids) if isinstance(solids, (list, tuple)) else [solids]
    if not name:
        obj.Label = labels.body_label(obj.Solids)
    if isinstance(density, dict):
        obj.Material = {str(k): str(v) for k, v in density.items()}
        obj.DensitySource = "Material"
    elif density is not None:
        set_value(obj, obj.Proxy.prop("Density"), density)
    for prop, value in (("InitialVelocity", initial_velocity),
                        ("InitialAngularVelocity", initial_angular_velocity)):
        if value is not None:
            set_value(obj, obj.Proxy.prop(prop), value)
    mechanism.addObject(obj)
    if ground:
        mechanism.Ground = obj
    obj.recompute()
    return obj


def markers_of(body):
    """The markers on ``body``, by MarkerId."""
    found = [o for o in body.InList if type_of(o) == MARKER_TYPE and o.Body == body]
    return sorted(found, key=lambda m: m.MarkerId)


def make_marker(doc, body, pick=None, offset=None, name=None, label="", marker_id=None):
    """A Marker on ``body``.

    Parameters
    ----------
    pick : (solid, subelement) or None
        A solid of the body and the name of a face, edge or vertex of it (``"Face3"``); the
        attachment mode follows from its geometry (see :mod:`MultibodyWB.objects.marker`). None,
        or an empty subelement, attaches to the solid itself (the first one of the body for
        None): the marker is then the body's base frame moved by ``offset``.
    offset : FreeCAD.Placement or FreeCAD.Vector, optional
        Placement in the attached frame (mm): the ``AttachmentOffset``, after the centring the
        attachment rule may add.
    marker_id : int, optional
        Number on the body (default: one more than the highest).
    name : str, optional
        Name and label; default: labelled from the body and the pick ("Crank bore A").
    """
    if isinstance(offset, FreeCAD.Vector):
        offset = FreeCAD.Placement(offset, FreeCAD.Rotation())
    obj = _new(doc, "Part::FeaturePython", MarkerProxy, name, label, "Marker")
    obj.Body = body
    if marker_id is None:
        marker_id = max((m.MarkerId for m in markers_of(body) if m != obj), default=0) + 1
    obj.MarkerId = int(marker_id)
    _mechanism(body).addObject(obj)
    if pick is None:
        solid, sub = (body.Solids[0], None) if body.Solids else (None, None)
    else:
        solid, sub = pick
    if solid is not None:
        attach(obj, solid, sub or None, offset)
    else:
        obj.MapMode = "Deactivated"
        obj.AttachmentOffset = offset or FreeCAD.Placement()
        obj.PickedGeometry = "object"
        obj.Placement = body.BasePlacement.multiply(obj.AttachmentOffset)
    if not name:
        element = get_element(solid, sub) if solid is not None and sub else None
        others = [m.Label for m in markers_of(body) if m != obj]
        obj.Label = labels.marker_label(
            body, labels.picked_word(obj.PickedGeometry or "object", element), others)
    return obj


def orient_marker(marker, z=None, x=None):
    """Turn a marker, through its ``AttachmentOffset``, so that its axes point along ``z``, ``x``.

    ``z`` (default: as attached) becomes the marker's z axis; ``x`` is projected on the plane
    normal to it (default: the current x, projected; its y if x is along ``z``). The origin stays
    where it is. This is the designer's "point the marker's axes" step: the frame still follows
    the solid.
    """
    marker.positionBySupport()
    current = marker.Placement
    axes = [current.Rotation.multVec(FreeCAD.Vector(*e))
            for e in ((1, 0, 0), (0, 1, 0), (0, 0, 1))]
    zd = FreeCAD.Vector(*z) if z is not None else axes[2]
    zd.normalize()
    for xd in ([FreeCAD.Vector(*x)] if x is not None else axes):
        xd = xd - zd * xd.dot(zd)
        if xd.Length > 1e-9:
            break
    else:
        raise ValueError("the x direction is parallel to the z axis")
    xd.normalize()
    wanted = FreeCAD.Placement(current.Base, FreeCAD.Rotation(xd, zd.cross(xd), zd, "ZXY"))
    if marker.MapMode == "Translate":
        # this mode takes the orientation from the marker's own placement
        marker.Placement = wanted
        marker.positionBySupport()
        return marker
    attached = current.multiply(marker.AttachmentOffset.inverse())
    marker.AttachmentOffset = attached.inverse().multiply(wanted)
    marker.positionBySupport()
    return marker


def _per_coordinate(hinge_type, values):
    """``{coordinate: value}`` from a dict or a sequence in the type's coordinate order."""
    if isinstance(values, dict):
        return dict(values)
    coordinates = HINGE_TYPES[hinge_type].coordinates
    values = list(values)
    if len(values) != len(coordinates):
        raise ValueError(f"a {hinge_type} hinge has {len(coordinates)} coordinate(s) "
                         f"({', '.join(coordinates)}), got {len(values)} value(s)")
    return dict(zip(coordinates, values))


def make_hinge(doc, mechanism, hinge_type, marker_input, marker_output, name=None, label="",
               **options):
    """A Hinge of ``mechanism`` from ``marker_input`` (tip side) to ``marker_output``.

    ``options`` (each a dict ``{coordinate: value}`` or a sequence in the type's coordinate
    order): ``initial`` (also sets InitialAsDrawn False), ``rates``, ``stiffness``,
    ``spring_reference`` (also sets SpringReferenceAsDrawn False), ``damping``,
    ``lower_limits``/``upper_limits`` (also set UseLimits), ``stop_stiffness`` (N/m or
    N m/rad; a limited coordinate without one gets the 50 Hz default of
    :func:`~MultibodyWB.objects.hinge.default_stop_stiffness`), ``stop_restitution``,
    ``stop_impact_speed`` (mm/s or deg/s), ``drivers`` (expressions in t, SI;
    measured from the drawing unless ``driver_from_drawing=False``), ``motor_speed`` (mm/s or
    deg/s) and ``motor_ramp_time`` (s). Switches: ``driver_from_drawing``,
    ``spring_reference_as_drawn`` (True or False). ``name``: name and label; default: labelled
    from what it joins ("Crank – Ground revolute").
    """
    if hinge_type not in HINGE_TYPES:
        raise ValueError(f"'{hinge_type}' is not a hinge type; use one of {', '.join(HINGE_TYPES)}")
    obj = _new(doc, "App::FeaturePython", HingeProxy, name, label, hinge_type.capitalize())
    obj.HingeType = hinge_type
    obj.InputMarker = marker_input
    obj.OutputMarker = marker_output
    if not name:
        obj.Label = labels.hinge_label(hinge_type, marker_input, marker_output)
    for key, values in options.items():
        if key in HINGE_SWITCHES:
            if values is not None:
                setattr(obj, HINGE_SWITCHES[key], bool(values))
            continue
        if key not in HINGE_OPTIONS:
            raise TypeError(f"make_hinge() got an unknown option '{key}'; use one of "
                            f"{', '.join(sorted(set(HINGE_OPTIONS) | set(HINGE_SWITCHES)))}")
        if values is None:
            continue
        prefix = HINGE_OPTIONS[key]
        for c, value in _per_coordinate(hinge_type, values).items():
            name_c = property_name(prefix, c)
            set_value(obj, obj.Proxy.prop(name_c), value)
        if prefix == "Initial":
            obj.InitialAsDrawn = False
        if prefix == "SpringReference" and "spring_reference_as_drawn" not in options:
            obj.SpringReferenceAsDrawn = False
        if prefix in ("LowerLimit", "UpperLimit"):
            obj.UseLimits = True
    mechanism.addObject(obj)
    if obj.UseLimits:
        fill_stop_stiffness(obj)          # now that the ground is known
    return obj


def make_force(doc, mechanism, force_type, marker_input, marker_output=None, name=None,
               label="", magnitude=None, direction=None, frame=None, stiffness=None,
               damping=None, free_length=None, params=None):
    """A Force of ``mechanism`` (see ``FORCE_TYPES`` for what each type uses).

    ``magnitude`` is an expression in t (N or N m); ``direction`` 3 numbers; ``frame`` "global" or
    "marker"; ``stiffness``/``damping`` go to the translational or rotational property the type
    uses; ``free_length`` (mm) also sets FreeLengthAsDrawn False. ``params``: the law's own
    parameters (``ForceType.params``), attr -> a number, or 3 numbers for one given per axis (a
    single number: the same on every axis), each a number in the row's unit (SI) or a text with
    its unit (``"2 N*mm/deg"``); the others keep their rows' defaults. ``name``: name and label;
    default: labelled from what it joins ("Crank – Rocker spring-damper", "Piston force").
    """
    default_name = "".join(part.capitalize() for part in str(force_type).split("_"))
    obj = _new(doc, "App::FeaturePython", ForceProxy, name, label, default_name)
    obj.ForceType = force_type
    obj.InputMarker = marker_input
    obj.OutputMarker = marker_output
    if not name:
        obj.Label = labels.force_label(force_type, marker_input, marker_output)
    if magnitude is not None:
        obj.Magnitude = str(magnitude)
    if direction is not None:
        set_value(obj, obj.Proxy.prop("Direction"), direction)
    if frame is not None:
        obj.DirectionFrame = frame
    for field, value in (("stiffness", stiffness), ("damping", damping),
                         ("free_length", free_length)):
        if value is None:
            continue
        names = field_properties(force_type, field)
        if not names:
            raise ValueError(f"a {force_type} takes no {field}")
        set_value(obj, obj.Proxy.prop(names[0]), value)
        if field == "free_length":
            obj.FreeLengthAsDrawn = False
    own = {param.attr: names for param, names in type_params(force_type)}
    for attr, value in (params or {}).items():
        if attr not in own:
            raise ValueError(f"a {force_type} takes no parameter {attr!r}; its parameters: "
                             f"{', '.join(own) or 'none'}")
        names = own[attr]
        values = list(value) if hasattr(value, "__len__") and not isinstance(value, str) \
            else [value] * len(names)
        if len(values) != len(names):
            raise ValueError(f"{force_type} parameter {attr!r}: {len(names)} values (one per "
                             f"axis), not {len(values)}")
        for name, v in zip(names, values):
            prop = obj.Proxy.prop(name)
            if not isinstance(v, str) and prop.unit is not None:
                # a number in the unit, with every digit (set_value would keep six)
                number = repr(float(v))
                v = f"{number[:-2] if number.endswith('.0') else number} {prop.unit}"
            set_value(obj, prop, v)
    mechanism.addObject(obj)
    return obj


#: Keyword of :func:`make_contact` -> property of the contact's law.
CONTACT_LAW = {"exponent": "Exponent", "restitution": "Restitution",
               "impact_speed": "ImpactSpeed", "static_friction": "StaticFriction",
               "dynamic_friction": "DynamicFriction", "stiction_velocity": "StictionVelocity",
               "stiffness_rule": "StiffnessRule"}


def make_contact(doc, mechanism, marker_input, marker_output, input_shape, output_shape,
                 stiffness, name=None, label="", **law):
    """A Contact of ``mechanism`` between a shape on ``marker_input`` and one on
    ``marker_output``.

    Parameters
    ----------
    input_shape, output_shape : (str, dict)
        A shape type of the solver's ``CONTACT_SHAPES`` and its dimensions in mm
        (``("sphere", {"radius": 10})``, ``("cylinder", {"radius": 5, "length": 20})``,
        ``("box", {"size": (10, 20, 5)})``, ``("plane", {})``; a convex shape its tessellation
        tolerance, ``("convex", {"tolerance": 0.5})``, the hull of its marker's solid, or for a
        marker on no solid its ``points`` (n, 3), ``("convex", {"points": [...]})``).
    stiffness : float
        N/m^exponent (SI, as the property keeps it).
    law : keywords
        ``exponent``, ``restitution``, ``static_friction``, ``dynamic_friction`` (numbers),
        ``impact_speed``, ``stiction_velocity`` (mm/s, or a text with its unit: ``"1 m/s"``),
        ``stiffness_rule`` (how the stiffness was chosen, in words).
    name : str, optional
        Name and label; default: labelled from what it joins ("Ball – Plate contact").
    """
    obj = _new(doc, "App::FeaturePython", ContactProxy, name, label, "Contact")
    obj.InputMarker = marker_input
    obj.OutputMarker = marker_output
    for side, (kind, dimensions) in (("Input", input_shape), ("Output", output_shape)):
        setattr(obj, f"{side}Shape", kind)
        for key, value in (dimensions or {}).items():
            if key not in DIMENSION_PROPERTIES:
                raise TypeError(f"a contact shape has no dimension '{key}'; use one of "
                                f"{', '.join(DIMENSION_PROPERTIES)}")
            if key == "points":
                setattr(obj, f"{side}Points", [FreeCAD.Vector(*(float(x) for x in p))
                                               for p in value])
                continue
            set_value(obj, obj.Proxy.prop(side + DIMENSION_PROPERTIES[key]), value)
    obj.Stiffness = float(stiffness)
    for key, value in law.items():
        if key not in CONTACT_LAW:
            raise TypeError(f"make_contact() got an unknown option '{key}'; use one of "
                            f"{', '.join(CONTACT_LAW)}")
        if value is not None:
            set_value(obj, obj.Proxy.prop(CONTACT_LAW[key]), value)
    if not name:
        obj.Label = f"{labels.ends_label(marker_input, marker_output)} contact"
    mechanism.addObject(obj)
    return obj


def make_coupler(doc, mechanism, coupler_type, first_hinge, first_coordinate, second_hinge,
                 second_coordinate, ratio=None, pitch_radius=None, coefficients=None, name=None,
                 label=""):
    """A Coupler of ``mechanism``: coordinate ``first_coordinate`` (``"rz"``, ``"z"``...) of
    ``first_hinge`` coupled to ``second_coordinate`` of ``second_hinge``.

    Parameters
    ----------
    coupler_type : str
        One of the solver's ``COUPLER_TYPES``: ``gear``, ``belt``, ``rack_pinion``, ``linear``.
    ratio : float, optional
        Gear or belt: rate of the second = ratio x rate of the first.
    pitch_radius : number, str or Quantity, optional
        Rack and pinion: the pinion's pitch radius, mm (or a text with its unit).
    coefficients : (float, float), optional
        Linear: a, b of ``a u1 + b u2 = 0`` (SI).
    name : str, optional
        Name and label; default: labelled from the hinges' moving bodies ("Pinion – Wheel
        gear").
    """
    obj = _new(doc, "App::FeaturePython", CouplerProxy, name, label, "Coupler")
    obj.CouplerType = coupler_type
    obj.FirstHinge = first_hinge
    obj.SecondHinge = second_hinge
    update_coordinates(obj)
    obj.FirstCoordinate = first_coordinate
    obj.SecondCoordinate = second_coordinate
    if ratio is not None:
        obj.Ratio = float(ratio)
    if pitch_radius is not None:
        set_value(obj, obj.Proxy.prop("PitchRadius"), pitch_radius)
    if coefficients is not None:
        obj.Coefficients = [float(x) for x in coefficients]
    if not name:
        obj.Label = coupler_label(coupler_type, first_hinge, second_hinge)
    mechanism.addObject(obj)
    return obj


def make_simulation(doc, mechanism, name="Simulation", **settings):
    """The Simulation settings of ``mechanism``; ``settings`` by model attribute (``end_time``,
    ``step``, ``output_step`` in s; ``method``, ``integrator``; ``relative_tolerance``...)."""
    by_attribute = {attribute: prop for prop, (attribute, _) in MODEL_ATTRIBUTES.items()}
    obj = _new(doc, "App::FeaturePython", SimulationProxy, name)
    for key, value in settings.items():
        if key not in by_attribute:
            raise TypeError(f"make_simulation() got an unknown setting '{key}'; use one of "
                            f"{', '.join(by_attribute)}")
        set_value(obj, obj.Proxy.prop(by_attribute[key]), value)
    mechanism.addObject(obj)
    return obj


def make_result(doc, mechanism, name="Result", label=""):
    """An empty Result (one stored run) in ``mechanism``'s group; :func:`MultibodyWB.document.runs.
    store_results` makes one this way and fills it from a run."""
    obj = _new(doc, "App::FeaturePython", ResultProxy, name, label)
    mechanism.addObject(obj)
    return obj


def make_study(doc, mechanism, name="Study", parameters=(), objectives=(), constraints=(),
               **options):
    """A Study (a design study, :mod:`MultibodyWB.objects.study`) in ``mechanism``'s group.

    ``parameters``, ``objectives``, ``constraints``: lists of rows (texts, see the module);
    ``options`` by property name (``Method="grid"``, ``Samples=20``, ``Scheduler="tcp://..."``).
    """
    obj = _new(doc, "App::FeaturePython", StudyProxy, name)
    obj.Parameters = [str(p) for p in parameters]
    obj.Objectives = [str(o) for o in objectives]
    obj.Constraints = [str(c) for c in constraints]
    allowed = [p.name for p in StudyProxy.PROPERTIES if p.mode != READ_ONLY
               and p.name not in ("Parameters", "Objectives", "Constraints")]
    for key, value in options.items():
        if key not in allowed:
            raise TypeError(f"make_study() got an unknown option '{key}'; use one of "
                            f"{', '.join(allowed)}")
        set_value(obj, obj.Proxy.prop(key), value)
    mechanism.addObject(obj)
    return obj
