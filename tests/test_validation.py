"""Semantic validation: every problem at once, each naming the element and the field."""

import numpy as np
import pytest

from MultibodyWB.examples import EXAMPLES, build
from MultibodyWB.solver.model import Driver, MarkerRef, ModelError, MultibodySystem
from MultibodyWB.solver.model.validation import check_inertia, validate


def pendulum():
    m = MultibodySystem("P", gravity=(0, 0, -9.81))
    g = m.set_ground()
    pivot = g.add_marker()
    b = m.add_body("Link", 2.0, [0.1, 0.1, 0.02, 0, 0, 0], mass_center=(0, 0, -0.2))
    top = b.add_marker()
    m.add_hinge("J1", "revolute", top, pivot)
    return m


def where(problems):
    return {(p.element, p.field) for p in problems}


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_examples_are_valid(name):
    assert validate(build(name)) == []


def test_mass_not_positive():
    m = pendulum()
    m.bodies[0].mass = 0.0
    assert ("RigidBody 'Link'", "Mass") in where(validate(m))
    m.bodies[0].mass = -1.0
    (p,) = [p for p in validate(m) if p.field == "Mass"]
    assert "positive" in p.message and "-1.0" in p.message


def test_inertia_not_positive_definite():
    m = pendulum()
    m.bodies[0].mass_center.position[:] = 0
    m.bodies[0].inertia = np.array([1.0, 1.0, -0.5, 0, 0, 0])
    (p,) = validate(m)
    assert (p.element, p.field) == ("RigidBody 'Link'", "JI")
    assert "positive definite" in p.message


def test_inertia_triangle_inequality():
    m = pendulum()
    m.bodies[0].mass_center.position[:] = 0
    m.bodies[0].inertia = np.array([1.0, 1.0, 2.5, 0, 0, 0])
    (p,) = validate(m)
    assert (p.element, p.field) == ("RigidBody 'Link'", "JI")
    assert "triangle inequality" in p.message


def test_inertia_checked_about_the_mass_centre():
    # a point-like mass 1 m from the base origin: JI about the origin is m*diag(1, 1, 0) plus a
    # small own inertia, a valid tensor about the mass centre
    own = 1e-4 * np.array([1.0, 1.0, 1.0])
    ji = np.concatenate([own + [1.0, 1.0, 0.0], np.zeros(3)])
    assert check_inertia(1.0, ji, [0, 0, 1.0]) == []
    # a unit sphere-like tensor is fine about its mass centre, but if the mass centre sits 1 m
    # away, the tensor about the centre would be diag(0, 0, 1): not positive definite
    assert check_inertia(1.0, [1, 1, 1, 0, 0, 0], [0, 0, 0]) == []
    assert "positive definite" in check_inertia(1.0, [1, 1, 1, 0, 0, 0], [0, 0, 1.0])[0]
    # a slender rod (one zero principal moment) is not positive definite
    assert "positive definite" in check_inertia(1.0, [1.0, 1.0, 0, 0, 0, 0], [0, 0, 0])[0]


def test_unknown_hinge_and_force_types():
    m = pendulum()
    m.hinges[0].type = "revolut"
    m.add_force("F", "pointforce", MarkerRef("Link", 1), direction=(0, 0, 1))
    problems = validate(m)
    msgs = {(p.element, p.field): p.message for p in problems}
    assert "revolute" in msgs[("Hinge 'J1'", "Type")] and "'revolut'" in msgs[("Hinge 'J1'", "Type")]
    assert "point_force" in msgs[("Force 'F'", "Type")]


def test_missing_body_and_marker_references():
    m = pendulum()
    m.hinges[0].output = MarkerRef("Gorund", 1)
    m.hinges[0].input = MarkerRef("Link", 7)
    m.add_force("F", "point_force", MarkerRef("Nobody", 1), direction=(0, 0, 1))
    msgs = {(p.element, p.field): p.message for p in validate(m)}
    assert "'Gorund'" in msgs[("Hinge 'J1'", "Output")]
    assert "marker 7" in msgs[("Hinge 'J1'", "Input")]
    assert "'Nobody'" in msgs[("Force 'F'", "Input")]


def test_body_connected_to_nothing_and_islands():
    m = pendulum()
    loose = m.add_body("Loose", 1.0, [1, 1, 1, 0, 0, 0])
    loose.add_marker()
    a = m.add_body("A", 1.0, [1, 1, 1, 0, 0, 0])
    b = m.add_body("B", 1.0, [1, 1, 1, 0, 0, 0])
    m.add_hinge("AB", "spherical", a.add_marker(), b.add_marker())
    msgs = {(p.element, p.field): p.message for p in validate(m)}
    assert "connected to nothing" in msgs[("RigidBody 'Loose'", "Hinge")]
    assert "B" in msgs[("RigidBody 'A'", "Hinge")] and "ground" in msgs[("RigidBody 'A'", "Hinge")]
    assert ("RigidBody 'Link'", "Hinge") not in msgs


