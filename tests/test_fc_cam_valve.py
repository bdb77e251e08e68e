"""The cam-driven valve built from FreeCAD solids (``MultibodyWB.examples_fc.cam_valve``): no
problem on any object, the solver's check passes, and it is the code-built example: masses and
inertias, hinge, spring and contact frames, limits, laws and settings; the same run."""

import numpy as np
import pytest

pytestmark = pytest.mark.freecad


@pytest.fixture
def doc(freecad):
    d = freecad.newDocument("CamValve")
    name = d.Name
    yield d
    if name in freecad.listDocuments():
        freecad.closeDocument(name)


@pytest.fixture
def valve_train(freecad, doc):
    from MultibodyWB.examples_fc import cam_valve
    return cam_valve.setup(doc)


def _inertia_global(part):
    """Mass (kg), global mass centre (m) and global inertia about it (kg m^2) of a body."""
    from MultibodyWB.solver.maths.rotations import bryant_to_matrix
    R = bryant_to_matrix(part.orientation)
    Ixx, Iyy, Izz, Ixy, Ixz, Iyz = part.inertia
    J = np.array([[Ixx, Ixy, Ixz], [Ixy, Iyy, Iyz], [Ixz, Iyz, Izz]])
    c = part.mass_center.position
    Jc = J - part.mass * (np.dot(c, c) * np.eye(3) - np.outer(c, c))     # about the centre
    return part.mass, part.position + R @ c, R @ Jc @ R.T


def test_cam_valve_has_no_problem_and_passes_the_solver_check(valve_train, tmp_path, capsys):
    from MultibodyWB.objects import export
    from MultibodyWB.solver import cli
    assert [(o.Label, o.Problem) for o in [valve_train] + valve_train.Group if o.Problem] == []
    path = tmp_path / "cam_valve_fc.mbs.xml"
    export.write(valve_train, path)
    assert cli.main(["check", str(path)]) == 0
    assert f"{path}: valid" in capsys.readouterr().out


def test_cam_valve_matches_the_code_built_one(valve_train):
    from MultibodyWB.examples import build
    from MultibodyWB.objects import export
    from MultibodyWB.solver.analysis.kinematics import hinge_residual
    model, code = export.to_model(valve_train), build("cam_valve")
    assert [(h.name, h.type) for h in model.hinges] == [(h.name, h.type) for h in code.hinges]
    for b in code.bodies:
        m1, c1, J1 = _inertia_global(model.body(b.name))
        m2, c2, J2 = _inertia_global(b)
        assert m1 == pytest.approx(m2, rel=1e-9), b.name
        np.testing.assert_allclose(c1, c2, atol=1e-12, err_msg=b.name)
        np.testing.assert_allclose(J1, J2, rtol=0, atol=1e-9 * np.abs(J2).max(), err_msg=b.name)
    elements = [(h.name, h, code.hinge(h.name)) for h in model.hinges]
    elements += [(f.name, f, c) for f, c in zip(model.forces, code.forces)]
    elements += [(k.name, k, c) for k, c in zip(model.contacts, code.contacts)]
    for name, a, b in elements:
        assert a.name == b.name
        for end in ("input", "output"):
            ra, rb = getattr(a, end), getattr(b, end)
            assert ra.body == rb.body
            p, Ra = model.part(ra.body).marker_global(ra.marker)
            q, Rb = code.part(rb.body).marker_global(rb.marker)
            np.testing.assert_allclose(p, q, atol=1e-12, err_msg=f"{name} {end}")
            np.testing.assert_allclose(Ra, Rb, atol=1e-12, err_msg=f"{name} {end}")
    for h in model.hinges:
        np.testing.assert_allclose(hinge_residual(model, h), 0.0, atol=1e-12, err_msg=h.name)
    guide, code_guide = model.hinge("Guide"), code.hinge("Guide")
    for field in ("lower_limits", "upper_limits", "stop_stiffness", "stop_restitution",
                  "stop_impact_speed"):
        np.testing.assert_allclose(getattr(guide, field), getattr(code_guide, field),
                                   rtol=1e-12, err_msg=field)
    (drv,), (code_drv,) = model.hinge("CamBearing").drivers, code.hinge("CamBearing").drivers
    assert (drv.coordinate, drv.expression, drv.from_start) == \
        (code_drv.coordinate, code_drv.expression, code_drv.from_start)
    (spring,), (code_spring,) = model.forces, code.forces
    for field in ("type", "stiffness", "damping", "free_length"):
        assert getattr(spring, field) == pytest.approx(getattr(code_spring, field), rel=1e-12)
    (k,), (code_k,) = model.contacts, code.contacts
    assert (k.input_shape.type, k.output_shape.type) == ("cylinder", "plane")
    for field in ("radius", "length"):
        assert getattr(k.input_shape, field) == pytest.approx(getattr(code_k.input_shape, field),
                                                              rel=1e-12)
    for field in ("stiffness", "exponent", "restitution", "impact_speed", "static_friction",
                  "dynamic_friction", "stiction_velocity"):
        assert getattr(k, field) == pytest.approx(getattr(code_k, field), rel=1e-12), field
    assert model.simulation == code.simulation
    np.testing.assert_allclose(model.gravity, code.gravity)


