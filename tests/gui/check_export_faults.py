"""GUI check run inside FreeCAD: the plot dock's "Export CSV..." and "Export PNG..." write their
files complete or not at all (issue 33).

Simulates the double pendulum (20 s every 1 ms: 20,001 rows), shows it in the plot dock, exports
through the buttons (the save dialog answered with the path, as a user picks it), then kills
writers at random moments: 24 times a forked copy of this FreeCAD process starts the same export
(the columns ticked alternate between two sets, so that the old and the new file differ) and is
killed with SIGKILL after a random part of the export's duration. After each kill the file must be
one of the two complete exports, the previous one or the new one. Then the same with a full disk
(a 1 MB tmpfs, where this process may mount one): the export fails with a message naming the
file, and the previous file is intact.

Started by tests/test_gui_export_faults.py through ``freecad_env.run_freecad_gui``.
"""

import contextlib
import os
import random
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import FreeCAD  # noqa: E402,F401
import FreeCADGui  # noqa: E402,F401
import in_freecad  # noqa: E402

A = ["Lower.x", "Lower.z", "Shoulder.rz", "Elbow.rz_rate"]
B = ["Upper.x", "Upper.z", "Shoulder.Fz", "energy.total", "Elbow.Fx"]


def out(name):
    return os.path.join(in_freecad.output_dir(), name)


def forked(panel, path, kill_after):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            os.close(r)
            os.write(w, b"r")
            panel.export_csv(path)
        except BaseException:
            code = 1
        os._exit(code)
    os.close(w)
    os.read(r, 1)
    os.close(r)
    time.sleep(kill_after)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)


def check():
    from MultibodyWB import examples
    from MultibodyWB.gui import plot_panel
    from MultibodyWB.gui.qt import QtWidgets
    from MultibodyWB.solver.run.simulate import simulate
    result = {}
    res = simulate(examples.build("double_pendulum"), t_end=20.0, output_step=1e-3)
    panel = plot_panel.show_plot_dock([("rk4", res)], A)
    in_freecad.process_events()
    target = out("values.csv")
    picked = {"path": target}
    QtWidgets.QFileDialog.getSaveFileName = staticmethod(
        lambda *a, **k: (picked["path"], "CSV (*.csv)"))
    warnings = []
    QtWidgets.QMessageBox.warning = staticmethod(lambda *a, **k: warnings.append(a[2]))

    # the button, as a user presses it: the reference exports of both column sets
    contents = {}
    for name, columns in (("A", A), ("B", B)):
        panel.select(columns)
        t0 = time.perf_counter()
        panel.csv_button.click()
        result[f"duration_{name}"] = time.perf_counter() - t0
        with open(target, "rb") as fh:
            contents[name] = fh.read()
    result["sizes"] = {k: len(v) for k, v in contents.items()}
    duration = min(result["duration_A"], result["duration_B"])

    rng = random.Random(33)
    current, outcomes, bad = "B", [], []
    for trial in range(24):
        new = "A" if current == "B" else "B"
        panel.select(A if new == "A" else B)
        forked(panel, target, rng.uniform(0.0, 1.3 * duration))
        with open(target, "rb") as fh:
            got = fh.read()
        which = [k for k, v in contents.items() if v == got]
        if not which or which[0] not in (current, new):
            bad.append((trial, len(got)))
            continue
        outcomes.append("new" if which[0] == new else "old")
        current = which[0]
    result["kill_outcomes"] = outcomes
    result["kill_bad"] = bad
    panel.select(A)
    panel.csv_button.click()                     # cleans up after the killed writers
    result["files_after"] = sorted(os.listdir(os.path.dirname(target)))

    # PNG through its button too
    picked["path"] = out("plot.png")
    panel.png_button.click()
    with open(picked["path"], "rb") as fh:
        result["png_magic"] = fh.read(8).hex()

    # a full disk: a 1 MB tmpfs
    small = out("small")
    os.makedirs(small, exist_ok=True)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", small],
                             capture_output=True, text=True)
    result["mounted"] = mounted.returncode == 0
    if result["mounted"]:
        try:
            picked["path"] = os.path.join(small, "values.csv")
            panel.select(A[:1])
            panel.csv_button.click()             # small: fits
            with open(picked["path"], "rb") as fh:
                before = fh.read()
            panel.select(A + B)
            warnings.clear()
            panel.csv_button.click()             # 20,001 rows x 10 columns: does not fit
            with open(picked["path"], "rb") as fh:
                result["full_disk_kept"] = fh.read() == before
            result["full_disk_warnings"] = list(warnings)
            result["full_disk_files"] = sorted(os.listdir(small))
        finally:
            subprocess.run(["umount", "-l", small], capture_output=True)
    return result


in_freecad.run_and_quit(check, watchdog_s=300)
