"""Runs stored in the document and played back, headless: the Result object (properties, its NPZ
file, load and its cache, undo, save and reopen), runs.simulate_mechanism and its failures, and
the Animator (solids and markers at the results' poses, exact restore, no undo step, no touched
objects, hinge loads, point traces; solids in containers and links).
"""

import datetime
import os

import numpy as np
import pytest

from MultibodyWB.solver.model import ModelError
from MultibodyWB.solver.methods.runtime import Cancelled

pytestmark = pytest.mark.freecad

#: A short run of the crank-slider (its own step 1e-5 s, output every 1e-4 s): 41 frames.
SHORT = dict(t_end=0.004)


@pytest.fixture
def doc(freecad):
    d = freecad.newDocument("Runs")
    d.UndoMode = 1                      # headless documents start without undo
    name = d.Name
    yield d
    if name in freecad.listDocuments():
        freecad.closeDocument(name)


@pytest.fixture
def engine(freecad, doc):
    from MultibodyWB.examples_fc import crank_slider
    return crank_slider.setup(doc)


@pytest.fixture(autouse=True)
def fresh_cache():
    from MultibodyWB.objects.result import clear_cache
    clear_cache()
    yield
    clear_cache()


def _assert_same_results(a, b):
    assert a.names == b.names
    np.testing.assert_array_equal(a.data, b.data)
    np.testing.assert_array_equal(a.states, b.states)
    assert a.meta == b.meta


def _same(a, b, tol):
    """Two placements equal within ``tol`` (FreeCAD 0.20's Placement has no isSame)."""
    return (a.Base - b.Base).Length <= tol and a.Rotation.isSame(b.Rotation, tol)


def _touched(doc):
    return [o.Name for o in doc.Objects if "Touched" in o.State]


# --- storing a run ------------------------------------------------------------------------------

def test_a_stored_run_has_its_file_and_properties(freecad, doc, engine):
    from MultibodyWB.document import runs
    from MultibodyWB.objects.base import quantity_value, type_of
    from MultibodyWB.objects.mechanism import mechanism_of
    from MultibodyWB.objects.result import TYPE, load
    from MultibodyWB.solver.run.simulate import simulate
    results = simulate(runs.model_of(engine), **SHORT)
    undo = doc.UndoCount
    obj = runs.store_results(engine, results)
    assert doc.UndoCount == undo + 1 and doc.UndoNames[0] == runs.TRANSACTION
    assert type_of(obj) == TYPE and obj.Version == obj.Proxy.VERSION
    assert obj in engine.Group and mechanism_of(obj) == engine
    assert (obj.Name, obj.Label) == ("Result", "Result")
    assert obj.Label2 == "mstmm rk4, 0.004 s, 41 frames"
    assert (obj.Model, obj.Method, obj.Integrator, obj.Frames) == \
        ("CrankSlider", "mstmm", "rk4", 41)
    assert (obj.EndTime, obj.Step, obj.OutputStep) == ("0.004 s", "1e-05 s", "0.0001 s")
    assert quantity_value(obj, "WallTime") == pytest.approx(results.meta["wall_time"], rel=1e-5)
    created = datetime.datetime.fromisoformat(obj.Created)
    assert abs((datetime.datetime.now().astimezone() - created).total_seconds()) < 60
    assert list(obj.Warnings) == list(results.meta.get("warnings", []))
    assert obj.Summary == results.summary("mm", 1000.0)       # the document's units
    for prop in ("ResultFile", "Method", "Frames", "Summary", "EndTime"):
        assert obj.getEditorMode(prop) == ["ReadOnly"], prop
    assert os.path.basename(obj.ResultFile) == "Result.npz" and os.path.isfile(obj.ResultFile)
    assert _touched(doc) == []              # nothing to recompute after storing
    _assert_same_results(load(obj), results)
    # the run of simulate_mechanism is the same run (to round-off: rk4 chunks are sized by the
    # wall time, and the driver's times t0 + j h/2 of a chunk round differently)
    second = runs.simulate_mechanism(engine, **SHORT)
    assert second.Name == "Result001" and second.Label == "Result001"
    assert os.path.basename(second.ResultFile) == "Result001.npz"
    other = load(second)
    assert other.names == results.names
    np.testing.assert_allclose(other.data, results.data, rtol=1e-9, atol=1e-9)
    assert runs.result_objects(engine) == [obj, second]
    assert runs.latest_result(engine) == second