def test_ground_count():
    m = pendulum()
    m.grounds.append(type(m.grounds[0])("Floor"))
    assert ("Ground 'Floor'", "Ground") in where(validate(m))
    m.grounds = []
    assert ("MultibodySystem", "Ground") in where(validate(m))


def test_hinge_fields():
    m = pendulum()
    h = m.hinges[0]
    h.stiffness = np.array([1.0, 2.0])                  # revolute has one coordinate
    h.damping = np.array([-1.0])
    h.lower_limits, h.upper_limits = np.array([1.0]), np.array([0.0])
    h.drivers = [Driver("z", "t"), Driver("rz", "sin(")]
    msgs = {(p.element, p.field): p.message for p in validate(m)}
    assert "1 coordinate" in msgs[("Hinge 'J1'", "Stiffness")]
    assert "negative" in msgs[("Hinge 'J1'", "Damping")]
    assert "LowerLimits" in msgs[("Hinge 'J1'", "UpperLimits")]
    drivers = [p.message for p in validate(m) if p.field == "Driver"]
    assert any("'z'" in d for d in drivers) and any("syntax" in d for d in drivers)


def test_same_body_on_both_sides_of_a_hinge():
    m = pendulum()
    link = m.bodies[0]
    m.add_hinge("Self", "fixed", MarkerRef("Link", 1), link.add_marker((0, 0, -0.1)))
    assert ("Hinge 'Self'", "Output") in where(validate(m))


def test_every_problem_reported_at_once():
    m = pendulum()
    m.bodies[0].mass = 0
    m.hinges[0].type = "hinge"
    m.simulation.method = "magic"
    m.simulation.end_time = -1
    m.add_force("G", "point_force", MarkerRef("Link", 1))     # no direction
    with pytest.raises(ModelError) as exc:
        m.check()
    got = where(exc.value.problems)
    assert {("RigidBody 'Link'", "Mass"), ("Hinge 'J1'", "Type"), ("Simulation", "Method"),
            ("Simulation", "EndTime"), ("Force 'G'", "Direction")} <= got
    text = str(exc.value)
    assert text.startswith("5 problems") and "Hinge 'J1', field Type" in text


def test_duplicate_names_and_ids():
    m = pendulum()
    b = m.add_body("Link", 1.0, [1, 1, 1, 0, 0, 0], id=1)
    m.add_hinge("J2", "spherical", b.add_marker(), MarkerRef("Ground", 1))
    msgs = {(p.element, p.field): p.message for p in validate(m)}
    assert "unique" in msgs[("RigidBody 'Link'", "Name")]
    assert "already used" in msgs[("RigidBody 'Link'", "ID")]


def test_a_contact_between_hinged_bodies_is_a_warning_naming_the_contact_and_the_hinge():
    """A ball on a spherical hinge to the ground with a sphere-plane contact between the same
    two bodies: valid (the run is not refused), but ``hinged_contacts`` names the contact, the
    bodies and the hinge; a contact between bodies no hinge joins directly, one whose bodies
    are welded (a fixed hinge: refused by ``validate`` instead) and one whose hinge leaves all
    six coordinates free (a floating body: its contacts are what stops it) give no warning."""
    from MultibodyWB.examples import build as build_example
    from MultibodyWB.solver.model.validation import hinged_contacts
    m = pendulum()
    m.hinges[0].type = "spherical"
    link = m.bodies[0]
    m.add_contact("Rub", link.add_marker((0, 0, -0.4)), m.ground.add_marker((0, 0, -0.5)),
                  ("sphere", {"radius": 0.05}), ("plane",), stiffness=1e7)
    assert validate(m) == []
    (w,) = hinged_contacts(m)
    assert (w.element, w.field) == ("Contact 'Rub'", "Output")
    assert "'Link' and 'Ground' are also joined by the spherical hinge 'J1'" in w.message
    assert str(w).startswith("Contact 'Rub', field Output: ")
    # a second link hanging from the first: a contact between it and the ground is no warning
    b2 = m.add_body("Link2", 2.0, [0.1, 0.1, 0.02, 0, 0, 0], mass_center=(0, 0, -0.2),
                    position=(0, 0, -0.4))
    m.add_hinge("J2", "revolute", b2.add_marker(), link.add_marker((0, 0, -0.4)))
    m.add_contact("Tip", b2.add_marker((0, 0, -0.4)), m.ground.add_marker((0, 0, -0.9)),
                  ("sphere", {"radius": 0.05}), ("plane",), stiffness=1e7)
    assert [p.element for p in hinged_contacts(m)] == ["Contact 'Rub'"]
    # welded: refused by validate, not repeated as a warning
    m.hinges[0].type = "fixed"
    assert any("welded by the fixed hinge 'J1'" in p.message for p in validate(m))
    assert hinged_contacts(m) == []
    for free in ("free", "bushing"):
        m.hinges[0].type = free
        assert hinged_contacts(m) == [], free
    # the examples with contacts (balls in a box, the cam) have none between hinged bodies
    for name in ("bouncing_balls", "cam_valve"):
        assert hinged_contacts(build_example(name)) == [], name
