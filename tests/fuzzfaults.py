"""The fault stage of the fuzz campaign (issue 33): the command line's ``run`` (and ``study``)
killed, interrupted and starved of disk, as real processes on a real file system.

:func:`fault_trials` runs ``python3 -m MultibodyWB.solver run`` (and ``study --serial``) on
models with and without the new elements and:

- sends SIGKILL, SIGINT or SIGTERM at a random moment from the start of the process to a little
  after its usual end (libraries loading, the model read, the run, the results written): the
  results file must then be the previous one (byte for byte) or the complete new one (every row
  of the run), never a part of either; SIGINT must end with exit 130, SIGTERM with 143 (or 0 when
  the command had finished), with one line on stderr besides the progress bar and no traceback;
- writes into a 1 MB tmpfs more or less filled beforehand (a full disk): exit 0 with the complete
  file, or exit 2 with a message naming the file, the previous file intact, no temporary file
  left;
- writes into a read-only tmpfs (a previous file there, the file system remounted read-only):
  exit 2 naming the file before the run, the previous file intact.

Mounting a tmpfs needs root (CI's container and this machine run as root); where it is not
permitted the disk trials are skipped and the reason is returned.

Each trial gives a :class:`Trial`: what was done, the verdict (``ok`` or what went wrong) and
the exit code, the stderr's lines and the seconds it took.
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable

#: Models of the kill trials (by example name) and the end time that makes a run of a few
#: seconds on a loaded 2-core machine.
KILL_MODELS = {"double_pendulum": "10", "bouncing_balls": "0.05", "gear_train": "1",
               "cam_valve": "0.06"}
SIGNALS = {"SIGKILL": signal.SIGKILL, "SIGINT": signal.SIGINT, "SIGTERM": signal.SIGTERM}
EXIT_OF = {"SIGINT": 130, "SIGTERM": 143}


@dataclass
class Trial:
    what: str
    verdict: str                # "ok", or what went wrong
    code: int | None
    err: str
    seconds: float


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _catches_sigterm(pid) -> bool:
    """Whether process ``pid`` has a SIGTERM handler installed (Linux: SigCgt in /proc)."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("SigCgt:"):
                    return bool(int(line.split()[1], 16) & (1 << (signal.SIGTERM - 1)))
    except OSError:
        pass
    return False