def test_load_reads_once_and_refuses_a_bad_file(freecad, doc, engine):
    from MultibodyWB.document import runs
    from MultibodyWB.objects.result import ResultFileError, clear_cache, load
    obj = runs.simulate_mechanism(engine, **SHORT)
    first = load(obj)
    assert load(obj) is first                       # cached
    assert not first.data.flags.writeable           # shared: read-only
    clear_cache()
    again = load(obj)
    assert again is not first
    _assert_same_results(again, first)
    path = obj.ResultFile
    with open(path, "wb") as fh:                    # a corrupt file: read again, refused
        fh.write(b"not an npz file at all")
    with pytest.raises(ResultFileError, match="Result 'Result', property ResultFile: Result.npz "
                                              "cannot be read as results"):
        load(obj)
    os.remove(path)
    with pytest.raises(ResultFileError, match="Result 'Result', property ResultFile: the results "
                                              "file .* is missing"):
        load(obj)


def test_undo_removes_the_stored_run_and_redo_brings_it_back(freecad, doc, engine):
    from MultibodyWB.document import runs
    from MultibodyWB.objects.result import clear_cache, load
    group = list(engine.Group)
    obj = runs.simulate_mechanism(engine, **SHORT)
    data = np.array(load(obj).data)
    doc.undo()
    assert doc.getObject("Result") is None
    assert list(engine.Group) == group
    assert runs.result_objects(engine) == [] and runs.latest_result(engine) is None
    doc.redo()
    obj = doc.getObject("Result")
    assert obj is not None and obj in engine.Group
    clear_cache()
    np.testing.assert_array_equal(load(obj).data, data)


def test_a_reopened_document_has_its_runs_without_solving(freecad, doc, engine, tmp_path,
                                                          monkeypatch):
    from MultibodyWB.document import runs
    from MultibodyWB.objects.result import clear_cache, load
    from MultibodyWB.solver.run import simulate as simulate_module
    first = runs.simulate_mechanism(engine, **SHORT)
    second = runs.simulate_mechanism(engine, t_end=0.002, label="shorter")
    stored = {o.Name: (load(o), o.Frames, o.Summary, o.Created, o.Label2)
              for o in (first, second)}
    path = str(tmp_path / "engine.FCStd")
    doc.saveAs(path)
    freecad.closeDocument(doc.Name)
    clear_cache()

    def no_solving(*args, **kwargs):
        raise AssertionError("a stored run is solved again")

    monkeypatch.setattr(simulate_module, "simulate", no_solving)
    monkeypatch.setattr(runs, "simulate", no_solving)
    reopened = freecad.openDocument(path)
    try:
        mech = reopened.getObject("CrankSlider")
        found = runs.result_objects(mech)
        assert [o.Name for o in found] == ["Result", "Result001"]
        for obj in found:
            results, frames, summary, created, label2 = stored[obj.Name]
            assert os.path.isfile(obj.ResultFile)
            _assert_same_results(load(obj), results)
            assert (obj.Frames, obj.Summary, obj.Created, obj.Label2) == \
                (frames, summary, created, label2)
            assert obj.EndTime.endswith(" s")
        assert found[1].Label2 == "shorter"
        assert _touched(reopened) == []
    finally:
        freecad.closeDocument(reopened.Name)


def test_keep_removes_the_oldest_runs(freecad, doc, engine):
    from MultibodyWB.document import runs
    a = runs.simulate_mechanism(engine, t_end=0.001)
    b = runs.simulate_mechanism(engine, t_end=0.001)
    names = [a.Name, b.Name]
    c = runs.simulate_mechanism(engine, t_end=0.001, keep=2)
    assert [o.Name for o in runs.result_objects(engine)] == [names[1], c.Name]
    assert doc.getObject(names[0]) is None
    doc.undo()                                   # one step: the new run and the removal
    assert [o.Name for o in runs.result_objects(engine)] == names
    with pytest.raises(ValueError):
        runs.simulate_mechanism(engine, t_end=0.001, keep=0)


