"""Design studies in a FreeCAD document (issue 15): a Study on a spreadsheet-driven link length.

The link pendulum of :mod:`MultibodyWB.examples_fc.link_pendulum`: a Part box whose Length is bound
to ``Spreadsheet.LinkLength``, hanging on a revolute pin, released from 30 deg. A grid over the
length recomputes the box per variant: the exported mass is density * volume, the mass centre and
the far-end marker follow the length, and the measured period is the compound pendulum's,
``T = 4 sqrt(I_O / (m g d)) K(sin^2(theta0 / 2))`` from the exported mass properties, to 1e-4. The
document ends as it started; the table is one undo step, kept in the .FCStd; Apply is one undo
step. Bad rows are refused before any run, naming the row and the field. One test runs the study
on a Dask LocalCluster of two workers started from inside freecadcmd (FreeCAD's own executable,
not Python).
"""

import math
import os

import numpy as np
import pytest
from scipy.special import ellipk

import freecad_env

pytestmark = pytest.mark.freecad

G = 9.81
THETA0 = math.radians(30.0)
DENSITY = 2700.0
SECTION = 0.010                      #: m


@pytest.fixture
def doc(freecad):
    d = freecad.newDocument("LinkStudy")
    name = d.Name
    yield d
    if name in freecad.listDocuments():
        freecad.closeDocument(name)


def _setup(doc, **kw):
    from MultibodyWB.examples_fc import link_pendulum
    mech = link_pendulum.setup(doc, **kw)
    return mech, doc.getObject("LengthStudy")


def compound_period(model):
    """The period of the exported link about its pivot (revolute about global y), from the model's
    mass, mass centre, inertia about the base origin and pivot marker."""
    body = model.body("Link body")
    m = body.mass
    c = np.asarray(body.mass_center.position)
    jyy = body.inertia[1]                                 # about the base origin, body axes
    hinge = model.hinge("Pivot")
    p = np.asarray(body.marker(hinge.input.marker).frame.position)
    d2 = (c[0] - p[0]) ** 2 + (c[2] - p[2]) ** 2
    i_pivot = jyy - m * (c[0] ** 2 + c[2] ** 2) + m * d2
    return 4 * math.sqrt(i_pivot / (m * G * math.sqrt(d2))) * ellipk(math.sin(THETA0 / 2) ** 2)


def box_period(length, h=SECTION, theta0=THETA0):
    """The same in closed form for the box link: I_O = m (L^2 / 3 + h^2 / 12), d = L / 2."""
    return 4 * math.sqrt((length ** 2 / 3 + h ** 2 / 12) / (G * length / 2)) * \
        ellipk(math.sin(theta0 / 2) ** 2)


def _label(doc, label):
    (obj,) = doc.getObjectsByLabel(label)
    return obj


def _state(doc):
    link, sheet = doc.getObject("Link"), doc.getObject("Spreadsheet")
    return {"length": link.Length.Value, "volume": link.Shape.Volume,
            "cell": sheet.getContents("A1"),
            "tip": tuple(doc.getObject("Tip").Placement.Base),
            "density": _label(doc, "Link body").Density.Value,
            "damping": doc.getObject("Pivot").DampingRz}


def test_a_grid_over_the_link_length_follows_the_geometry(doc):
    from MultibodyWB.document import study as dstudy
    from MultibodyWB.objects import export
    from MultibodyWB.solver.study.executors import SerialExecutor
    mech, st = _setup(doc)
    before = _state(doc)
    base_mass = export.to_model(mech).body("Link body").mass
    doc.UndoMode = 1
    undo_before = doc.UndoCount
    seen = []
    table = dstudy.run(st, executor=SerialExecutor(),
                       progress=lambda done, total, row: seen.append((done, total, row.status)))
    assert seen == [(1, 3, "ok"), (2, 3, "ok"), (3, 3, "ok")]
    assert [r.status for r in table.rows] == ["ok"] * 3
    lengths = [r.values[0] for r in table.rows]
    assert lengths == pytest.approx([0.08, 0.10, 0.12], rel=1e-12)        # SI: m
    masses = []
    for r in table.rows:
        L = r.values[0]
        model = dstudy.variant_model(st, r.values)
        body = model.body("Link body")
        masses.append(body.mass)
        # the shape was recomputed: density * volume, centre at L / 2, the tip marker at L
        assert body.mass == pytest.approx(DENSITY * L * SECTION ** 2, rel=1e-9)
        assert body.mass_center.position[0] == pytest.approx(L / 2, rel=1e-9)
        tip = next(mk for mk in body.markers if mk.label == "Tip" or mk.id == 3)
        assert tip.frame.position[0] == pytest.approx(L, rel=1e-9)
        assert r.objectives[0] == pytest.approx(compound_period(model), rel=1e-4)
        assert r.objectives[0] == pytest.approx(box_period(L), rel=1e-4)
    assert len(set(round(m, 12) for m in masses)) == 3
    # the document is as it was; only the table was written, as one undo step
    assert _state(doc) == before
    assert export.to_model(mech).body("Link body").mass == base_mass
    assert doc.UndoCount == undo_before + 1
    assert doc.UndoNames[0] == dstudy.TRANSACTION_TABLE
    assert st.Best == 0 and st.Units == ["m"]
    assert "3 ok, 0 failed" in st.Summary


