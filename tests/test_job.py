"""The background simulation job (MultibodyWB.solver.run.job): same results as simulate(), progress,
cancel, failures. No FreeCAD."""

import threading
import time

import numpy as np
import pytest

from MultibodyWB.examples import build
from MultibodyWB.solver.run.job import STATES, Job, run_messages
from MultibodyWB.solver.model import ModelError
from MultibodyWB.solver.run.simulate import simulate
from MultibodyWB.solver.methods.runtime import Cancelled

SETTINGS = dict(t_end=0.3, step=1e-3, output_step=0.01)


def _record_progress(job, seen, stop):
    """Poll ``job.progress`` as the GUI's timer would, from another thread."""
    while not stop.is_set():
        seen.append(job.progress)
        time.sleep(0.0005)


def test_a_job_gives_the_results_of_simulate():
    model = build("double_pendulum")
    direct = simulate(model, **SETTINGS)
    job = Job(model, **SETTINGS)
    assert (job.state, job.done, job.results, job.error, job.progress) == \
        ("idle", False, None, None, 0.0)
    assert job.wall_time is None and job.first_progress_time is None
    assert job.wait(0.01) is False                     # not started: no waiting
    seen, stop = [], threading.Event()
    poller = threading.Thread(target=_record_progress, args=(job, seen, stop))
    poller.start()
    job.start()
    assert job.state in ("running", "done")
    assert job.wait(120)
    stop.set()
    poller.join()
    assert (job.state, job.done, job.error) == ("done", True, None)
    res = job.results
    assert res.names == direct.names
    np.testing.assert_array_equal(res.data, direct.data)
    np.testing.assert_array_equal(res.states, direct.states)
    assert {k: v for k, v in res.meta.items() if k != "wall_time"} == \
        {k: v for k, v in direct.meta.items() if k != "wall_time"}
    assert job.progress == 1.0
    seen.append(job.progress)
    assert seen[0] == 0.0 and seen[-1] == 1.0
    assert all(b >= a for a, b in zip(seen, seen[1:]))          # monotonic
    assert 0.0 <= job.first_progress_time <= job.wall_time
    wall = job.wall_time
    time.sleep(0.01)
    assert job.wall_time == wall                                # frozen once done
    assert job.messages == []                                   # a tree: nothing to report
    with pytest.raises(RuntimeError):
        job.start()                                             # a job runs once


def test_progress_reports_go_from_zero_to_one_monotonically():
    job = Job(build("double_pendulum"), **SETTINGS)
    calls = []
    original = job._on_progress

    def spy(fraction):
        calls.append(fraction)
        original(fraction)
        calls.append(job.progress)

    job._on_progress = spy
    job.start()
    assert job.wait(120) and job.state == "done"
    assert calls[0] == 0.0 and calls[-1] == 1.0
    assert all(b >= a for a, b in zip(calls, calls[1:]))


def test_cancel_ends_a_long_run_quickly_without_results():
    job = Job(build("double_pendulum"), t_end=1e4, step=1e-3, output_step=1.0)
    job.start()
    deadline = time.perf_counter() + 120
    while job.progress <= 0.0 and time.perf_counter() < deadline and not job.done:
        time.sleep(0.01)
    time.sleep(0.2)                     # well inside the run (1e7 steps)
    assert job.state == "running" and 0.0 < job.progress < 0.5
    t0 = time.perf_counter()
    job.cancel()
    assert job.cancel_requested
    assert job.wait(5.0)
    assert time.perf_counter() - t0 < 1.0               # chunks are about 0.1 s of work
    assert (job.state, job.results) == ("cancelled", None)
    assert isinstance(job.error, Cancelled)
    assert job.progress < 1.0


def test_cancel_before_start_gives_no_results():
    job = Job(build("double_pendulum"), **SETTINGS)
    job.cancel()
    job.start()
    assert job.wait(120)
    assert (job.state, job.results) == ("cancelled", None)


def test_a_model_error_ends_in_failed():
    model = build("double_pendulum")
    model.bodies[0].mass = -1.0
    job = Job(model, **SETTINGS).start()
    assert job.wait(60)
    assert (job.state, job.results, job.done) == ("failed", None, True)
    assert isinstance(job.error, ModelError)
    assert "Upper" in str(job.error)
    with pytest.raises(ModelError):
        simulate(model, **SETTINGS)        # the same error as a direct call


def test_bad_settings_and_other_errors_end_in_failed():
    job = Job(build("double_pendulum"), method="bogus", t_end=0.1).start()
    assert job.wait(60) and job.state == "failed"
    assert isinstance(job.error, ModelError) and "bogus" in str(job.error)
    job = Job(build("double_pendulum"), t_end=0.1, no_such_option=1).start()
    assert job.wait(60) and job.state == "failed"
    assert isinstance(job.error, TypeError)


def test_the_job_supplies_progress_and_cancel():
    with pytest.raises(TypeError):
        Job(build("double_pendulum"), progress=print)


def test_messages_of_a_closed_loop_run():
    job = Job(build("crank_slider"), t_end=0.002).start()
    assert job.wait(120) and job.state == "done", job.error
    assert job.messages == run_messages(job.results.meta)
    assert any(m.startswith("initial state: assembly") for m in job.messages)
    assert run_messages({"warnings": ["w1"]}) == ["w1"]


def test_states_are_documented():
    assert STATES == ("idle", "running", "done", "failed", "cancelled")
