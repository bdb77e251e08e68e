"""Topology: spanning tree, cut hinges, MSTMM numbering, loops, DOF counts, the figure.

The mechanisms are built here in code; ``test_kinematics`` reuses the builders.
"""

import numpy as np
import pytest

from MultibodyWB.solver.analysis.figure import topology_graph, write_figure
from MultibodyWB.solver.model import MultibodySystem
from MultibodyWB.solver.maths.rotations import (bryant_to_matrix, matrix_to_bryant, rot_x, rot_y,
                                                rot_z)
from MultibodyWB.solver.analysis.topology import analyse

I3 = np.eye(3)


# --------------------------------------------------------------------------------------------------
# Builders
# --------------------------------------------------------------------------------------------------

def add_body(m, name, position=(0, 0, 0), orientation=(0, 0, 0)):
    return m.add_body(name, 1.0, [0.1, 0.1, 0.1, 0, 0, 0], position=position,
                      orientation=orientation)


def marker_at(part, point, R=I3):
    """A marker on ``part`` at a global point with global orientation R (drawn configuration)."""
    R0 = bryant_to_matrix(part.orientation)
    local = R0.T @ (np.asarray(point, dtype=float) - part.position)
    return part.add_marker(local, matrix_to_bryant(R0.T @ np.asarray(R)))


def connect(m, name, type, inp, out, p_in, p_out=None, R_in=I3, R_out=None):
    """A hinge from a marker on ``inp`` to one on ``out``, both placed in global terms."""
    p_out = p_in if p_out is None else p_out
    R_out = R_in if R_out is None else R_out
    return m.add_hinge(name, type, marker_at(inp, p_in, R_in), marker_at(out, p_out, R_out))


def frame_with_z(u):
    """A rotation matrix whose z axis is the unit vector along u."""
    z = np.asarray(u, dtype=float) / np.linalg.norm(u)
    x = np.cross([0.0, 0.0, 1.0] if abs(z[2]) < 0.9 else [1.0, 0.0, 0.0], z)
    x /= np.linalg.norm(x)
    return np.column_stack([x, np.cross(z, x), z])


def pendulum():
    m = MultibodySystem("Pendulum")
    g = m.set_ground("Ground")
    link = add_body(m, "Link", position=(0.5, 0, 0))
    connect(m, "J1", "revolute", link, g, (0, 0, 0), R_in=rot_x(-np.pi / 2) @ rot_z(0.3),
            R_out=rot_x(-np.pi / 2))
    return m


def double_pendulum():
    m = MultibodySystem("Double pendulum")
    g = m.set_ground("Ground")
    l1 = add_body(m, "Link1", position=(0, 0, -0.5))
    l2 = add_body(m, "Link2", position=(0, 0, -1.5))
    connect(m, "J1", "revolute", l1, g, (0, 0, 0))
    connect(m, "J2", "revolute", l2, l1, (0, 0, -1.0))
    return m


def branched_tree():
    """Base on the ground carrying two chains A1-A2 and B1-B2; J5 is defined the other way."""
    m = MultibodySystem("Branched tree")
    g = m.set_ground("Ground")
    base = add_body(m, "Base", position=(0, 0, 0.1))
    a1 = add_body(m, "A1", position=(0.5, 0, 0.2))
    a2 = add_body(m, "A2", position=(1.0, 0, 0.2))
    b1 = add_body(m, "B1", position=(-0.5, 0, 0.2))
    b2 = add_body(m, "B2", position=(-1.0, 0, 0.2))
    connect(m, "J1", "revolute", base, g, (0, 0, 0))
    connect(m, "J2", "revolute", a1, base, (0.3, 0, 0.2), R_in=rot_x(np.pi / 2))
    connect(m, "J3", "spherical", a2, a1, (0.8, 0, 0.2))
    connect(m, "J4", "universal", b1, base, (-0.3, 0, 0.2))
    connect(m, "J5", "prismatic", b1, b2, (-0.8, 0, 0.2), R_in=rot_y(np.pi / 2))
    return m