def test_the_table_is_kept_in_the_file_and_apply_is_one_undo_step(doc, tmp_path, freecad):
    from MultibodyWB.document import study as dstudy
    from MultibodyWB.solver.study.executors import SerialExecutor
    mech, st = _setup(doc, parameters=["Spreadsheet.LinkLength = 90 mm, 110 mm",
                                       "Link body.Density = 2000 kg/m^3 : 4000 kg/m^3 : 2"],
                      objectives=["period(Pivot.rz)", "max(abs(Pivot.rz))"],
                      constraints=["max(Pivot.rz_rate) <= 360 deg/s"])
    dstudy.run(st, executor=SerialExecutor())
    kept = dstudy.stored_table(st)
    assert kept.paths == ["Spreadsheet.LinkLength", "Link body.Density"]
    assert kept.units == ["m", "kg/m^3"]
    assert np.array([r.values for r in kept.rows]) == pytest.approx(
        np.array([(0.09, 2000.0), (0.09, 4000.0), (0.11, 2000.0), (0.11, 4000.0)]), rel=1e-14)
    # the density of a uniform link does not change its period
    assert kept.rows[0].objectives[0] == pytest.approx(kept.rows[1].objectives[0], rel=1e-9)
    assert kept.rows[0].objectives[1] == pytest.approx(THETA0, rel=1e-3)
    assert [r.status for r in kept.rows] == ["ok"] * 4
    # the peak speed sqrt(2 g d (1 - cos theta0) m / I_O): 379 deg/s at 90 mm, 343 at 110 mm
    assert [r.feasible for r in kept.rows] == [False, False, True, True]
    assert math.degrees(kept.rows[2].constraints[0]) == pytest.approx(342.7, abs=0.2)
    assert kept.best == 2
    path = str(tmp_path / "study.FCStd")
    doc.saveAs(path)
    name = doc.Name
    freecad.closeDocument(name)
    reopened = freecad.openDocument(path)
    try:
        st2 = reopened.getObject("LengthStudy")
        again = dstudy.stored_table(st2)
        assert again == kept
        assert st2.Method == "grid" and st2.Best == kept.best and st2.Units == kept.units
        cell = reopened.getObject("Spreadsheet").getContents("A1")    # "=100mm" (1.0: "=100 mm")
        reopened.UndoMode = 1
        count = reopened.UndoCount
        row = dstudy.apply_variant(st2, 3)
        assert row.values == pytest.approx((0.11, 4000.0), rel=1e-14)
        assert reopened.UndoCount == count + 1
        assert reopened.UndoNames[0] == dstudy.TRANSACTION_APPLY
        link = reopened.getObject("Link")
        assert link.Length.Value == pytest.approx(110.0, rel=1e-12)
        assert link.Shape.Volume == pytest.approx(110.0 * 100.0, rel=1e-9)
        assert _label(reopened, "Link body").Density.Value * 1e9 == \
            pytest.approx(4000.0, rel=1e-12)
        reopened.undo()
        reopened.recompute()
        assert link.Length.Value == pytest.approx(100.0, rel=1e-12)
        assert reopened.getObject("Spreadsheet").getContents("A1") == cell
        assert _label(reopened, "Link body").Density.Value * 1e9 == \
            pytest.approx(DENSITY, rel=1e-12)
        # the best variant by default: the least period of those within the speed limit
        best = dstudy.apply_variant(st2)
        assert best.index == 2 and best.values == pytest.approx((0.11, 2000.0), rel=1e-14)
        assert reopened.UndoCount == count + 1
    finally:
        freecad.closeDocument(reopened.Name)