# --- runs that fail store nothing -----------------------------------------------------------------

def _state(doc, mech):
    from MultibodyWB.document import runs
    from MultibodyWB.objects.result import load
    return ([o.Name for o in doc.Objects], [o.Name for o in mech.Group], doc.UndoCount,
            [(o.Name, o.Frames, bytes(np.ascontiguousarray(load(o).data)))
             for o in runs.result_objects(mech)])


def test_a_model_error_stores_nothing(freecad, doc, engine, monkeypatch):
    from MultibodyWB.document import runs
    runs.simulate_mechanism(engine, **SHORT)
    hinge = doc.getObject("WristPin")
    hinge.OutputMarker = None                    # a broken hinge
    doc.recompute()
    monkeypatch.setattr(freecad.Console, "PrintError", lambda text: None)
    before = _state(doc, engine)
    with pytest.raises(ModelError, match="Hinge 'WristPin', property OutputMarker"):
        runs.simulate_mechanism(engine, **SHORT)
    assert _state(doc, engine) == before


def test_a_cancelled_run_stores_nothing(freecad, doc, engine):
    from MultibodyWB.document import runs
    runs.simulate_mechanism(engine, **SHORT)
    before = _state(doc, engine)
    calls = []

    def cancel():
        calls.append(1)
        return len(calls) > 2

    with pytest.raises(Cancelled):
        runs.simulate_mechanism(engine, cancel=cancel, t_end=1.0)
    assert _state(doc, engine) == before


@pytest.mark.parametrize("undo_mode", [1, 0])
def test_a_failure_while_storing_leaves_nothing_half_written(freecad, doc, engine, monkeypatch,
                                                            undo_mode):
    from MultibodyWB.document import runs
    from MultibodyWB.solver.run.simulate import simulate
    runs.simulate_mechanism(engine, **SHORT)
    results = simulate(runs.model_of(engine), **SHORT)
    doc.UndoMode = undo_mode
    before = _state(doc, engine)

    def broken(obj, results, label=""):
        obj.Method = "half"
        raise OSError("disk full")

    monkeypatch.setattr(runs, "describe", broken)
    with pytest.raises(OSError, match="disk full"):
        runs.store_results(engine, results)
    assert _state(doc, engine) == before
    assert not doc.HasPendingTransaction


# --- the Animator ---------------------------------------------------------------------------------

def _matrix(rotation):
    from MultibodyWB.objects.body import rotation_matrix
    return rotation_matrix(rotation)


def _expected(results, body, rest, frame, i):
    """Global (R, p) of an object whose frame at rest was ``frame`` on ``body`` (base frame
    ``rest`` at rest), at output time ``i``: the results' pose composed with the rest offset."""
    offset = rest.inverse().multiply(frame)
    R = results.rotation(body)[i]
    p = results.position(body)[i] * 1000.0
    return R @ _matrix(offset.Rotation), p + R @ np.array(offset.Base)