def four_bar():
    """Planar four-bar, 4 revolute hinges with parallel z axes: GK -2, mobility 1."""
    m = MultibodySystem("Four-bar")
    g = m.set_ground("Ground")
    A, B, C, D = (np.array(p, dtype=float) for p in ((0, 0, 0), (1, 2, 0), (4, 3, 0), (4, 0, 0)))
    crank = add_body(m, "Crank", position=A, orientation=(0, 0, 0.3))
    coupler = add_body(m, "Coupler", position=B)
    rocker = add_body(m, "Rocker", position=D, orientation=(0, 0, 1.2))
    connect(m, "J1", "revolute", crank, g, A, R_in=rot_z(0.3), R_out=I3)
    connect(m, "J2", "revolute", coupler, crank, B, R_in=rot_z(0.4), R_out=I3)
    connect(m, "J3", "revolute", coupler, rocker, C)
    connect(m, "J4", "revolute", rocker, g, D)
    return m


CRANK = dict(r=0.1, L=0.5, e=0.05, h=0.2, th=0.7)


def crank_slider():
    """Spatial crank-slider: frame = ground; revolute, spherical, universal, prismatic."""
    r, L, e, h, th = (CRANK[k] for k in ("r", "L", "e", "h", "th"))
    m = MultibodySystem("Crank-slider")
    g = m.set_ground("Frame")
    B = np.array([r * np.cos(th), r * np.sin(th), 0.0])
    C = np.array([B[0] + np.sqrt(L ** 2 - (e - B[1]) ** 2 - h ** 2), e, h])
    crank = add_body(m, "Crank", orientation=(0, 0, th))
    rod = add_body(m, "Rod", position=B)
    piston = add_body(m, "Piston", position=C, orientation=(0.1, 0.2, 0.3))
    connect(m, "J1", "revolute", crank, g, (0, 0, 0), R_in=rot_z(th), R_out=I3)
    connect(m, "J2", "spherical", rod, crank, B, R_in=bryant_to_matrix((0.1, 0.2, 0.3)), R_out=I3)
    Ru = frame_with_z(C - B)
    connect(m, "J3", "universal", piston, rod, C, R_in=Ru @ rot_x(0.2) @ rot_y(-0.1), R_out=Ru)
    connect(m, "J4", "prismatic", piston, g, C, p_out=(0, e, h), R_in=rot_y(np.pi / 2))
    return m


def free_body():
    m = MultibodySystem("Free body")
    g = m.set_ground("Ground")
    b = add_body(m, "Body", position=(1, 2, 3), orientation=(0.1, 0.2, 0.3))
    m.add_hinge("F", "free", b.add_marker(), g.add_marker())
    return m


def bushing_loop():
    """Two links on the ground, a bushing between them: no cut hinge, one elastic closure."""
    m = MultibodySystem("Bushing loop")
    g = m.set_ground("Ground")
    a = add_body(m, "A", position=(0, 0, -0.5))
    b = add_body(m, "B", position=(1, 0, -0.5))
    connect(m, "J1", "revolute", a, g, (0, 0, 0))
    connect(m, "J2", "revolute", b, g, (1, 0, 0))
    connect(m, "K", "bushing", a, b, (0.5, 0, -1))
    return m


def inner_loop():
    """A loop that does not pass through the ground: Base carries A and B, both joined to C."""
    m = MultibodySystem("Inner loop")
    g = m.set_ground("Ground")
    base = add_body(m, "Base")
    a = add_body(m, "A", position=(1, 1, 0))
    b = add_body(m, "B", position=(1, -1, 0))
    c = add_body(m, "C", position=(2, 0, 0))
    connect(m, "J1", "revolute", base, g, (0, 0, 0))
    connect(m, "J2", "revolute", a, base, (0.5, 1, 0))
    connect(m, "J3", "revolute", b, base, (0.5, -1, 0))
    connect(m, "J4", "revolute", c, a, (2, 1, 0))
    connect(m, "J5", "revolute", c, b, (2, -1, 0))
    return m


ALL = [pendulum, double_pendulum, branched_tree, four_bar, crank_slider, free_body, bushing_loop,
       inner_loop]