def test_a_variant_the_document_cannot_make_is_recorded_and_the_others_run(doc):
    from MultibodyWB.document import study as dstudy
    from MultibodyWB.solver.study.executors import SerialExecutor
    mech, st = _setup(doc, parameters=["Spreadsheet.LinkLength = 100 mm, -5 mm, 120 mm"])
    before = _state(doc)
    table = dstudy.run(st, executor=SerialExecutor())
    assert [r.status for r in table.rows] == ["ok", "failed", "ok"]
    assert "could not make this variant" in table.rows[1].error
    assert "Link" in table.rows[1].error
    assert math.isnan(table.rows[1].objectives[0])
    assert _state(doc) == before
    assert "variant 1 failed" in st.Summary


def test_text_quantities_and_plain_numbers_are_set_and_put_back(doc):
    from MultibodyWB.document import study as dstudy
    mech, st = _setup(doc, parameters=["Pivot.DampingRz = 0 N*m*s/rad : 0.002 N*m*s/rad : 2"])
    target = dstudy.resolve(doc, "Pivot.DampingRz")
    assert target.kind == "text" and target.si_unit == "m^2*kg/(s*rad)"
    assert target.read("2 N*mm*s/rad") == pytest.approx(2e-3, rel=1e-12)
    assert target.read("0.5") == pytest.approx(0.5, rel=1e-12)    # in the unit shown
    model = dstudy.variant_model(st, (0.002,))
    assert model.hinge("Pivot").damping[0] == pytest.approx(0.002, rel=1e-12)
    assert doc.getObject("Pivot").DampingRz == _state(doc)["damping"]
    length = dstudy.resolve(doc, "Spreadsheet.LinkLength")
    assert (length.kind, length.name, length.si_unit) == ("cell", "A1", "m")
    assert length.read("0.1 m") == length.read("100") == pytest.approx(0.1, rel=1e-12)


@pytest.mark.parametrize("rows, objectives, words", [
    (["Nothing.Length = 1 mm : 2 mm : 2"], None,
     ["Parameter 1 (Nothing.Length), field Object", "no object named or labelled 'Nothing'"]),
    (["Link.Lenght = 1 mm : 2 mm : 2"], None,
     ["Parameter 1 (Link.Lenght), field Property", "no property 'Lenght'", "Length"]),
    (["Link.Length = 80 mm : 120 mm : 3"], None,
     ["field Property", "set by the expression 'Spreadsheet.LinkLength'"]),
    (["Spreadsheet.LinkLength = 80 kg : 120 mm : 3"], None,
     ["Parameter 1 (Spreadsheet.LinkLength), field Low", "'80 kg' is not a quantity in m"]),
    (["Spreadsheet.LinkLength = 80 mm : 120 mm"], None, ["field Levels", "a grid needs"]),
    (["Spreadsheet.LinkLength = 120 mm : 80 mm : 3"], None, ["field High", "not above"]),
    (["Spreadsheet.NoSuchAlias = 1 : 2 : 2"], None, ["field Property", "no alias"]),
    (["Spreadsheet.LinkLength 80 mm"], None, ["field Row", "expected OBJECT.PROPERTY"]),
    (["Pivot.InitialX = 1 mm : 2 mm : 2"], None,
     ["field Property", "'Pivot.InitialX' is not used by this hinge"]),
    (["Pivot.LowerLimitRz = -10 deg : 0 deg : 2"], None,
     ["field Property", "counts only when UseLimits is true"]),
    (["Pivot.Label = 1 : 2 : 2"], None, ["field Property", "is not a number"]),
    (["Spreadsheet.LinkLength = 80 mm : 120 mm : 3"], ["period(Pivot.rx)"],
     ["Objective 1 (period(Pivot.rx)), field Expression", "Pivot.rz"]),
])
def test_bad_rows_are_refused_before_any_run_naming_row_and_field(doc, rows, objectives, words):
    from MultibodyWB.document import study as dstudy
    from MultibodyWB.solver.study import StudyError
    mech, st = _setup(doc, parameters=rows,
                      objectives=objectives or ["period(Pivot.rz)"])
    before = _state(doc)
    with pytest.raises(StudyError) as info:
        dstudy.run(st, executor=None)
    text = str(info.value)
    for w in words:
        assert w in text, text
    assert _state(doc) == before and st.Table == ""


