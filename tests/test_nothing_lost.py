"""Nothing lost, nothing silently wrong (issue 33): files appear complete or not at all, an
earlier file survives any failure, Ctrl-C and SIGTERM end every command with one line, a run
whose results are not finite is never a success, the study command checks its own arguments.

The fault tests kill real processes (SIGKILL at random moments while a file is written, SIGINT
and SIGTERM while a command runs) and fill a real file system (a 1 MB tmpfs, mounted where the
machine lets this process mount one, as CI's root does; skipped with the reason elsewhere).
"""

from __future__ import annotations

import contextlib
import errno
import os
import random
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from fuzzfaults import _catches_sigterm
from MultibodyWB.solver.cli import main
from MultibodyWB.solver.model import files
from MultibodyWB.solver.model.files import FileWriteError, atomic_write, check_writable
from MultibodyWB.solver.results.table import Results

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _results(rows=2000, cols=40, seed=0):
    rng = np.random.default_rng(seed)
    names = ["time"] + [f"B{k}.x" for k in range(cols - 1)]
    data = rng.standard_normal((rows, cols))
    data[:, 0] = np.arange(rows) * 1e-3
    return Results(names, data, meta={"seed": seed})


# -- atomic_write ------------------------------------------------------------------------------

def test_failed_write_keeps_the_previous_file(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("previous\n")

    class Boom(Exception):
        pass
    with pytest.raises(Boom):
        with atomic_write(path, "w") as fh:
            fh.write("half a file")
            raise Boom()
    assert path.read_text() == "previous\n"
    assert os.listdir(tmp_path) == ["r.csv"]          # no temporary file left


def test_ctrl_c_while_writing_keeps_the_previous_file(tmp_path):
    path = tmp_path / "r.npz"
    _results(seed=1).save(path)
    before = path.read_bytes()
    res = _results(seed=2)

    calls = []

    def interrupting_write(member, array, **kw):
        calls.append(1)
        if len(calls) == 2:                  # the second array: part of the archive written
            raise KeyboardInterrupt()
        return real(member, array, **kw)
    real = np.lib.format.write_array
    np.lib.format.write_array = interrupting_write
    try:
        with pytest.raises(KeyboardInterrupt):
            res.save(path)
    finally:
        np.lib.format.write_array = real
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["r.npz"]


def test_complete_write_replaces_and_keeps_permissions(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("old")
    os.chmod(path, 0o640)
    res = _results(rows=5, cols=3)
    res.save(path)
    back = Results.from_csv(path)
    assert np.array_equal(back.data, res.data)
    assert os.stat(path).st_mode & 0o777 == 0o640


def test_a_killed_writers_temporary_file_is_removed_by_the_next_write(tmp_path):
    path = tmp_path / "r.csv"
    dead = subprocess.Popen([PYTHON, "-c", "pass"])
    dead.wait()
    stale = tmp_path / f".r.csv.{dead.pid}.part"
    stale.write_text("half")
    alive = tmp_path / f".r.csv.{os.getppid()}.part"      # a writer that still runs: kept
    alive.write_text("busy")
    _results(rows=3, cols=2).save(path)
    assert not stale.exists()
    assert alive.exists()


def test_output_folder_checked_before_the_run(tmp_path, capsys):
    """A results path in a missing folder is refused before anything is simulated."""
    model = tmp_path / "dp.mbs.xml"
    assert main(["example", "double_pendulum", "-o", str(model)]) == 0
    out = tmp_path / "missing" / "dp.csv"
    t0 = time.perf_counter()
    code = main(["run", str(model), "--t-end", "200", "--step", "1e-4", "--out", str(out)])
    wall = time.perf_counter() - t0
    err = capsys.readouterr().err
    assert code == 2
    assert str(out) in err and "folder does not exist" in err, err
    assert "simulating" not in err              # no progress bar: the run never started
    assert wall < 5.0                             # 2e6 steps would take far longer


def test_check_writable_says_a_full_disk_before_the_run(tmp_path, monkeypatch):
    class Usage:
        free = 10_000
    monkeypatch.setattr(files.shutil, "disk_usage", lambda folder: Usage())
    with pytest.raises(FileWriteError) as info:
        check_writable(tmp_path / "r.csv", 5_000_000)
    assert "r.csv" in str(info.value) and "5 MB" in str(info.value) and "10 kB" in str(info.value)
    check_writable(tmp_path / "r.csv", 0)         # no estimate: only the folder is looked at


# -- SIGKILL at random moments while a file is written -----------------------------------------

def _results_seeded(kind, seed):
    rng = np.random.default_rng(seed)
    data = rng.standard_normal((6000 if kind == "csv" else 20000, 40))
    data[:, 0] = seed
    return Results(["time"] + [f"B{k}.x" for k in range(39)], data)


def _study_table_seeded(seed):
    """A design study's table of 3000 rows (what the study command writes)."""
    from MultibodyWB.solver.study import Study, parse_parameter
    from MultibodyWB.solver.study.study import StudyTable
    from MultibodyWB.solver.study.variant import OK, VariantResult
    study = Study([parse_parameter("Spring.Stiffness=1:2:3")], ["rms(Hull.az)"], [], "grid")
    table = StudyTable(study, ["N/m"])
    for k in range(3000):
        r = VariantResult(k, (float(seed),), OK, "")
        r.objectives, r.constraints, r.margins, r.wall = (k * 1e-3,), (), (), 0.01
        table.rows.append(r)
    return table


def _write(kind, path, seed):
    if kind == "table":
        _study_table_seeded(seed).to_csv(path)
    else:
        _results_seeded(kind, seed).save(path)


def _forked_write(kind, path, seed, kill_after=None):
    """Write in a forked child (everything loaded once, in this process); SIGKILL it
    ``kill_after`` seconds into the write. Returns the write's duration when not killed."""
    ready_r, ready_w = os.pipe()
    pid = os.fork()
    if pid == 0:                                     # the child: write, then leave at once
        code = 0
        try:
            os.close(ready_r)
            os.write(ready_w, b"r")
            _write(kind, path, seed)
        except BaseException:
            code = 1
        os._exit(code)
    os.close(ready_w)
    assert os.read(ready_r, 1) == b"r"
    os.close(ready_r)
    t0 = time.perf_counter()
    if kill_after is not None:
        time.sleep(kill_after)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    if kill_after is None:
        assert os.waitstatus_to_exitcode(status) == 0
        return time.perf_counter() - t0
    return None


def _seed_of(kind, path):
    if kind == "csv":
        return int(Results.from_csv(path).data[0, 0])
    if kind == "npz":
        return int(Results.from_npz(path).data[0, 0])
    import csv as _csv
    with open(path, newline="") as fh:
        rows = list(_csv.reader(fh))
    assert len(rows) == 3001 and rows[-1][0] == "2999", len(rows)     # header + every row
    return int(float(rows[1][1]))


@pytest.mark.parametrize("kind", ["csv", "npz", "table"])
def test_sigkill_during_the_write_leaves_old_or_new_never_partial(tmp_path, kind):
    """24 kills at random moments of the write (results CSV and NPZ as ``run`` writes them,
    the study's table as ``study`` writes it): the file is always complete, either the previous
    one or the new one (both outcomes seen), never a part of either."""
    path = tmp_path / f"out.{'csv' if kind == 'table' else kind}"
    duration = _forked_write(kind, path, 0)
    assert _seed_of(kind, path) == 0
    rng = random.Random(33)
    current, outcomes = 0, set()
    for trial in range(1, 25):
        _forked_write(kind, path, trial, kill_after=rng.uniform(0.0, 1.3 * duration))
        got = _seed_of(kind, path)          # fails on a partial file
        assert got in (current, trial), (trial, got, current)
        outcomes.add("new" if got == trial else "old")
        current = got
    assert outcomes == {"old", "new"}, outcomes
    leftovers = [f for f in os.listdir(tmp_path) if f != path.name]
    # a killed writer's temporary file may stay until the next write, beside the results
    assert all(f.startswith(f".{path.name}.") and f.endswith(".part") for f in leftovers)
    _write(kind, path, 99)                  # the next write cleans up after the killed ones
    assert os.listdir(tmp_path) == [path.name]


def test_sigkill_during_a_run_command_keeps_the_previous_results(tmp_path, long_model):
    """The same through the command line: ``run`` killed at random moments."""
    out = tmp_path / "dp.npz"
    assert main(["run", str(long_model), "--t-end", "1", "--out", str(out)]) == 0
    before = out.read_bytes()
    rng = random.Random(7)
    for _ in range(3):
        p = subprocess.Popen([PYTHON, "-m", "MultibodyWB.solver", "run", str(long_model),
                              "--t-end", "60", "--output-step", "1e-3", "--out", str(out)],
                             env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.5, 3.0))
        p.send_signal(signal.SIGKILL)
        p.wait(60)
        after = out.read_bytes()
        assert after == before or len(Results.from_npz(out)) == 60001
        before = after


# -- Ctrl-C and SIGTERM: one line, exit 130 or 143 ---------------------------------------------

def _cli(*args, signal_at=None, sig=signal.SIGINT, cwd=None):
    """Run the command line; ``signal_at`` seconds after it has started (its SIGTERM handler is
    installed, the first thing ``python3 -m MultibodyWB.solver`` does), send ``sig``."""
    p = subprocess.Popen([PYTHON, "-m", "MultibodyWB.solver", *args], env=_env(), cwd=cwd,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if signal_at is not None:
        deadline = time.time() + 60
        while not _catches_sigterm(p.pid) and p.poll() is None and time.time() < deadline:
            time.sleep(0.002)
        time.sleep(signal_at)
        p.send_signal(sig)
    out, err = p.communicate(timeout=300)
    return p.returncode, out, err


@pytest.fixture(scope="module")
def long_model(tmp_path_factory):
    d = tmp_path_factory.mktemp("long")
    path = d / "dp.mbs.xml"
    assert main(["example", "double_pendulum", "-o", str(path)]) == 0
    return path


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_during_run_ends_with_one_line_and_keeps_the_file(tmp_path, long_model, sig,
                                                                   code):
    out = tmp_path / "dp.csv"
    out.write_text("the previous results\n")
    rng = random.Random(int(sig))
    for at in (0.0, rng.uniform(0.3, 1.2), rng.uniform(1.5, 3.0)):
        rc, _stdout, err = _cli("run", str(long_model), "--t-end", "2000", "--out", str(out),
                                signal_at=at, sig=sig)
        assert rc == code, (at, rc, err)
        assert "Traceback" not in err, err
        lines = [ln for ln in err.splitlines() if ln.strip() and not ln.startswith("simulating")]
        assert len(lines) == 1 and lines[0].startswith("interrupted ("), err
        assert out.read_text() == "the previous results\n"


def test_ctrl_c_during_check_of_a_big_model(tmp_path):
    """check of a 5000-body chain takes a few seconds: Ctrl-C in it gives one line, exit 130."""
    from MultibodyWB.examples.chain import build
    from MultibodyWB.solver.model import xmlio
    path = tmp_path / "chain.mbs.xml"
    xmlio.write(build(5000), path)
    interrupted = 0
    for at in (0.3, 1.0, 2.0):
        rc, _out, err = _cli("check", str(path), signal_at=at)
        assert "Traceback" not in err, err
        if rc == 0:                      # finished before the signal
            continue
        assert rc == 130, err
        assert err.strip().startswith("interrupted (Ctrl-C)") and len(err.strip().splitlines()) == 1, err
        interrupted += 1
    assert interrupted >= 2


# -- a full disk and a read-only folder (a real file system) -----------------------------------

@contextlib.contextmanager
def _tmpfs(path, size="1m", readonly=False):
    path.mkdir()
    opts = f"size={size}" + (",ro" if readonly else "")
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", opts, "tmpfs", str(path)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({r.stderr.strip() or r.returncode}): the "
                    "full-disk test needs root (CI runs as root)")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True)


@pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")
def test_full_disk_names_the_file_and_keeps_the_previous_one(tmp_path, capsys):
    with _tmpfs(tmp_path / "small") as small:
        out = small / "r.npz"
        prev = _results(rows=200, cols=10, seed=5)
        prev.save(out)
        before = out.read_bytes()
        big = _results(rows=20000, cols=40, seed=6)      # 6.4 MB: cannot fit in 1 MB
        with pytest.raises(FileWriteError) as info:
            big.save(out)
        assert info.value.errno == errno.ENOSPC
        assert str(out) in str(info.value) and "no space" in str(info.value)
        assert out.read_bytes() == before
        assert sorted(os.listdir(small)) == ["r.npz"]


@pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")
def test_full_disk_through_the_cli(tmp_path, long_model, capsys):
    """run refuses at once when its results cannot fit (before simulating)."""
    with _tmpfs(tmp_path / "small") as small:
        out = small / "dp.csv"
        out.write_text("previous\n")
        code = main(["run", str(long_model), "--t-end", "50", "--output-step", "1e-4",
                     "--out", str(out)])
        err = capsys.readouterr().err
        assert code == 2
        assert str(out) in err and "free" in err and "Traceback" not in err, err
        assert out.read_text() == "previous\n"


def test_read_only_folder_refused_before_the_run(tmp_path, long_model, capsys):
    with _tmpfs(tmp_path / "ro", readonly=True) as ro:
        out = ro / "dp.npz"
        code = main(["run", str(long_model), "--t-end", "200", "--out", str(out)])
        err = capsys.readouterr().err
        assert code == 2
        assert str(out) in err and "does not allow writing" in err, err


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_during_a_study_writes_the_finished_rows_and_ends_in_one_line(tmp_path, sig,
                                                                                 code):
    model = tmp_path / "qc.mbs.xml"
    assert main(["example", "quarter_car", "-o", str(model)]) == 0
    table = tmp_path / "s.csv"
    table.write_text("previous table\n")
    p = subprocess.Popen([PYTHON, "-m", "MultibodyWB.solver", "study", str(model),
                          "--param", "Suspension.Stiffness=1e4:6e4:1000", "--objective",
                          "rms(Hull.az)", "--t-end", "1.5", "--serial", "--out", str(table)],
                         env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while not _catches_sigterm(p.pid) and p.poll() is None and time.time() < deadline:
        time.sleep(0.01)
    time.sleep(20.0)                  # the kernels loaded and some variants run, not all 1000
    p.send_signal(sig)
    out, err = p.communicate(timeout=120)
    assert p.returncode == code, (out, err)
    assert "Traceback" not in err, err
    last = [ln for ln in err.splitlines() if ln.strip()][-1]
    assert last.startswith("interrupted (") and "finished variants' rows are written" in last
    import csv as _csv
    with open(table, newline="") as fh:
        rows = list(_csv.reader(fh))
    statuses = {r[rows[0].index("status")] for r in rows[1:]}
    assert len(rows) - 1 == 1000 and "ok" in statuses and "cancelled" in statuses, statuses