# --------------------------------------------------------------------------------------------------
# Invariants on every mechanism
# --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("build", ALL, ids=lambda f: f.__name__)
def test_numbering_invariants(build):
    m = build()
    t = analyse(m)
    n_elements = len(t.bodies) + len(t.tree_hinges) + len(t.cut_hinges)
    assert [e.id for e in t.elements] == list(range(1, n_elements + 1))
    for e in t.elements:
        assert t.number[e.name] == e.id
        assert t.element(e.name) is e and t.element(e.id) is e
        if e.output:                       # tree element with an element at its output
            assert e.id < e.output
            assert e.id in t.element(e.output).inputs
        for i in e.inputs:
            assert t.element(i).output == e.id
        if e.kind == "hinge" and not e.cut:
            assert len(e.inputs) == 1
            assert t.element(e.inputs[0]).kind == "body"
    # roots are exactly the tree hinges attached to the ground
    assert set(t.roots) == {h for h in t.tree_hinges if t.element(h).output_part == t.ground}
    assert all(t.element(r).output == 0 for r in t.roots)
    # counts
    assert t.dof_gruebler == t.tree_coordinates - t.loop_constraints
    assert t.n_loops == len(t.cut_hinges) == len(t.loops)
    # deterministic
    assert analyse(build()) == t


# --------------------------------------------------------------------------------------------------
# Mechanism by mechanism
# --------------------------------------------------------------------------------------------------

def test_pendulum():
    t = analyse(pendulum())
    assert t.table().splitlines()[1:] == ["   1  body   Link                  -               2",
                                          "   2  hinge  J1                    1               0"]
    assert t.roots == ("J1",) and t.tips == ("Link",) and t.branch_bodies == ()
    assert t.cut_hinges == () and t.loops == () and t.islands == ()
    assert (t.dof_gruebler, t.tree_coordinates, t.loop_constraints) == (1, 1, 0)
    assert t.number["Ground"] == 0


def test_double_pendulum_chain():
    t = analyse(double_pendulum())
    assert {k: t.number[k] for k in ("Link2", "J2", "Link1", "J1")} == {
        "Link2": 1, "J2": 2, "Link1": 3, "J1": 4}
    assert t.element("Link1").inputs == (2,) and t.element("Link1").output == 4
    assert t.element("Link2").inputs == () and t.element("J1").output == 0
    assert t.tips == ("Link2",) and t.roots == ("J1",)
    assert t.bodies == ("Link1", "Link2")      # breadth-first from the ground
    assert t.parent_hinge == {"Link1": "J1", "Link2": "J2"}
    assert t.tree_hinges == ("J2", "J1")
    assert t.reversed_hinges == ()
    assert t.dof_gruebler == 2


def test_branched_tree():
    t = analyse(branched_tree())
    assert [(e.id, e.name) for e in t.elements] == [
        (1, "A2"), (2, "J3"), (3, "A1"), (4, "J2"), (5, "B2"), (6, "J5"), (7, "B1"), (8, "J4"),
        (9, "Base"), (10, "J1")]
    assert t.branch_bodies == ("Base",)
    assert t.element("Base").inputs == (4, 8)
    assert t.tips == ("A2", "B2")
    assert t.roots == ("J1",)
    # J5 is defined with B1 as its input, but the tree needs B2 (tip side) as its input
    assert t.reversed_hinges == ("J5",)
    j5 = t.element("J5")
    assert (j5.input_part, j5.output_part, j5.inputs, j5.output) == ("B2", "B1", (5,), 7)
    assert t.dof_gruebler == 6 * 5 - (5 + 5 + 3 + 4 + 5) == t.tree_coordinates == 8


def test_four_bar():
    t = analyse(four_bar())
    assert t.cut_hinges == ("J4",)              # all revolute: the latest in the model is cut
    assert [(e.id, e.name) for e in t.elements] == [
        (1, "J4"), (2, "Rocker"), (3, "J3"), (4, "Coupler"), (5, "J2"), (6, "Crank"), (7, "J1")]
    j4 = t.element("J4")
    assert j4.cut and j4.inputs == () and j4.output is None
    assert (j4.input_part, j4.output_part) == ("Rocker", "Ground")
    assert t.element("Rocker").cut_hinges == (1,)
    assert t.reversed_hinges == ("J3",)
    assert t.roots == ("J1",) and t.tips == ("Rocker",)
    (loop,) = t.loops
    assert loop.cut_hinge == "J4"
    assert loop.path == ("Rocker", "J3", "Coupler", "J2", "Crank", "J1", "Ground")
    assert loop.numbers == (2, 3, 4, 5, 6, 7, 0)
    assert loop.through_ground
    assert loop.bodies == ("Rocker", "Coupler", "Crank", "Ground")
    assert (t.dof_gruebler, t.tree_coordinates, t.loop_constraints) == (-2, 3, 5)