def test_the_animator_moves_solids_and_markers_to_the_results_poses(freecad, doc, engine):
    from MultibodyWB.document import runs
    from MultibodyWB.document.animation import Animator
    from MultibodyWB.document.factory import markers_of
    from MultibodyWB.objects.body import solid_placement
    from MultibodyWB.objects.result import load
    obj = runs.simulate_mechanism(engine, **SHORT)
    results = load(obj)
    doc.recompute()
    bodies = {b: doc.getObject(b) for b in ("Crank", "Rod", "Piston")}
    rest = {b: solid_placement(body.Solids[0]) for b, body in bodies.items()}
    moving = {o.Name: (b, o) for b, body in bodies.items() for o in body.Solids + markers_of(body)}
    original = {name: o.Placement for name, (_, o) in moving.items()}
    ground_objects = [o for o in doc.getObject("Ground").Solids] + \
        markers_of(doc.getObject("Ground"))
    ground_before = [o.Placement for o in ground_objects]
    undo = doc.UndoCount
    assert _touched(doc) == []

    animator = Animator(engine, results)
    assert animator.bodies == ["Crank", "Rod", "Piston"] and animator.unmatched == []
    assert animator.moving_bodies() == animator.bodies
    assert animator.body_objects() == list(bodies.values())
    assert animator.frame_count == 41
    np.testing.assert_array_equal(animator.times, results.time)
    assert sorted(o.Name for o in animator.objects) == sorted(moving)
    for i in (0, 1, 17, 40):
        t = float(results.time[i])
        animator.apply(t)
        for name, (b, o) in moving.items():
            R, p = _expected(results, b, rest[b], original[name], i)
            np.testing.assert_allclose(np.array(o.Placement.Base), p, rtol=0, atol=1e-9,
                                       err_msg=f"{name} at frame {i}")
            np.testing.assert_allclose(_matrix(o.Placement.Rotation), R, rtol=0, atol=1e-12,
                                       err_msg=f"{name} at frame {i}")
        pose = animator.pose("Rod", t)
        np.testing.assert_allclose(np.array(pose.Base), results.position("Rod")[i] * 1000,
                                   rtol=0, atol=1e-9)
        np.testing.assert_allclose(_matrix(pose.Rotation), results.rotation("Rod")[i], atol=1e-12)
    assert doc.UndoCount == undo
    assert [o.Placement for o in ground_objects] == ground_before     # the ground stays

    # between output times: positions in between, orientations in between
    t0, t1 = results.time[10], results.time[11]
    animator.apply(0.5 * (t0 + t1))
    mid = np.array(animator.pose("Piston", 0.5 * (t0 + t1)).Base)
    np.testing.assert_allclose(mid, 0.5 * (results.position("Piston")[10] +
                                           results.position("Piston")[11]) * 1000, atol=1e-9)
    angle = animator.pose("Crank", 0.5 * (t0 + t1)).Rotation
    a0, a1 = animator.pose("Crank", t0).Rotation, animator.pose("Crank", t1).Rotation
    assert angle.multiply(a0.inverted()).Angle == pytest.approx(
        0.5 * a1.multiply(a0.inverted()).Angle, rel=1e-6)
    animator.apply(-1.0)                        # clamped to the run
    animator.apply(99.0)
    animator.apply_frame(-1)

    animator.restore()
    for name, (_, o) in moving.items():
        assert o.Placement == original[name], name
    assert _touched(doc) == []
    assert doc.UndoCount == undo
    doc.recompute()                             # nothing moved: the mass properties are the same
    for name, (_, o) in moving.items():
        assert _same(o.Placement, original[name], 1e-9), name


def test_point_traces_and_hinge_loads(freecad, doc, engine):
    from MultibodyWB.document import runs
    from MultibodyWB.document.animation import Animator
    from MultibodyWB.objects.body import solid_placement
    from MultibodyWB.objects.result import load
    results = load(runs.simulate_mechanism(engine, **SHORT))
    with Animator(engine, results) as animator:
        rod = doc.getObject("Rod")
        web = doc.getObject("RodWeb")
        base = solid_placement(rod.Solids[0])
        vertex = np.array(web.Shape.Vertexes[3].Point)
        local = np.array(base.inverse().multVec(web.Shape.Vertexes[3].Point))
        trace = animator.point_trace("Rod", local)
        assert trace.shape == (41, 3)
        np.testing.assert_allclose(trace[0], vertex, atol=1e-9)
        assert animator.hinge_labels == ["MainBearing", "BigEnd", "WristPin", "Cylinder"]
        for i in (0, 25):
            animator.apply_frame(i)
            np.testing.assert_allclose(np.array(web.Shape.Vertexes[3].Point), trace[i],
                                       atol=1e-9)
            loads = animator.hinge_loads(results.time[i])
            assert [h.hinge for h in loads] == animator.hinge_labels
            for load_ in loads:
                hinge = doc.getObject(load_.hinge)
                np.testing.assert_allclose(load_.point, np.array(hinge.InputMarker.Placement.Base),
                                           atol=1e-9)
                np.testing.assert_array_equal(load_.force, results.vector(f"{load_.hinge}.F")[i])
                np.testing.assert_array_equal(load_.torque,
                                              results.vector(f"{load_.hinge}.T")[i])
        ground_trace = animator.point_trace("Ground", (1, 2, 3))
        np.testing.assert_allclose(ground_trace, np.tile(np.array(
            solid_placement(doc.getObject("Ground").Solids[0]).multVec(
                freecad.Vector(1, 2, 3))), (41, 1)))
        with pytest.raises(KeyError, match="no body 'Nothing'"):
            animator.pose("Nothing", 0.0)
    assert _touched(doc) == []                  # the with block restored


