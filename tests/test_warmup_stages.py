"""The warm-up by stages and its estimate (solver/run/warmup.py; issue 32, item 9): each kind of
run waits only for its own stage, a warm-up compiles the stage asked for first (or alone), writes
its progress for the Simulate panel, records what each stage cost, and the estimate of the wait
follows the stages, the CPU share the compile gets and the recorded durations."""

import json
import threading
import time

import pytest

from MultibodyWB.solver.run import warmup

FIXED, ADAPTIVE, CONSTRAINED, NE = warmup.STAGES


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "numba"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    return tmp_path / "numba"


@pytest.mark.parametrize("method, integrator, stage", [
    ("mstmm", "rk4", FIXED), ("MSTMM", "euler", FIXED), ("mstmm", "DOP853", ADAPTIVE),
    ("mstmm", "RK45", ADAPTIVE), ("constrained", "rk4", CONSTRAINED),
    ("constrained", "euler", CONSTRAINED), ("newton-euler", "rk4", NE)])
def test_each_kind_of_run_waits_for_its_own_stage(method, integrator, stage):
    assert warmup.stage_of(method, integrator) == stage


def test_every_stage_has_runs_and_the_asked_stage_comes_first():
    stages = {warmup._stage_of_run(m, s) for m, s in warmup._models()}
    assert stages == set(warmup.STAGES)
    assert warmup.stage_order() == [FIXED, ADAPTIVE, CONSTRAINED, NE]
    assert warmup.stage_order(NE) == [NE, FIXED, ADAPTIVE, CONSTRAINED]
    with pytest.raises(ValueError, match="not a warm-up stage"):
        warmup.stage_order("rk4")


def status(order=None, done=(), stage=FIXED, stage_cpu=0.0, cpu=0.0, wall=0.0):
    return {"order": list(order or warmup.STAGES), "done": list(done), "stage": stage,
            "stage_cpu": stage_cpu, "cpu": cpu, "wall": wall}


EXPECTED = {FIXED: 90.0, ADAPTIVE: 60.0, CONSTRAINED: 5.0, NE: 25.0}


def test_the_estimate_at_the_start_is_the_stage_s_expected_time():
    e = warmup.estimate(status(), FIXED, EXPECTED)
    assert (e.stage, e.stages, e.name) == (1, 4, FIXED)
    assert e.remaining == pytest.approx(90.0) and e.fraction == 0.0 and not e.late


def test_the_estimate_follows_the_cpu_used_and_the_share_of_a_core():
    # half the stage's CPU used, with half a core (a loaded machine): 45 s of CPU left take 90 s
    e = warmup.estimate(status(stage_cpu=45.0, cpu=50.0, wall=100.0), FIXED, EXPECTED)
    assert e.fraction == pytest.approx(0.5)
    assert e.remaining == pytest.approx(90.0)
    # a whole core: 45 s
    e = warmup.estimate(status(stage_cpu=45.0, cpu=50.0, wall=50.0), FIXED, EXPECTED)
    assert e.remaining == pytest.approx(45.0)
    # a starved compile is not promised forever: at most ten times the CPU left
    e = warmup.estimate(status(stage_cpu=45.0, cpu=1.0, wall=100.0), FIXED, EXPECTED)
    assert e.remaining == pytest.approx(450.0)


def test_a_later_stage_waits_for_the_stages_before_it():
    # the run needs the Newton-Euler stage; the whole warm-up is in its first stage
    e = warmup.estimate(status(stage_cpu=30.0, cpu=30.0, wall=30.0), NE, EXPECTED)
    assert e.remaining == pytest.approx(60.0 + 60.0 + 5.0 + 25.0)
    assert e.fraction == pytest.approx(30.0 / 180.0)
    assert (e.stage, e.stages) == (1, 4)
    # later: the first two done, the third compiling
    e = warmup.estimate(status(done=[FIXED, ADAPTIVE], stage=CONSTRAINED, stage_cpu=2.0,
                               cpu=160.0, wall=160.0), NE, EXPECTED)
    assert (e.stage, e.name) == (3, CONSTRAINED)
    assert e.remaining == pytest.approx(3.0 + 25.0)
    assert e.fraction == pytest.approx(152.0 / 180.0)


def test_a_stage_done_is_no_wait_and_a_late_one_says_so():
    e = warmup.estimate(status(done=[FIXED], stage=ADAPTIVE, cpu=91.0, wall=95.0), FIXED,
                        EXPECTED)
    assert e.remaining == 0.0 and e.fraction == 1.0
    e = warmup.estimate(status(stage_cpu=120.0, cpu=120.0, wall=120.0), FIXED, EXPECTED)
    assert e.late and e.remaining == pytest.approx(9.0) and e.fraction < 1.0


def test_a_stage_alone_is_stage_1_of_1():
    e = warmup.estimate(status(order=[NE], stage=NE, stage_cpu=5.0, cpu=6.0, wall=6.0), NE,
                        EXPECTED)
    assert (e.stage, e.stages) == (1, 1) and e.remaining == pytest.approx(20.0)