def test_every_bad_row_is_listed_at_once(doc):
    from MultibodyWB.document import study as dstudy
    from MultibodyWB.solver.study import StudyError
    mech, st = _setup(doc, parameters=["Nothing.Length = 1 mm : 2 mm : 2",
                                       "Spreadsheet.LinkLength = 1 s : 2 mm : 2"],
                      objectives=["rms(Nobody.x)"])
    with pytest.raises(StudyError) as info:
        dstudy.prepare(st)
    fields = [(p.element.split(" (")[0], p.field) for p in info.value.problems]
    assert ("Parameter 1", "Object") in fields and ("Parameter 2", "Low") in fields
    assert ("Objective 1", "Expression") in fields


_DASK_CHECK = r'''
import json, os, sys, time, traceback
import FreeCAD
result = {"executable": sys.executable}
try:
    from MultibodyWB.examples_fc import link_pendulum
    from MultibodyWB.document import study as dstudy
    import multiprocessing
    doc = FreeCAD.newDocument("P")
    link_pendulum.setup(doc, parameters=["Spreadsheet.LinkLength = 80 mm : 120 mm : 5"],
                        Workers=2)
    st = doc.getObject("LengthStudy")
    table = dstudy.run(st)                       # the study's own: a local cluster
    time.sleep(0.5)
    result.update(children_after=len(multiprocessing.active_children()))
    result.update(workers=table.workers, status=[r.status for r in table.rows],
                  lengths=[r.values[0] for r in table.rows],
                  periods=[r.objectives[0] for r in table.rows],
                  length_after=doc.getObject("Link").Length.Value)
except Exception:
    result["exception"] = traceback.format_exc()
with open(os.environ["MBWB_RESULT_FILE"], "w") as f:
    json.dump(result, f)
'''


@pytest.mark.freecadcmd
def test_a_local_dask_cluster_started_from_inside_freecad(tmp_path):
    """freecadcmd's executable is FreeCAD, not Python: the study's local cluster (Workers 2)
    still starts its workers (with the installation's Python), runs the exported variants and is
    closed with the study."""
    script = tmp_path / "mbwb_study_dask.py"
    script.write_text(_DASK_CHECK, encoding="utf-8")
    run = freecad_env.run_freecadcmd(script, timeout=300, work_dir=tmp_path / "run")
    assert run.result and "exception" not in run.result, run.describe()
    r = run.result
    assert not os.path.basename(r["executable"]).startswith("python")
    assert r["workers"] == 2
    assert r["children_after"] == 0              # the local cluster closed with the study
    assert r["status"] == ["ok"] * 5
    assert r["lengths"] == pytest.approx([0.08, 0.09, 0.10, 0.11, 0.12], rel=1e-12)
    assert r["periods"] == pytest.approx([box_period(L) for L in r["lengths"]], rel=1e-4)
    assert r["length_after"] == 100.0


def test_a_variant_kept_as_a_result_is_its_run(doc):
    from MultibodyWB.document import runs
    from MultibodyWB.document import study as dstudy
    from MultibodyWB.solver.study.executors import SerialExecutor
    mech, st = _setup(doc)
    table = dstudy.run(st, executor=SerialExecutor())
    before = _state(doc)
    doc.UndoMode = 1
    count = doc.UndoCount
    result = dstudy.keep_variant(st, 2)
    assert doc.UndoCount == count + 1 and doc.UndoNames[0] == runs.TRANSACTION
    assert result in mech.Group and result.Label2 == "LengthStudy variant 2: 120 mm"
    assert _state(doc) == before
    res = runs.load(result)
    from MultibodyWB.solver.study import Expression
    assert Expression("period(Pivot.rz)").evaluate(res) == \
        pytest.approx(table.rows[2].objectives[0], rel=1e-12)