def test_crank_slider_cuts_the_spherical_hinge():
    t = analyse(crank_slider())
    assert t.cut_hinges == ("J2",)              # 3 constraints: fewer than revolute/universal
    assert t.tree_hinges == ("J1", "J3", "J4")
    assert [(e.id, e.name) for e in t.elements] == [
        (1, "J2"), (2, "Crank"), (3, "J1"), (4, "Rod"), (5, "J3"), (6, "Piston"), (7, "J4")]
    assert t.roots == ("J1", "J4")
    assert t.tips == ("Crank", "Rod")
    assert t.reversed_hinges == ("J3",)         # defined piston -> rod, transferred rod -> piston
    (loop,) = t.loops
    assert loop.path == ("Rod", "J3", "Piston", "J4", "Frame", "J1", "Crank")
    assert loop.numbers == (4, 5, 6, 7, 0, 3, 2)
    assert loop.through_ground
    assert (t.dof_gruebler, t.tree_coordinates, t.loop_constraints) == (1, 4, 3)


def test_free_body():
    t = analyse(free_body())
    assert (t.dof_gruebler, t.tree_coordinates, t.loop_constraints) == (6, 6, 0)
    assert t.roots == ("F",) and t.tips == ("Body",)


def test_bushing_closes_no_kinematic_loop():
    t = analyse(bushing_loop())
    assert t.elastic_closures == ("K",)
    assert t.cut_hinges == () and t.loops == ()
    assert "K" not in t.number
    assert t.tree_hinges == ("J1", "J2") and t.roots == ("J1", "J2")
    assert (t.dof_gruebler, t.tree_coordinates, t.loop_constraints) == (2, 2, 0)


def test_bushing_is_a_tree_edge_only_where_needed():
    m = MultibodySystem("Bushings")
    g = m.set_ground("Ground")
    a = add_body(m, "A")
    b = add_body(m, "B", position=(1, 0, 0))
    connect(m, "K1", "bushing", a, g, (0, 0, 0))     # first in the model, but elastic
    connect(m, "J1", "revolute", a, g, (0, 0, 0))
    connect(m, "K2", "bushing", b, a, (1, 0, 0))     # the only way to reach B
    t = analyse(m)
    assert t.tree_hinges == ("K2", "J1")
    assert t.elastic_closures == ("K1",)
    assert t.element("K2").elastic and not t.element("J1").elastic
    assert t.tree_coordinates == 1 + 6
    assert t.dof_gruebler == 12 - 5


def test_cut_prefers_fewest_constraints():
    """A fixed hinge is kept in the tree; the revolute of the same loop is cut."""
    m = MultibodySystem("Welded")
    g = m.set_ground("Ground")
    a = add_body(m, "A")
    connect(m, "R", "revolute", a, g, (0, 0, 0))
    connect(m, "W", "fixed", a, g, (1, 0, 0))
    t = analyse(m)
    assert t.tree_hinges == ("W",) and t.cut_hinges == ("R",)
    assert t.loops[0].path == ("A", "W", "Ground")
    assert t.dof_gruebler == 6 - 11 == t.tree_coordinates - t.loop_constraints


def test_inner_loop_does_not_pass_through_the_ground():
    t = analyse(inner_loop())
    assert t.cut_hinges == ("J5",)
    (loop,) = t.loops
    assert loop.path == ("C", "J4", "A", "J2", "Base", "J3", "B")
    assert not loop.through_ground
    assert t.branch_bodies == ("Base",)
    assert t.element("C").cut_hinges == (t.number["J5"],)
    assert t.number["J5"] < min(t.number["C"], t.number["B"])