def test_recorded_durations_replace_the_defaults(cache):
    assert warmup.durations() == warmup.DEFAULT_CPU
    warmup._record_duration(FIXED, 41.26)
    warmup._record_duration(ADAPTIVE, 0.8)              # a cache load, not a compile
    assert warmup.durations()[FIXED] == pytest.approx(41.3)
    assert warmup.durations()[ADAPTIVE] == warmup.DEFAULT_CPU[ADAPTIVE]
    e = warmup.estimate(status(), FIXED)                  # the recorded time is the estimate
    assert e.remaining == pytest.approx(41.3)
    warmup.durations_path().write_text("not json")
    assert warmup.durations() == warmup.DEFAULT_CPU


def fake_runs(monkeypatch, seen, seconds=0.0):
    """simulate() replaced: notes each run's stage and which stamps were there."""
    from MultibodyWB.solver.run import simulate as sim

    def simulate(model, **settings):
        seen.append((warmup._stage_of_run(model, settings),
                     {s for s in warmup.STAGES if warmup.is_warm(s)}))
        t = time.process_time()
        while time.process_time() - t < seconds:      # a compile's CPU
            pass

    monkeypatch.setattr(sim, "simulate", simulate)


def stages_in_order(seen):
    order = []
    for stage, _ in seen:
        if not order or order[-1] != stage:
            order.append(stage)
    return order


def test_the_asked_stage_is_compiled_first_and_each_stage_stamped(cache, monkeypatch, tmp_path):
    seen = []
    fake_runs(monkeypatch, seen)
    path = tmp_path / "status.json"
    warmup.warm_up(first=NE, status=str(path))
    assert stages_in_order(seen) == [NE, FIXED, ADAPTIVE, CONSTRAINED]
    # a stage's stamp is written after its runs, before the next stage's
    for stage, stamped in seen:
        order = warmup.stage_order(NE)
        assert stamped == set(order[:order.index(stage)])
    assert warmup.is_warm() and all(warmup.is_warm(s) for s in warmup.STAGES)
    state = warmup.read_status(path)
    assert state["finished"] and state["done"] == [NE, FIXED, ADAPTIVE, CONSTRAINED]
    assert state["order"] == warmup.stage_order(NE) and state["stage"] is None


def test_one_stage_alone_and_a_stage_compiled_elsewhere_is_skipped(cache, monkeypatch):
    seen = []
    fake_runs(monkeypatch, seen)
    warmup.warm_up(only=ADAPTIVE)
    assert stages_in_order(seen) == [ADAPTIVE]
    assert warmup.is_warm(ADAPTIVE) and not warmup.is_warm() and not warmup.is_warm(FIXED)
    seen.clear()
    warmup.warm_up()                                  # the whole: that stage is not run again
    assert stages_in_order(seen) == [FIXED, CONSTRAINED, NE]
    assert warmup.is_warm()


def test_the_status_is_written_while_a_stage_compiles(cache, monkeypatch, tmp_path):
    seen = []
    fake_runs(monkeypatch, seen, seconds=0.05)
    monkeypatch.setattr(warmup, "_LOADED_CPU", 0.0)   # record even these short stages
    path = tmp_path / "status.json"
    states = []
    stop = threading.Event()

    def watch():
        while not stop.is_set():
            state = warmup.read_status(path)
            if state is not None:
                states.append(state)
            time.sleep(0.05)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        warmup.warm_up(status=str(path))
    finally:
        stop.set()
        watcher.join()
    during = [s for s in states if s["stage"] == FIXED and not s["finished"]]
    assert during and max(s["stage_cpu"] for s in during) > 0.0
    assert all(s["cpu"] >= s["stage_cpu"] for s in states)
    recorded = json.loads(warmup.durations_path().read_text())
    n_fixed = sum(1 for stage, _ in seen if stage == FIXED)
    assert recorded[FIXED] >= 0.05 * n_fixed * 0.9 - 0.1
    assert set(recorded) == set(warmup.STAGES)


def test_the_panel_s_text_says_the_stage_the_run_needs_and_the_time_left():
    e = warmup.estimate(status(stage_cpu=10.0, cpu=10.0, wall=20.0), FIXED, EXPECTED)
    text, fraction = warmup.wait_text(e, FIXED, 21.4)
    # 80 s of CPU left at half a core: 160 s
    assert text == ("Compiling the solver (once after installing): stage 1 of 4, this run "
                    "needs mstmm with rk4 or euler; about 2 min 40 s left (21 s elapsed). "
                    "Cancel stops it")
    assert fraction == pytest.approx(10.0 / 90.0)
    e = warmup.estimate(status(stage_cpu=88.0, cpu=88.0, wall=88.0), FIXED, EXPECTED)
    assert "a few seconds more" in warmup.wait_text(e, FIXED, 90.0)[0]
    e = warmup.estimate(status(stage_cpu=100.0, cpu=100.0, wall=100.0), FIXED, EXPECTED)
    assert "longer than expected" in warmup.wait_text(e, FIXED, 100.0)[0]
    # nothing heard from the warm-up yet: the elapsed time, no fraction
    text, fraction = warmup.wait_text(None, NE, 3.2)
    assert fraction is None and "Newton-Euler" in text and "3 s elapsed" in text