def _pendulums(freecad, doc):
    """Three pendulums hinged to one frame, each body's first solid of another kind: a box in a
    moved and turned container (App::Part), a link that applies the linked box's placement
    (LinkTransform) and one that replaces it. The link bodies' markers sit on a second solid, a
    hub (FreeCAD 0.20's attacher does not attach to links)."""
    from MultibodyWB.document import factory
    P, V, Rot = freecad.Placement, freecad.Vector, freecad.Rotation
    frame = doc.addObject("Part::Box", "FrameSolid")
    frame.Length, frame.Width, frame.Height = 200, 40, 10
    container = doc.addObject("App::Part", "Container")
    container.Placement = P(V(5, -3, 40), Rot(V(0, 0, 1), 30))
    inner = doc.addObject("Part::Box", "Inner")
    inner.Length, inner.Width, inner.Height = 80, 10, 10
    inner.Placement = P(V(0, 0, 30), Rot(V(0, 1, 0), 20))
    container.addObject(inner)
    source = doc.addObject("Part::Box", "Source")
    source.Length, source.Width, source.Height = 80, 10, 10
    source.Placement = P(V(300, 0, 0), Rot(V(1, 0, 0), 15))
    solids = [[inner]]
    for name, transform, x in (("LinkOn", True, 60), ("LinkOff", False, 120)):
        link = doc.addObject("App::Link", name)
        link.LinkedObject = source
        link.LinkTransform = transform
        link.Placement = P(V(x, 0, 30), Rot(V(0, 1, 0), -10))
        hub = doc.addObject("Part::Cylinder", f"{name}Hub")
        hub.Radius, hub.Height = 6, 12
        hub.Placement = P(V(x, 5, 35), Rot(V(0, 1, 0), 90))
        solids.append([link, hub])
    doc.recompute()
    mech = factory.make_mechanism(doc, "Pendulums")
    ground = factory.make_body(doc, mech, frame, ground=True, name="Frame")
    for k, parts in enumerate(solids):
        body = factory.make_body(doc, mech, parts, name=f"Arm{k}")
        pivot = P(V(10 + 60 * k, 5, 35), Rot(V(1, 0, 0), -90))      # z along global y
        own = parts[-1].Shape.Placement.inverse().multiply(pivot)
        m_arm = factory.make_marker(doc, body, (parts[-1], None), offset=own, name=f"ArmPivot{k}")
        m_frame = factory.make_marker(doc, ground, None,
                                      offset=frame.Placement.inverse().multiply(pivot),
                                      name=f"FramePivot{k}")
        factory.make_hinge(doc, mech, "revolute", m_arm, m_frame, name=f"Hinge{k}")
    doc.recompute()
    return mech