def test_islands_and_no_hinges():
    m = MultibodySystem("Loose")
    m.set_ground("Ground")
    add_body(m, "A")
    add_body(m, "B")
    t = analyse(m)
    assert t.islands == ("A", "B")
    assert t.elements == () and t.bodies == () and t.roots == () and t.tips == ()
    assert (t.dof_gruebler, t.tree_coordinates, t.loop_constraints) == (12, 0, 0)

    # an island pair joined by a hinge, beside a pendulum
    m = pendulum()
    c = add_body(m, "C", position=(5, 0, 0))
    d = add_body(m, "D", position=(6, 0, 0))
    connect(m, "JI", "revolute", d, c, (5.5, 0, 0))
    t = analyse(m)
    assert t.islands == ("C", "D") and t.unused_hinges == ("JI",)
    assert t.bodies == ("Link",) and "C" not in t.number
    assert t.dof_gruebler == 6 * 3 - 10

    # no ground at all
    m = MultibodySystem("No ground")
    a = add_body(m, "A")
    b = add_body(m, "B")
    connect(m, "J", "revolute", b, a, (0, 0, 0))
    t = analyse(m)
    assert t.ground is None and t.islands == ("A", "B") and t.elements == ()


def test_long_chain_does_not_recurse():
    m = MultibodySystem("Long chain")
    prev = m.set_ground("Ground")
    for i in range(3000):
        b = add_body(m, f"B{i}", position=(i + 0.5, 0, 0))
        connect(m, f"J{i}", "revolute", b, prev, (i, 0, 0))
        prev = b
    t = analyse(m)
    assert t.number["B2999"] == 1 and t.number["J0"] == 6000
    assert t.tips == ("B2999",)


# --------------------------------------------------------------------------------------------------
# The figure
# --------------------------------------------------------------------------------------------------

def test_figure_dot_text():
    m = crank_slider()
    src = topology_graph(m, analyse(m)).source
    assert src == topology_graph(crank_slider()).source          # deterministic
    assert "Crank-slider" in src and "DOF 1" in src and "1 loop" in src
    for k in range(1, 8):
        assert f"label={k}" in src or f'label="{k}' in src
    assert '"1 (cut)"' in src and "style=dashed" in src and "red3" in src
    # every ground connection has its own boundary node "0", and arrows go tip -> root
    assert src.count("[label=0 ") == 2               # J1 and J4, each to its own "0"
    assert "b2 -> g1" in src and "b6 -> g2" in src and "b4 -> b6" in src


def test_figure_four_bar_and_elastic():
    m = four_bar()
    src = topology_graph(m).source
    assert "3 redundant constraints" in src and "DOF 1" in src
    assert "b2 -> b4" in src and "b4 -> b6" in src and "b6 -> g2" in src
    assert "b2 -> g1" in src          # the cut J4 to its own boundary node
    assert '"1 (cut)"' in src
    src = topology_graph(bushing_loop()).source
    assert "1 elastic closure" in src and "gray55" in src and "K" in src


def test_figure_islands_and_elastic_tree_edges(tmp_path):
    m = pendulum()
    c = add_body(m, "C", position=(5, 0, 0))
    d = add_body(m, "D", position=(6, 0, 0))
    connect(m, "JI", "revolute", d, c, (5.5, 0, 0))
    connect(m, "K", "bushing", add_body(m, "E"), m.body("Link"), (0.5, 0, 0))
    src = topology_graph(m).source
    assert "i_C -> i_D" in src or "i_D -> i_C" in src
    assert "style=dotted" in src and "style=bold" in src
    assert write_figure(m, tmp_path / "islands.svg").stat().st_size > 100
    empty = MultibodySystem("Empty")
    empty.set_ground("Ground")
    assert "DOF 0" in topology_graph(empty).source


@pytest.mark.parametrize("ext", ["dot", "svg", "png", "pdf"])
def test_write_figure(tmp_path, ext):
    path = write_figure(crank_slider(), tmp_path / f"topo.{ext}")
    assert path.exists() and path.stat().st_size > 100
    if ext == "png":
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    if ext == "svg":
        assert "<svg" in path.read_text()


def test_write_figure_rejects_unknown_format(tmp_path):
    with pytest.raises(ValueError, match="format"):
        write_figure(pendulum(), tmp_path / "topo.jpeg")


def test_render_pictures_for_review():
    """The PNGs a person looks at (also kept in /tmp for the lead)."""
    for build, name in ((crank_slider, "crank"), (four_bar, "fourbar"),
                        (branched_tree, "tree"), (bushing_loop, "bushing")):
        path = write_figure(build(), f"/tmp/topo_{name}.png")
        assert path.stat().st_size > 1000
