"""Degenerate contact geometry is refused by ``check`` naming the contact and the field, never an
internal error (issue 33, item 4).

A box 1 m wide and 1e-15 m thick against a box: Qhull cannot make a hull of its corners in double
precision, and ``check`` and ``run`` ended in exit 1 "internal error: ... the points do not span
a volume". Now a shape whose thinnest extent is under
:data:`~MultibodyWB.solver.model.validation.MIN_THICKNESS` of its largest (a box's edges, a
convex hull's width), and points on a plane or a line, are problems of the contact's shape field,
through the command line as a user meets them.
"""

import subprocess

import pytest

from MultibodyWB.solver.model import MultibodySystem, xmlio
from MultibodyWB.solver.model.validation import MIN_THICKNESS, validate

PYTHON = "/usr/bin/python3"

CASES = {
    "a 1 m box 1e-15 m thick": ("box", {"size": (1.0, 1.0, 1e-15)}),
    "a 20 mm box 1e-12 mm thick": ("box", {"size": (0.02, 0.02, 1e-15)}),
    "nearly flat points": ("convex", {"points": [(0, 0, 0), (0.01, 0, 0), (0, 0.01, 0),
                                                 (0.01, 0.01, 1e-15)]}),
    "coplanar points": ("convex", {"points": [(0, 0, 0), (0.01, 0, 0), (0, 0.01, 0),
                                              (0.01, 0.01, 0)]}),
    "collinear points": ("convex", {"points": [(0, 0, 0), (0.01, 0, 0), (0.02, 0, 0),
                                               (0.03, 0, 0)]}),
}


def _model(shape):
    """A block on a free hinge, its contact shape ``shape`` against a box on the ground."""
    m = MultibodySystem("Degenerate", gravity=(0, 0, -9.81))
    g = m.set_ground()
    gm = g.add_marker((0, 0, -0.5))
    b = m.add_body("Block", 1.0, [1e-3, 1e-3, 1e-3, 0, 0, 0], position=(0, 0, 0.1))
    bm = b.add_marker((0, 0, 0))
    m.add_hinge("Float", "free", bm, gm)
    m.add_contact("Hit", bm, gm, shape, ("box", {"size": (2.0, 2.0, 0.9)}), stiffness=1e7)
    return m


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("command", ["check", "run"])
def test_degenerate_shape_is_refused_by_the_cli_naming_contact_and_field(case, command,
                                                                         tmp_path):
    path = tmp_path / "degenerate.mbs.xml"
    xmlio.write(_model(CASES[case]), str(path))
    args = [PYTHON, "-m", "MultibodyWB.solver", command, str(path)]
    if command == "run":
        args += ["-o", str(tmp_path / "out.csv"), "--t-end", "0.01", "--step", "1e-4"]
    done = subprocess.run(args, capture_output=True, text=True, timeout=300,
                          cwd=str(__import__("pathlib").Path(__file__).resolve().parents[1]))
    text = done.stdout + done.stderr
    assert done.returncode == 2, text
    assert "internal error" not in text and "Traceback" not in text
    assert "Contact 'Hit'" in text and "field InputShape" in text
    assert not (tmp_path / "out.csv").exists()


def test_a_thin_box_just_above_the_limit_is_taken():
    """The limit is a ratio, not a size: a box 1e-9 of its width thick is valid, as is a tiny
    tetrahedron (1e-15 m, well proportioned)."""
    m = _model(("box", {"size": (0.02, 0.02, 0.02 * MIN_THICKNESS * 1.01)}))
    assert not [p for p in validate(m) if p.element.startswith("Contact")]
    tiny = [(0, 0, 0), (1e-15, 0, 0), (0, 1e-15, 0), (0, 0, 1e-15)]
    m = _model(("convex", {"points": tiny}))
    assert not [p for p in validate(m) if p.element.startswith("Contact")]
    m = _model(("box", {"size": (0.02, 0.02, 0.02 * MIN_THICKNESS * 0.99)}))
    (p,) = [p for p in validate(m) if p.element.startswith("Contact")]
    assert p.field == "InputShape" and "shortest is under 1e-09 of the longest" in p.message