def test_cam_valve_from_solids_runs_as_the_code_built_one(valve_train):
    """A quarter of a revolution at 1000 rpm (the valve rising by e): the same lift and contact force."""
    from MultibodyWB.examples import build
    from MultibodyWB.objects import export
    from MultibodyWB.solver.run.simulate import simulate
    kw = dict(t_end=0.015, step=1e-5, output_step=1e-4)
    a = simulate(export.to_model(valve_train), **kw)
    b = simulate(build("cam_valve"), **kw)
    assert np.ptp(b["Guide.z"]) > 3e-3
    np.testing.assert_allclose(a["Guide.z"], b["Guide.z"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(a["CamContact.Fn"], b["CamContact.Fn"], rtol=0,
                               atol=1e-6 * np.abs(b["CamContact.Fn"]).max())


def test_demo_part_writes_the_valve_document_results_and_plots(freecad, tmp_path):
    """The demo's cam valve part (``MultibodyWB.demo.__main__.cam_valve_document``): the saved
    document holds the run, equal to the CSV; the valve's lift follows the eccentric's to the
    contact's depth at 1000 rpm; the plots are PNG files."""
    import io
    from MultibodyWB.demo.__main__ import cam_valve_document
    from MultibodyWB.document import runs
    from MultibodyWB.examples import cam_valve
    from MultibodyWB.objects.base import type_of
    from MultibodyWB.solver.results.table import Results
    files, stream = {}, io.StringIO()
    document = cam_valve_document(str(tmp_path), stream, files)
    for role in ("cam valve document", "cam valve results", "valve lift plot", "cam force plot"):
        assert (tmp_path / files[role]).stat().st_size > 0, role
    for role in ("valve lift plot", "cam force plot"):
        assert open(files[role], "rb").read(8) == b"\x89PNG\r\n\x1a\n"
    assert "Results of 'CamValve'" in stream.getvalue()
    doc = freecad.openDocument(document)
    try:
        mechanism = next(o for o in doc.Objects if type_of(o) == "Multibody::Mechanism")
        (stored,) = runs.result_objects(mechanism)
        results = runs.load(stored)
        csv = Results.from_csv(files["cam valve results"])
        assert len(results) == len(csv) == 1201            # 0.12 s at 0.1 ms
        np.testing.assert_allclose(results.column("Guide.z"), csv.column("Guide.z"), rtol=1e-9,
                                   atol=1e-12)
        theta = 1000.0 * 2 * np.pi / 60 * results.time
        assert np.abs(results.column("Guide.z") - cam_valve.lift(theta)).max() < 3e-5
    finally:
        freecad.closeDocument(doc.Name)