def _cli(args, signal_at=None, sig=None, timeout=300.0):
    """Run the solver's command line; send ``sig`` after ``signal_at`` s. (exit code, stderr,
    seconds); exit code ``None`` for a command that did not end in ``timeout`` s."""
    t0 = time.perf_counter()
    p = subprocess.Popen([PYTHON, "-m", "MultibodyWB.solver", *args], env=_env(),
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if signal_at is not None:
        if sig != signal.SIGKILL:
            # Ctrl-C and SIGTERM count from the moment the command's own handler is installed
            # (the first thing ``python3 -m MultibodyWB.solver`` does): before it, in the
            # interpreter's start-up, no program can answer a signal with one line
            deadline = time.time() + 60
            while (not _catches_sigterm(p.pid) and p.poll() is None
                   and time.time() < deadline):
                time.sleep(0.002)
        try:
            p.wait(signal_at)
        except subprocess.TimeoutExpired:
            p.send_signal(sig)
    try:
        _, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        _, err = p.communicate()
        return None, err, time.perf_counter() - t0
    return p.returncode, err, time.perf_counter() - t0


def _lines(err):
    """stderr's lines besides the progress bars."""
    return [ln for ln in err.splitlines()
            if ln.strip() and not ln.startswith(("simulating", "study"))]


def _rows(path):
    """The rows of a results file or a study table read whole (raises on a partial file)."""
    if path.endswith(".npz"):
        from MultibodyWB.solver.results.table import Results
        return len(Results.from_npz(path))
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    if not text.endswith("\n"):
        raise ValueError("the file does not end with a whole line")
    if path.endswith("study.csv"):
        import csv
        rows = list(csv.reader(text.splitlines()))
        if any(len(r) != len(rows[0]) for r in rows):
            raise ValueError("a row of another width")
        return len(rows) - 1
    from MultibodyWB.solver.results.table import Results
    return len(Results.from_csv(path))


def _leftovers(folder, name):
    """Files in ``folder`` besides ``name`` that are not a killed writer's temporary file
    (``.name.<pid>.part``: removed by the next write)."""
    return [f for f in os.listdir(folder)
            if f != name and not (f.startswith(f".{name}.") and f.endswith(".part"))]


def kill_trials(work, models, count, rng, timeout):
    """``count`` runs (and studies, when ``models`` has the quarter car) killed with SIGKILL,
    SIGINT or SIGTERM at random moments."""
    trials = []
    plans = []
    for name in [n for n in KILL_MODELS if n in models]:
        path = models[name]
        for ext in ("npz", "csv"):
            out = os.path.join(work, f"{name}.{ext}")
            args = ["run", path, "--t-end", KILL_MODELS[name], "--output-step", "1e-3",
                    "--out", out]
            plans.append((f"run {name} -> .{ext}", args, out))
    study_out = os.path.join(work, "study.csv")
    plans.append(() if "quarter_car" not in models else ("study quarter_car (8 variants, serial)",
                  ["study", models["quarter_car"], "--param", "Suspension.Stiffness=1e4:6e4:8",
                   "--objective", "rms(Hull.az)", "--t-end", "0.2", "--serial",
                   "--out", study_out], study_out))
    plans = [p for p in plans if p]
    # each plan once whole: its duration, the rows of a complete file, the previous file
    full = {}
    for what, args, out in plans:
        code, err, took = _cli(args, timeout=timeout)
        if code != 0:
            trials.append(Trial(f"{what}, whole", f"exit {code}", code, err[-600:], took))
            continue
        full[what] = (took, _rows(out))
    signals = (list(SIGNALS) * (count // len(SIGNALS) + 1))[:count]
    rng.shuffle(signals)                     # as many of each signal, in a random order
    for k in range(count):
        what, args, out = plans[k % len(plans)]
        if what not in full:
            continue
        took, rows = full[what]
        sig = signals[k]
        at = rng.uniform(0.0, 1.15 * took)
        before = open(out, "rb").read()
        code, err, secs = _cli(args, signal_at=at, sig=SIGNALS[sig], timeout=timeout)
        label = f"{what}: {sig} at {at:.2f} s of {took:.1f}"
        problems = []
        if code is None:
            problems.append("hang")
        try:
            after = open(out, "rb").read()
            if after != before:
                n = _rows(out)
                # a study stopped by Ctrl-C or SIGTERM writes the rows that finished (whole)
                stopped_study = what.startswith("study") and code in (130, 143)
                if n != rows and not stopped_study:
                    problems.append(f"a new file of {n} rows, the whole run has {rows}")
        except Exception as exc:        # noqa: BLE001 - a partial file
            problems.append(f"a partial file: {type(exc).__name__}: {exc}")
        if "Traceback" in err or "internal error" in err:
            problems.append("a traceback")
        if sig != "SIGKILL" and code is not None:
            lines = _lines(err)
            if code in (0, 3):           # 3: a run its own checks call untrusted
                pass                     # the command had ended before the signal
            elif code != EXIT_OF[sig]:
                problems.append(f"exit {code}, not {EXIT_OF[sig]}")
            elif len(lines) != 1 or not lines[0].startswith("interrupted ("):
                problems.append(f"stderr is not one line 'interrupted (...)': {lines[:4]}")
        # the other commands' files, and a killed writer's temporary file of any of them (the
        # next write of that file removes it) are not this trial's leftovers
        left = [f for f in _leftovers(work, os.path.basename(out))
                if not f.endswith((".mbs.xml", ".npz", ".csv"))
                and not (f.startswith(".") and f.endswith(".part"))]
        if left:
            problems.append(f"files left: {left}")
        trials.append(Trial(label, "; ".join(problems) or "ok", code, err[-600:], secs))
    return trials


@contextlib.contextmanager
def tmpfs(path, size="1m"):
    """A tmpfs of ``size`` mounted at ``path`` (a new folder); yields None where mounting is not
    permitted (the reason in ``tmpfs.reason``)."""
    os.makedirs(path)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", path],
                       capture_output=True, text=True)
    if r.returncode != 0:
        tmpfs.reason = r.stderr.strip() or f"mount exit {r.returncode}"
        yield None
        return
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", path], capture_output=True)


tmpfs.reason = ""


def disk_trials(work, models, count, rng, timeout):
    """``count`` runs into a 1 MB tmpfs filled to a random level first (full-disk trials), and
    ``count // 2`` into a read-only one holding a previous file."""
    trials = []
    names = list(models)
    with tmpfs(os.path.join(work, "small")) as small:
        if small is None:
            return trials, f"full disk not tried: cannot mount a tmpfs ({tmpfs.reason})"
        for k in range(count):
            name = names[k % len(names)]
            ext = "npz" if k % 2 else "csv"
            out = os.path.join(small, f"r.{ext}")
            for f in os.listdir(small):
                os.remove(os.path.join(small, f))
            with open(out, "w") as fh:
                fh.write("the previous results\n")
            free = rng.choice([0, 4_000, 40_000, 200_000, 600_000, 900_000])
            filler = max(0, shutil.disk_usage(small).free - free - 8192)
            with contextlib.suppress(OSError), open(os.path.join(small, "filler"), "wb") as fh:
                fh.write(b"\0" * filler)
            # results of a few kB to tens of MB: some fit, some are refused by the estimate
            # before the run, some pass it and fill the disk while they are written
            t_end = f"{float(KILL_MODELS[name]) * rng.choice([0.05, 0.3, 1.0]):g}"
            dt = rng.choice(["1e-3", "1e-4"])
            args = ["run", models[name], "--t-end", t_end, "--output-step", dt, "--out", out]
            code, err, secs = _cli(args, timeout=timeout)
            label = (f"run {name} --t-end {t_end} --output-step {dt} -> .{ext} on a 1 MB tmpfs "
                     f"with about {free // 1000} kB free")
            problems = []
            if code is None:
                problems.append("hang")
            elif code in (0, 3):             # 3: a run its own checks call untrusted
                try:
                    _rows(out)
                except Exception as exc:     # noqa: BLE001
                    problems.append(f"exit {code} and a partial file: {exc}")
            elif code == 2:
                if out not in err:
                    problems.append(f"the message does not name {out}: {_lines(err)[:3]}")
                if open(out).read() != "the previous results\n":
                    problems.append("the previous file is gone")
            else:
                problems.append(f"exit {code}")
            if "Traceback" in err or "internal error" in err:
                problems.append("a traceback")
            left = [f for f in _leftovers(small, f"r.{ext}") if f != "filler"]
            if left:
                problems.append(f"files left: {left}")
            trials.append(Trial(label, "; ".join(problems) or "ok", code, err[-600:], secs))
    ro = os.path.join(work, "ro")
    with tmpfs(ro) as folder:
        if folder is None:
            return trials, f"read-only folder not tried: cannot mount a tmpfs ({tmpfs.reason})"
        for ext in ("npz", "csv"):
            with open(os.path.join(folder, f"r.{ext}"), "w") as fh:
                fh.write("the previous results\n")
        subprocess.run(["mount", "-o", "remount,ro", folder], check=True, capture_output=True)
        for k in range(max(2, count // 2)):
            name = names[k % len(names)]
            ext = "npz" if k % 2 else "csv"
            out = os.path.join(folder, f"r.{ext}")
            new = os.path.join(folder, f"new{k}.{ext}")
            target = out if rng.random() < 0.5 else new
            args = ["run", models[name], "--t-end", "200", "--out", target]
            code, err, secs = _cli(args, timeout=timeout)
            label = f"run {name} --t-end 200 -> a read-only tmpfs ({os.path.basename(target)})"
            problems = []
            if code != 2:
                problems.append(f"exit {code}, not 2")
            if target not in err or "writ" not in err:
                problems.append(f"the message does not say {target} cannot be written: "
                                f"{_lines(err)[:3]}")
            if secs > 60:
                problems.append(f"refused after {secs:.0f} s (a run of 200 s was started?)")
            if "Traceback" in err or "internal error" in err:
                problems.append("a traceback")
            with open(out) as fh:
                if fh.read() != "the previous results\n":
                    problems.append("the previous file changed")
            trials.append(Trial(label, "; ".join(problems) or "ok", code, err[-600:], secs))
    return trials, ""


def fault_trials(seed: int, kills: int, disks: int, timeout: float = 300.0, log=None,
                 names=None):
    """The kill trials and the disk trials (:func:`kill_trials`, :func:`disk_trials`) on the
    examples ``names`` (default: :data:`KILL_MODELS` and the quarter car's study):
    (trials, note on what was not tried)."""
    from MultibodyWB.solver.cli import main
    rng = random.Random(seed)
    work = tempfile.mkdtemp(prefix="mbwb-faults-")
    try:
        models = {}
        for name in names or list(KILL_MODELS) + ["quarter_car"]:
            path = os.path.join(work, f"{name}.mbs.xml")
            with open(os.devnull, "w") as null:
                assert main(["example", name, "-o", path], out=null) == 0
            models[name] = path
        trials = kill_trials(work, models, kills, rng, timeout)
        if log:
            log(trials)
        disk, note = disk_trials(work, {n: models[n] for n in KILL_MODELS if n in models},
                                 disks, rng, timeout)
        trials += disk
        return trials, note
    finally:
        for sub in ("small", "ro"):
            subprocess.run(["umount", "-l", os.path.join(work, sub)], capture_output=True)
        shutil.rmtree(work, ignore_errors=True)