def test_the_animator_handles_solids_in_containers_and_links(freecad, doc):
    """Every solid's frame (as the body and the export take it: body.solid_placement) follows
    the results; the container's placement stays around the nested solid."""
    from MultibodyWB.document import runs
    from MultibodyWB.document.animation import Animator, _frame_parts
    from MultibodyWB.objects.body import solid_placement
    from MultibodyWB.objects.result import load
    mech = _pendulums(freecad, doc)
    assert [(o.Label, o.Problem) for o in [mech] + mech.Group if o.Problem] == []
    results = load(runs.simulate_mechanism(mech, t_end=0.05, step=1e-3, output_step=5e-3))
    bodies = {f"Arm{k}": doc.getObject(f"Arm{k}") for k in range(3)}
    solids = {s.Name: (b, s) for b, body in bodies.items() for s in body.Solids}
    rest = {b: solid_placement(body.Solids[0]) for b, body in bodies.items()}
    frames = {name: solid_placement(s) for name, (_, s) in solids.items()}
    original = {name: s.Placement for name, (_, s) in solids.items()}
    container = doc.getObject("Container").Placement
    undo = doc.UndoCount
    animator = Animator(mech, results)
    assert animator.bodies == ["Arm0", "Arm1", "Arm2"]
    animator.apply_frame(0)                      # initial state as drawn: nothing moves
    for name, (_, s) in solids.items():
        assert _same(s.Placement, original[name], 1e-9), name
    for i in (5, 10):
        animator.apply_frame(i)
        for name, (b, s) in solids.items():
            R, p = _expected(results, b, rest[b], frames[name], i)
            now = solid_placement(s)
            np.testing.assert_allclose(np.array(now.Base), p, atol=1e-9, err_msg=name)
            np.testing.assert_allclose(_matrix(now.Rotation), R, atol=1e-12, err_msg=name)
        inner = doc.getObject("Inner")
        assert _same(inner.getGlobalPlacement(), container.multiply(inner.Placement), 1e-9)
    assert not _same(doc.getObject("Inner").Placement, original["Inner"], 1e-3)   # it swung
    animator.restore()
    for name, (_, s) in solids.items():
        assert s.Placement == original[name], name
    assert _touched(doc) == [] and doc.UndoCount == undo
    # a frame measured with the container's placement: the container is the left factor
    inner = doc.getObject("Inner")
    left, right = _frame_parts(inner, inner.getGlobalPlacement())
    assert _same(left, container, 1e-9) and _same(right, freecad.Placement(), 0)
    link = doc.getObject("LinkOn")
    left, right = _frame_parts(link, solid_placement(link))
    assert _same(left, freecad.Placement(), 0) and right == doc.getObject("Source").Placement


def test_solids_only_and_the_result_view_provider(freecad, doc, engine):
    from MultibodyWB import resources
    from MultibodyWB.document import runs
    from MultibodyWB.document.animation import Animator
    from MultibodyWB.objects.result import TYPE, load
    from MultibodyWB.viewproviders.base import view_provider_class
    results = load(runs.simulate_mechanism(engine, **SHORT))
    marker = doc.getObject("CrankPinMarker")
    before = marker.Placement
    with Animator(engine, results, markers=False) as animator:
        assert all(o.Name != marker.Name for o in animator.objects)
        animator.apply_frame(20)
        assert marker.Placement == before
        # hinge loads still know where the markers are
        point = animator.marker_placement(marker, results.time[20]).Base
        np.testing.assert_allclose(np.array(point), animator.point_trace(
            "Crank", np.array(animator._markers[marker.Name][1].Base))[20], atol=1e-9)
    cls = view_provider_class(TYPE)
    assert cls.__name__ == "ViewProviderResult"
    assert os.path.isfile(resources.icon_path(cls.ICON))


def test_a_recorded_run_is_not_solved_twice(freecad, doc, engine, monkeypatch):
    """The GUI stores a background run, then records (and so executes) the macro line
    ``runs.simulate_mechanism(mechanism)``: inside recorded_run that returns the stored run."""
    from MultibodyWB.document import runs
    from MultibodyWB.solver.run.simulate import simulate
    results = simulate(runs.model_of(engine), **SHORT)
    with runs.recorded_run(engine):
        obj = runs.store_results(engine, results)
        monkeypatch.setattr(runs, "simulate", lambda *a, **k: pytest.fail("solved again"))
        assert runs.simulate_mechanism(engine) == obj
    monkeypatch.undo()
    assert [o.Name for o in runs.result_objects(engine)] == [obj.Name]
    again = runs.simulate_mechanism(engine, **SHORT)           # outside: a new run
    assert again != obj and len(runs.result_objects(engine)) == 2
