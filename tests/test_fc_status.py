"""The mechanism's status (headless): the headline and details while a model is built and when
it is complete, driven coordinates, nothing printed while building; and why a command is not
active, for each rule (the reasons the GUI shows in tool tips).
"""

import pytest

pytestmark = pytest.mark.freecad


@pytest.fixture
def doc(freecad):
    d = freecad.newDocument("Status")
    yield d
    freecad.closeDocument(d.Name)


@pytest.fixture
def errors(freecad, monkeypatch):
    printed = []
    monkeypatch.setattr(freecad.Console, "PrintError", printed.append)
    return printed


def test_status_while_building_a_pendulum(freecad, doc, errors):
    from MultibodyWB.document import factory
    link = doc.addObject("Part::Box", "LinkSolid")
    link.Length, link.Width, link.Height = 100, 10, 10
    frame = doc.addObject("Part::Box", "FrameSolid")
    frame.Placement.Base = freecad.Vector(0, 0, -30)
    doc.recompute()
    mech = factory.make_mechanism(doc, "Pendulum")
    doc.recompute()
    assert mech.Status.split("\n")[0] == "Empty: select solids and press Body"
    body = factory.make_body(doc, mech, link, name="Link")
    doc.recompute()
    assert mech.Status.split("\n")[0] == "No ground yet: make one body the ground"
    ground = factory.make_body(doc, mech, frame, ground=True, name="Frame")
    doc.recompute()
    lines = mech.Status.split("\n")
    assert lines[0] == "No hinge yet: 1 body to connect"
    assert lines[1].startswith("To fix before a run: Body 'Link': Hinge: the body is connected "
                               "to nothing")
    m1 = factory.make_marker(doc, body, (link, "Face1"))
    m2 = factory.make_marker(doc, ground, None, offset=freecad.Vector(0, 5, 35))
    factory.orient_marker(m2, z=(1, 0, 0))
    factory.make_hinge(doc, mech, "revolute", m1, m2, name="Pivot")
    doc.recompute()
    assert mech.Status == "1 degree of freedom\nDegrees of freedom: 1 (Grübler–Kutzbach count 1)"
    assert errors == []                                 # building printed no error
    from MultibodyWB.objects.mechanism import mechanism_status
    status = mechanism_status(mech)
    assert status.ready and status.dof == 1 and status.dof_gruebler == 1
    assert status.bodies == 1 and status.hinges == 1


def test_status_of_the_driven_crank_slider(freecad, doc):
    from MultibodyWB.examples_fc import crank_slider
    mech = crank_slider.setup(doc)
    lines = mech.Status.split("\n")
    assert lines[0] == "1 degree of freedom, 1 driven"
    assert lines[2].startswith("Driven: 'MainBearing' rz = 314.159")


class _Command:
    ENDS = 2


def _selection_module(monkeypatch):
    """``MultibodyWB.commands.selection`` without the package's ``__init__`` (which registers
    the commands and needs the GUI)."""
    import importlib
    import sys
    import types
    from pathlib import Path

    import MultibodyWB
    if "MultibodyWB.commands" not in sys.modules:
        stub = types.ModuleType("MultibodyWB.commands")
        stub.__path__ = [str(Path(MultibodyWB.__file__).parent / "commands")]
        monkeypatch.setitem(sys.modules, "MultibodyWB.commands", stub)
        monkeypatch.delitem(sys.modules, "MultibodyWB.commands.selection", raising=False)
    return importlib.import_module("MultibodyWB.commands.selection")


def test_why_a_command_is_not_active(freecad, doc, monkeypatch):
    from MultibodyWB.document import factory
    selection = _selection_module(monkeypatch)
    Pick, RULES, Selection, why = (selection.Pick, selection.RULES, selection.Selection,
                                   selection.why)
    a = doc.addObject("Part::Box", "A")
    b = doc.addObject("Part::Box", "B")
    free = doc.addObject("Part::Box", "Loose")
    sketch = doc.addObject("Sketcher::SketchObject", "Sketch")
    doc.recompute()
    mech = factory.make_mechanism(doc, "M")
    body_a = factory.make_body(doc, mech, a, name="BodyA")
    body_b = factory.make_body(doc, mech, b, name="BodyB")
    cmd = _Command()

    def reason(rule, **selection):
        sel = Selection(doc, **selection)
        assert not RULES[rule](sel, cmd)
        return why(rule, sel, cmd)

    assert reason("free_solids", others=[sketch]) == \
        "'Sketch' is a sketch, not a solid: pad or extrude it first"
    assert reason("free_solids") == "select one or more solids (in the 3D view or the tree)"
    assert reason("free_solids", picks=[Pick(a, "", body_a)]) == \
        "'A' is already a solid of body 'BodyA'"
    assert reason("ends", picks=[Pick(a, "Face1", body_a), Pick(a, "Face2", body_a)]).startswith(
        "two ends are on the same body 'BodyA'")
    assert reason("ends", picks=[Pick(a, "Face1", body_a)]) == \
        ("1 selected; select 2 ends: markers, or a face, edge or vertex on each of 2 different "
         "bodies")
    assert reason("ends", picks=[Pick(free, "Face1", None), Pick(b, "Face1", body_b)]) == \
        "'Loose' belongs to no body: make it a body first (Body from solids)"
    assert reason("marker_targets", picks=[Pick(free, "Face1", None)]) == \
        "'Loose' belongs to no body: make it a body first (Body from solids)"
    assert reason("marker_targets") == \
        "select a face, edge or vertex of a body's solid (or a body)"
    empty = Selection(None)
    assert why("mechanism", empty, cmd) == "open or create a document first"
    # an active selection has no reason
    sel = Selection(doc, picks=[Pick(a, "Face1", body_a), Pick(b, "Face2", body_b)])
    assert RULES["ends"](sel, cmd) and why("ends", sel, cmd) == \
        "this command needs another selection"    # (asked anyway: the generic sentence)
