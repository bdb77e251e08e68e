"""A convex contact shape's points from a mesh file next to the model (issue 14, item 4): the
file's vertices are the points (in its unit), the run is the inline points' run, the reference
survives writing the model elsewhere, and a missing or broken file is a problem naming the
contact, the side and the file."""

from __future__ import annotations

import os

import meshio
import numpy as np
import pytest

from MultibodyWB.solver.model import xmlio
from MultibodyWB.solver.model.meshfile import read_points
from MultibodyWB.solver.run.simulate import simulate

from test_contact_convex import A, _cube_points, _falling


def _write_cube(path, scale=1.0, inner=0):
    """The cube of test_contact_convex as a triangle mesh file (its hull's triangles; inner
    points as extra vertices of degenerate triangles: a tessellation's own points)."""
    from scipy.spatial import ConvexHull
    pts = _cube_points(inner=inner)
    tri = ConvexHull(_cube_points()).simplices
    cells = [("triangle", tri)]
    if inner:
        k = np.arange(8, 8 + inner)
        cells.append(("triangle", np.column_stack([k, k, k])))
    meshio.write(str(path), meshio.Mesh(pts * scale, cells))
    return pts


@pytest.mark.parametrize("ext, unit, scale", [(".stl", "mm", 1e3), (".obj", "m", 1.0),
                                              (".ply", "cm", 1e2)])
def test_mesh_file_points_are_the_inline_points(tmp_path, ext, unit, scale):
    pts = _write_cube(tmp_path / f"cube{ext}", scale)
    got = read_points(str(tmp_path / f"cube{ext}"), unit)
    # the distinct vertices, in metres (STL stores float32: 1e-7 of the size)
    np.testing.assert_allclose(np.sort(got, axis=0), np.sort(pts, axis=0), atol=1e-7 * A)
    inline, _ = _falling(("convex", {"points": got}))
    m, _ = _falling(("convex", {"points": got}))
    path = tmp_path / "drop.mbs.xml"
    xmlio.write(m, path)
    text = path.read_text()
    # a model naming the file instead of the points
    pts_attr = text[text.index('Points="'):text.index('"', text.index('Points="') + 8) + 1]
    path.write_text(text.replace(pts_attr, f'File="cube{ext}"'
                                 + ("" if unit == "m" else f' Unit="{unit}"')))
    back = xmlio.read(path)
    shape = back.contacts[0].input_shape
    assert shape.file == str(tmp_path / f"cube{ext}") and shape.unit == unit
    np.testing.assert_array_equal(shape.points, got)
    a = simulate(inline, t_end=0.2, step=1e-4, output_step=0.01, integrator="rk4")
    b = simulate(back, t_end=0.2, step=1e-4, output_step=0.01, integrator="rk4")
    assert a["Hit.Fn"].max() > 0                     # it did land
    np.testing.assert_array_equal(a.data, b.data)


def test_the_reference_survives_writing_the_model_elsewhere(tmp_path):
    (tmp_path / "meshes").mkdir()
    (tmp_path / "models").mkdir()
    _write_cube(tmp_path / "meshes" / "cube.stl", 1e3)
    m, _ = _falling(("convex", {"points": _cube_points()}))
    text = xmlio.to_string(m)
    pts_attr = text[text.index('Points="'):text.index('"', text.index('Points="') + 8) + 1]
    src = tmp_path / "meshes" / "drop.mbs.xml"
    src.write_text(text.replace(pts_attr, 'File="cube.stl" Unit="mm"'))
    model = xmlio.read(src)
    xmlio.write(model, tmp_path / "models" / "copy.mbs.xml")
    written = (tmp_path / "models" / "copy.mbs.xml").read_text()
    assert 'File="../meshes/cube.stl" Unit="mm"' in written and "Points=" not in written
    again = xmlio.read(tmp_path / "models" / "copy.mbs.xml")
    np.testing.assert_array_equal(again.contacts[0].input_shape.points,
                                  model.contacts[0].input_shape.points)
    # as text with no folder, the path is absolute
    assert f'File="{tmp_path / "meshes" / "cube.stl"}"' in xmlio.to_string(model)


@pytest.mark.parametrize("content, words", [
    (None, ["no such file", "missing.stl"]),
    (b"solid broken\n  facet normal 0 0 1\n    outer loop\n      vertex 0 0\n", ["cannot read it"]),
])
def test_a_missing_or_broken_mesh_file_is_a_problem_naming_it(tmp_path, content, words):
    m, _ = _falling(("convex", {"points": _cube_points()}))
    text = xmlio.to_string(m)
    pts_attr = text[text.index('Points="'):text.index('"', text.index('Points="') + 8) + 1]
    name = "missing.stl" if content is None else "broken.stl"
    if content is not None:
        (tmp_path / name).write_bytes(content)
    path = tmp_path / "drop.mbs.xml"
    path.write_text(text.replace(pts_attr, f'File="{name}"'))
    model, problems = xmlio.read_with_problems(path)
    texts = [str(p) for p in problems]
    assert len(texts) == 1, texts
    assert "Contact 'Hit'" in texts[0] and "InputShape" in texts[0] and f"File '{name}'" in texts[0]
    for w in words:
        assert w in texts[0], texts[0]
    assert "Traceback" not in texts[0]
    # the same model as text has no folder to find the file in
    _, problems = xmlio.read_with_problems(path.read_bytes())
    assert any("not read from a file" in str(p) for p in problems)


def test_a_bad_unit_is_named_by_the_schema(tmp_path):
    _write_cube(tmp_path / "cube.stl")
    m, _ = _falling(("convex", {"points": _cube_points()}))
    text = xmlio.to_string(m)
    pts_attr = text[text.index('Points="'):text.index('"', text.index('Points="') + 8) + 1]
    path = tmp_path / "drop.mbs.xml"
    path.write_text(text.replace(pts_attr, 'File="cube.stl" Unit="furlong"'))
    _, problems = xmlio.read_with_problems(path)
    assert any("Unit" in str(p) and "furlong" in str(p) for p in problems), problems
    assert os.path.exists(tmp_path / "cube.stl")