def test_the_scheduler_comes_from_the_study_else_the_preferences(doc, freecad):
    from MultibodyWB.document import study as dstudy
    mech, st = _setup(doc)
    prefs = freecad.ParamGet(dstudy.PREFERENCES)
    try:
        assert dstudy.prepare(st).scheduler is None             # a local cluster
        prefs.SetString("StudyScheduler", "tcp://10.0.0.7:8786")
        assert dstudy.default_executor(dstudy.prepare(st)).scheduler == "tcp://10.0.0.7:8786"
        st.Scheduler, st.Workers = "tcp://127.0.0.1:8786", 3
        ex = dstudy.default_executor(dstudy.prepare(st))
        assert (ex.scheduler, ex.n_workers) == ("tcp://127.0.0.1:8786", 3)
    finally:
        prefs.RemString("StudyScheduler")


def test_nelder_mead_finds_the_length_of_a_half_second_swing(doc):
    """An optimiser through the document: each trial length recomputes the box; the length whose
    period is 0.5 s, from the closed form, to the optimiser's tolerance."""
    from scipy.optimize import brentq
    from MultibodyWB.document import study as dstudy
    from MultibodyWB.solver.study.executors import SerialExecutor
    mech, st = _setup(doc, parameters=["Spreadsheet.LinkLength = 60 mm : 140 mm"],
                      objectives=["abs(period(Pivot.rz) - 0.5)"], Method="nelder-mead",
                      Tolerance=1e-4, MaxEvaluations=60)
    before = _state(doc)
    table = dstudy.run(st, executor=SerialExecutor())
    exact = brentq(lambda L: box_period(L) - 0.5, 0.06, 0.14)
    assert table.optimum[0] == pytest.approx(exact, rel=1.5e-4)      # 1e-4 of the range
    best = dstudy.stored_table(st).row(st.Best)
    assert best.values[0] == pytest.approx(exact, rel=1.5e-4)
    assert len(table.rows) <= 60 and all(r.status == "ok" for r in table.rows)
    assert _state(doc) == before


def test_a_force_magnitude_is_set_as_a_number_and_its_expression_put_back(doc):
    from MultibodyWB.document import factory
    from MultibodyWB.document import study as dstudy
    mech, st = _setup(doc, parameters=["Drive.Magnitude = 0 N*m : 20 N*mm : 3"])
    tip = _label(doc, "Tip")
    factory.make_force(doc, mech, "point_torque", tip, direction=(0, 1, 0),
                       magnitude="0.01*sin(t)", name="Drive")
    doc.recompute()
    target = dstudy.resolve(doc, "Drive.Magnitude")
    assert (target.kind, target.si_unit) == ("magnitude", "m^2*kg/s^2")
    assert target.read("20 N*mm") == pytest.approx(0.02, rel=1e-12)
    assert target.read("0.5") == pytest.approx(0.5, rel=1e-12)             # N m, as the solver
    (p,) = dstudy.parameters(st)
    assert p.parameter.low == 0.0 and p.parameter.high == pytest.approx(0.02, rel=1e-12)
    model = dstudy.variant_model(st, (0.02,))
    assert float(model.forces[0].magnitude) == pytest.approx(0.02, rel=1e-12)
    assert _label(doc, "Drive").Magnitude == "0.01*sin(t)"


def test_the_initial_angle_sets_the_amplitude(doc):
    from MultibodyWB.document import study as dstudy
    from MultibodyWB.solver.study.executors import SerialExecutor
    mech, st = _setup(doc, parameters=["Pivot.InitialRz = 10 deg, 60 deg"])
    table = dstudy.run(st, executor=SerialExecutor())
    assert [r.values[0] for r in table.rows] == pytest.approx([math.radians(10),
                                                               math.radians(60)], rel=1e-12)
    for r in table.rows:
        assert r.objectives[0] == pytest.approx(box_period(0.1, theta0=r.values[0]), rel=1e-4)
    assert doc.getObject("Pivot").InitialRz.Value == 30.0


def test_a_recorded_run_returns_the_table_the_panel_stored(doc):
    from MultibodyWB.document import study as dstudy
    from MultibodyWB.solver.study.executors import SerialExecutor
    mech, st = _setup(doc)
    table = dstudy.run(st, executor=SerialExecutor())
    doc.UndoMode = 1
    count = doc.UndoCount
    with dstudy.recorded_run(st, table):
        assert dstudy.run(st) is table
    assert doc.UndoCount == count
