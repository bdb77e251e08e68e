"""Command line of the solver package: ``python3 -m MultibodyWB.solver COMMAND ...``.

Commands:
  check MODEL.xml             validate; print a summary; exit 0 if valid, 2 with every problem
  topology MODEL.xml -o F     write the topology figure (.svg, .png, .pdf or .dot by extension)
  example NAME -o MODEL.xml   write a built-in example model
  examples                    list the built-in examples
  equation MODEL.xml [--t T]  print the overall transfer equation (MSTMM): transfer paths,
                              block structure, order and numbers of the overall transfer matrix;
                              closed loops: the cut hinges' boundary pairs, supplementary rows
  run MODEL.xml [--method M] [--t-end T] [--step H] [--integrator I] [--out F.csv|F.npz]
                              simulate; progress bar on the terminal, summary at the end
  warmup [--force]            compile the solver's kernels now (the set-up command does it)
  study MODEL.xml --param PATH=LOW:HIGH:LEVELS --objective EXPR [--constraint C]
        [--method grid|lhs|sobol|nelder-mead|powell|de] [--scheduler tcp://host:8786]
        --out study.csv       a design study: sweeps or optimisation of the model's parameters,
                              its variants run in parallel on Dask (:mod:`.study`)

Exit codes: 0 success, 2 invalid model or bad input (every problem listed), 1 internal error,
3 untrusted: the run finished but its own checks say not to trust it (the energy balance does
not close: :attr:`.results.table.Results.untrusted`); its results are written all the same (they
show what went wrong) and one line on stderr names the check. ``study`` exits 3 when any variant
was untrusted (such a variant is a row with the status ``untrusted``, its objectives not used
for the best variant or by the optimisers; the table is written). 130 and 143: interrupted by
Ctrl-C or SIGTERM.
Never a traceback: an unexpected error is reported on one line and with exit code 1.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import math
import os
import sys
import time as _time
from types import SimpleNamespace

import numpy as np

EXIT_OK, EXIT_INTERNAL, EXIT_INVALID = 0, 1, 2
#: A run (or a study's variant) that finished but that its own checks say not to trust.
EXIT_UNTRUSTED = 3
#: Most problems listed by ``check`` and ``run`` (the rest are counted).
MAX_PROBLEMS = 100
#: Most bodies, hinges, forces or loops listed one per line by the summary (the rest are counted).
SUMMARY_ROWS = 40
#: Longest line of a problem or of the summary; longer ones are cut in the middle (a value the
#: user wrote echoed at length; the solver's own messages, which compare a loop's values with
#: ten digits and units, three pairs of them for a spherical cut hinge, fit).
MAX_LINE = 2000


class CliError(Exception):
    """Bad input from the user: the message is printed and the exit code is 2."""


def _load(path: str):
    from .model import xmlio
    if not os.path.isfile(path):
        raise CliError(f"{path}: no such file")
    model, problems = xmlio.read_with_problems(path)
    return model, problems


def _cut(line: str, limit: int = MAX_LINE) -> str:
    """``line`` cut in the middle to at most ``limit`` characters (long values echoed)."""
    if len(line) <= limit:
        return line
    keep = limit - 5
    return f"{line[:keep - keep // 3]} ... {line[len(line) - keep // 3:]}"


def _print_problems(path, problems, out, what="the model is not valid"):
    n = len(problems)
    print(f"{path}: {n} problem{'s' if n != 1 else ''}, {what}:", file=out)
    for p in problems[:MAX_PROBLEMS]:
        print(_cut(f"  - {p}"), file=out)
    if n > MAX_PROBLEMS:
        print(f"  ... and {n - MAX_PROBLEMS} more problem{'s' if n - MAX_PROBLEMS != 1 else ''}",
              file=out)


def _rows(lines, items, row, what):
    """Append ``row(item)`` for the first :data:`SUMMARY_ROWS` items, then a count of the rest."""
    for item in items[:SUMMARY_ROWS]:
        lines.append(row(item))
    if len(items) > SUMMARY_ROWS:
        lines.append(f"    ... and {len(items) - SUMMARY_ROWS} more {what}")


def _short_list(words, limit=SUMMARY_ROWS) -> str:
    words = list(words)
    more = f", ... ({len(words) - limit} more)" if len(words) > limit else ""
    return ", ".join(words[:limit]) + more


def summary(model, topo=None, mob=None) -> str:
    """A readable summary of a valid model: parts, hinges, forces, numbering, DOF, loops."""
    from .analysis.kinematics import mobility
    from .analysis.topology import analyse
    topo = topo or analyse(model)
    if mob is None and topo.loop_constraints == 0:   # a tree: no loop Jacobian to take a rank of
        mob = SimpleNamespace(rank=0, dof=topo.tree_coordinates, redundant=0,
                              redundant_constraints=())
    mob = mob or mobility(model, topo)
    lines = [f"Model '{model.name}'" + (f": {model.description}" if model.description else "")]
    g = model.ground
    lines.append(f"  ground   {g.name}" + (f" ({g.label})" if g.label else "")
                 + f", {len(g.markers)} marker(s)")
    lines.append(f"  bodies   {len(model.bodies)}, {sum(b.mass for b in model.bodies):.6g} kg "
                 "in all")
    _rows(lines, model.bodies, lambda b: f"    {topo.number.get(b.name, '-'):>3}  {b.name:<16} "
                                         f"{b.mass:.6g} kg, {len(b.markers)} marker(s)", "bodies")
    lines.append(f"  hinges   {len(model.hinges)}")

    loop_of = {lp.cut_hinge: i for i, lp in enumerate(topo.loops, 1)}

    def hinge_row(h):
        extra = []
        if h.name in loop_of:
            extra.append(f"cut: closes loop {loop_of[h.name]}")
        if h.name in topo.elastic_closures:
            extra.append("elastic closure")
        if h.drivers:
            extra.append("driven: " + ", ".join(d.coordinate for d in h.drivers))
        tail = f"  [{'; '.join(extra)}]" if extra else ""
        return (f"    {topo.number.get(h.name, '-'):>3}  {h.name:<16} {h.type:<12} "
                f"{h.input} -> {h.output}{tail}")

    _rows(lines, model.hinges, hinge_row, "hinges")
    lines.append(f"  forces   {len(model.forces)}")
    _rows(lines, model.forces,
          lambda f: f"         {f.name:<16} {f.type:<12} {f.input}"
                    + (f" -> {f.output}" if f.output else ""), "forces")
    lines.append("  gravity  " + ", ".join(f"{x:g}" for x in model.gravity) + " m/s^2")
    lines.append(f"  roots    {_short_list(_names(topo, topo.roots))};  tips "
                 f"{_short_list(_names(topo, topo.tips)) or '-'};  branch bodies "
                 f"{_short_list(_names(topo, topo.branch_bodies)) or '-'}")
    n_drv = sum(len(h.drivers) for h in model.hinges)
    lines.append(f"  DOF      Grubler-Kutzbach {topo.dof_gruebler}; tree coordinates "
                 f"{topo.tree_coordinates}, loop-closure constraints {topo.loop_constraints}, "
                 f"Jacobian rank {mob.rank}: mobility {mob.dof}"
                 + (f", {n_drv} driven: {mob.dof - n_drv} free" if n_drv else ""))
    if mob.redundant:
        lines.append(f"  redundant constraints: {mob.redundant} "
                     f"({'; '.join(mob.redundant_constraints)}); their reaction forces are not "
                     "unique")
    lines.append(f"  loops    {len(topo.loops)}")
    _rows(lines, list(enumerate(topo.loops, 1)),
          lambda il: f"    loop {il[0]}: cut hinge {il[1].cut_hinge} closes it: "
                     f"{' - '.join(il[1].path)}",
          "loops")
    if topo.elastic_closures:
        lines.append(f"  elastic closures (bushings acting as force elements): "
                     f"{_short_list(topo.elastic_closures)}")
    return "\n".join(_cut(line) for line in lines)


def _names(topo, names):
    return [f"{topo.number.get(n, '-')} {n}" for n in names]


@contextlib.contextmanager
def _without_cycle_collection():
    """Python's cycle collector paused (as it was after): reading a big model allocates objects
    by the hundred thousand, none in cycles that matter, and the collector's passes over them
    made checking superlinear (15-20 % of a 10,000-body check, 25 % of a 20,000-body one)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def cmd_check(args, out) -> int:
    with _without_cycle_collection():
        return _check(args, out)


def _check(args, out) -> int:
    from .model.problems import ModelError
    from .analysis.start import prepare
    model, problems = _load(args.model)
    if problems:
        _print_problems(args.model, problems, out)
        return EXIT_INVALID
    from .run.simulate import _settings
    from .analysis.topology import analyse
    try:
        # what run refuses, check reports first: the settings, then the start
        _settings(model, None, None, None, None, None)
        topo = analyse(model)
        _, start = prepare(model, args.accept_corrections, topo)
    except ModelError as exc:          # settings, a start that moves parts, an open loop
        _print_problems(args.model, exc.problems, out)
        return EXIT_INVALID
    print(f"{args.model}: valid", file=out)
    print(summary(model, topo), file=out)
    print(f"start: {start}", file=out)
    return EXIT_OK


def cmd_topology(args, out) -> int:
    from .analysis.figure import write_figure
    model, problems = _load(args.model)
    if problems:
        _print_problems(args.model, problems, out)
        return EXIT_INVALID
    ext = os.path.splitext(args.output)[1].lower()
    if ext not in (".svg", ".png", ".pdf", ".dot"):
        raise CliError(f"{args.output}: the figure's extension must be .svg, .png, .pdf or .dot")
    path = write_figure(model, args.output)
    print(f"topology figure written to {path}", file=out)
    return EXIT_OK


def cmd_example(args, out) -> int:
    from ..examples import EXAMPLES, build
    from .model import xmlio
    if args.name not in EXAMPLES:
        raise CliError(f"no example '{args.name}'; choose one of {', '.join(EXAMPLES)}")
    model = build(args.name)
    xmlio.write(model, args.output)
    print(f"example '{args.name}' written to {args.output}", file=out)
    return EXIT_OK


def cmd_warmup(args, out) -> int:
    from .run.warmup import is_warm, stamp_path, warm_up
    if is_warm() and not args.force:
        print(f"solver kernels ready (stamp {stamp_path()})", file=out)
        return EXIT_OK
    print("compiling the solver's kernels (once per installation: a few minutes)...", file=out,
          flush=True)
    if warm_up(force=args.force, out=out) == 0.0:   # another process's warm-up, waited for
        print(f"solver kernels ready, compiled by another warm-up (stamp {stamp_path()})",
              file=out)
    return EXIT_OK


def cmd_examples(args, out) -> int:
    from ..examples import EXAMPLES
    for name, (_, text) in EXAMPLES.items():
        print(f"  {name:<16} {text}", file=out)
    return EXIT_OK


def parser() -> argparse.ArgumentParser:
    """The argument parser of ``python3 -m MultibodyWB.solver``."""
    p = argparse.ArgumentParser(prog="python3 -m MultibodyWB.solver",
                                description="MultibodyWB solver: neutral multibody models "
                                            "(*.mbs.xml) from the command line.")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    c = sub.add_parser("check", help="validate a model and print its summary")
    c.add_argument("model", help="neutral model file (*.mbs.xml)")
    c.add_argument("--accept-corrections", action="store_true",
                   help="accept a start that moves parts away from the drawing (listed)")
    c.set_defaults(func=cmd_check)
    t = sub.add_parser("topology", help="draw the MSTMM topology figure")
    t.add_argument("model", help="neutral model file (*.mbs.xml)")
    t.add_argument("-o", "--output", required=True, help="figure file: .svg, .png, .pdf or .dot")
    t.set_defaults(func=cmd_topology)
    e = sub.add_parser("example", help="write a built-in example model")
    e.add_argument("name", help="example name (see 'examples')")
    e.add_argument("-o", "--output", required=True, help="model file to write")
    e.set_defaults(func=cmd_example)
    w = sub.add_parser("warmup", help="compile the solver's kernels ahead of the first run")
    w.add_argument("--force", action="store_true", help="compile even when the stamp is there")
    w.set_defaults(func=cmd_warmup)
    ls = sub.add_parser("examples", help="list the built-in examples")
    ls.set_defaults(func=cmd_examples)
    add_equation_command(sub)
    add_run_command(sub)
    add_study_command(sub)
    return p


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the program is (as Ctrl-C raises KeyboardInterrupt), so that every
    file being written is removed and the command ends with one line and exit 143."""


EXIT_SIGINT, EXIT_SIGTERM = 130, 143


def _on_sigterm(signum, frame):
    raise Terminated()


def interrupted_exit(exc: BaseException, what: str = "") -> int:
    """Say on one line that the command was stopped by Ctrl-C or SIGTERM; return 130 or 143."""
    term = isinstance(exc, Terminated)
    signal_name = "SIGTERM" if term else "Ctrl-C"
    print(f"interrupted ({signal_name}){': ' + what if what else ''}", file=sys.stderr,
          flush=True)
    return EXIT_SIGTERM if term else EXIT_SIGINT


def _file_error(exc: OSError) -> str:
    from .model.files import FileWriteError
    if isinstance(exc, FileWriteError):
        return str(exc.strerror)
    if exc.filename:
        return f"{exc.filename}: {exc.strerror or exc}"
    return str(exc.strerror or exc)


def main(argv=None, out=None) -> int:
    """Run the command line; return the exit code.

    Ctrl-C (SIGINT) and SIGTERM end any command with one line and exit 130 or 143, no
    traceback; the files being written are left as they were (see :mod:`.model.files`)."""
    import signal
    out = out or sys.stdout
    try:
        previous = signal.signal(signal.SIGTERM, _on_sigterm)
    except ValueError:                     # not the main thread (tests): leave SIGTERM alone
        previous = None
    try:
        args = parser().parse_args(argv)
        np.set_printoptions(precision=6, suppress=True)
        return args.func(args, out)
    except KeyboardInterrupt as exc:       # Ctrl-C, or SIGTERM (Terminated)
        return interrupted_exit(exc, "nothing written")
    except CliError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_INVALID
    except OSError as exc:
        print(f"error: {_file_error(exc)}", file=sys.stderr)
        return EXIT_INVALID
    except Exception as exc:  # never a traceback on the terminal
        print(f"internal error: {type(exc).__name__}: {exc} (please report it with the model "
              "file)", file=sys.stderr)
        return EXIT_INTERNAL
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


class ProgressBar:
    """A text bar on a stream (stderr), updated in place when the stream is a terminal.

    On a terminal it is redrawn at most ten times a second; elsewhere only the final line is
    written.
    """

    def __init__(self, stream=None, width=30, label="simulating"):
        self.stream = stream or sys.stderr
        self.width = width
        self.label = label
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.t0 = _time.perf_counter()
        self._last = -1.0

    def _line(self, fraction):
        n = int(round(fraction * self.width))
        el = _time.perf_counter() - self.t0
        return (f"{self.label} [{'#' * n}{'.' * (self.width - n)}] {100 * fraction:5.1f}% "
                f"{el:6.1f} s")

    def __call__(self, fraction):
        now = _time.perf_counter()
        if self.tty and (now - self._last >= 0.1 or fraction >= 1.0):
            self._last = now
            self.stream.write("\r" + self._line(fraction))
            self.stream.flush()

    def finish(self, fraction=1.0, note=""):
        """Write the final line (always) and end it."""
        self.stream.write(("\r" if self.tty else "") + self._line(fraction) + note + "\n")
        self.stream.flush()


def add_run_command(subparsers):
    """Add the ``run`` command to the CLI's sub-parsers (``cli.parser()``)."""
    from .model.settings import INTEGRATORS, METHODS
    r = subparsers.add_parser(
        "run", help="simulate a model and write its results",
        description="Simulate a neutral model (the settings of its <Simulation> element unless "
                    "given here), print a summary, and write the results (.csv or .npz).")
    r.add_argument("model", help="neutral model file (*.mbs.xml)")
    r.add_argument("--method", help=f"solution method: {', '.join(METHODS)} "
                                    "(default: the model's)")
    r.add_argument("--integrator", help=f"integrator: {', '.join(INTEGRATORS)} (rk4: fixed-"
                                        "step Runge-Kutta; euler: fixed-step semi-implicit "
                                        "Euler, one evaluation a step; the others: adaptive; "
                                        "default: the model's)")
    r.add_argument("--t-end", type=float, help="end time, s")
    r.add_argument("--step", type=float, help="integrator step (rk4, euler) or first step, s")
    r.add_argument("--output-step", type=float, help="spacing of the results, s")
    r.add_argument("--out", "-o", help="results file, .csv or .npz")
    r.add_argument("--wall-budget", type=float, metavar="SECONDS",
                   help="stop the run (no results) when it has taken this many seconds of "
                        "wall-clock time (default: no limit)")
    r.add_argument("--accept-corrections", action="store_true",
                   help="run even when the start moves parts away from the drawing (markers that "
                        "do not meet, drivers that start elsewhere, loops that do not close as "
                        "drawn); without it such a run is refused, listing what would move")
    r.set_defaults(func=cmd_run)
    return r


def cmd_run(args, out) -> int:
    """``run``: simulate, show progress on stderr, print a summary; exit 0, 1 or 2, or 3 when
    the run's own checks say not to trust it (the results are written all the same)."""
    from .model.problems import ModelError
    from .methods.runtime import SimulationError
    from .run.simulate import simulate
    if args.out and not args.out.lower().endswith((".csv", ".npz")):
        raise CliError(f"{args.out}: the results file must end in .csv or .npz")
    model, problems = _load(args.model)
    if problems:
        _print_problems(args.model, problems, out)
        return EXIT_INVALID
    if args.out:
        _check_output(model, args)
    bar = ProgressBar(sys.stderr)
    try:
        res = simulate(model, method=args.method, integrator=args.integrator, t_end=args.t_end,
                       step=args.step, output_step=args.output_step, progress=bar,
                       accept_corrections=args.accept_corrections,
                       wall_budget=getattr(args, "wall_budget", None))
    except ModelError as exc:
        _print_problems(args.model, exc.problems, out)
        return EXIT_INVALID
    except KeyboardInterrupt as exc:
        bar.finish(0.0, "  interrupted")
        return interrupted_exit(exc, "no results" + (f"; {args.out} left as it was"
                                                      if args.out else ""))
    except SimulationError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    bar.finish(1.0)
    print(res.summary(), file=out)
    if args.out:
        try:
            res.save(args.out)
        except KeyboardInterrupt as exc:
            return interrupted_exit(exc, f"while writing the results; {args.out} left as it was")
        print(f"results written to {args.out} ({len(res)} rows x {len(res.names)} columns)",
              file=out)
    if res.untrusted:
        print(_cut(f"untrusted: {args.model}: the run's own check says not to trust it: "
                   f"{'; '.join(res.untrusted)}" + (f" (results written to {args.out} to look "
                                                    "at)" if args.out else "")
                   + f"; exit code {EXIT_UNTRUSTED}"), file=sys.stderr)
        return EXIT_UNTRUSTED
    return EXIT_OK


def _check_output(model, args) -> None:
    """Before a run: the results file can be written and its folder has room for it (about
    24 bytes a value in CSV, 8 in NPZ), so that a read-only folder or a full disk is said
    before the simulation, not after it."""
    from .model.files import check_writable
    from .model.validation import result_size
    sim = model.simulation
    t_end = args.t_end if args.t_end is not None else getattr(sim, "end_time", None)
    dt = args.output_step if args.output_step is not None else getattr(sim, "output_step", None)
    rows, columns = result_size(model, t_end, dt)
    per_value = 24 if args.out.lower().endswith(".csv") else 8
    check_writable(args.out, int(rows * columns * per_value) if rows else 0)


def cmd_equation(args, out) -> int:
    """``equation MODEL.xml [--t T]``: print :func:`equation_report`; 2 for an invalid model."""
    from .run.equation import equation_report
    from .model.problems import ModelError
    model, problems = _load(args.model)
    if problems:
        _print_problems(args.model, problems, out)
        return EXIT_INVALID
    try:
        text = equation_report(model, args.t)
    except ModelError as exc:
        _print_problems(args.model, exc.problems, out)
        return EXIT_INVALID
    print(text, file=out)
    return EXIT_OK


def add_equation_command(subparsers):
    """Add ``equation MODEL.xml [--t T]`` to the command line's argparse ``subparsers``."""
    p = subparsers.add_parser("equation", help="print the overall transfer equation (MSTMM), "
                              "closed loops included")
    p.add_argument("model", help="neutral model file (*.mbs.xml)")
    p.add_argument("--t", type=float, default=0.0, metavar="T",
                   help="time at which the equation is formed, s (default 0)")
    p.set_defaults(func=cmd_equation)
    return p


def add_study_command(subparsers):
    """Add the ``study`` command (:mod:`.study`) to the command line's argparse ``subparsers``."""
    from .model.settings import INTEGRATORS, METHODS
    from .study import METHODS as STUDY_METHODS
    s = subparsers.add_parser(
        "study", help="run a design study: a sweep or an optimisation of the model's parameters",
        description="Run a model over values of its parameters (paths Element.Field[index] of "
                    "the neutral model, SI values), reduce each run to objectives and "
                    "constraints (expressions over the result columns) and write one row per "
                    "run. The runs go in parallel on Dask: an embedded local cluster (one "
                    "worker process per core) or the cluster of --scheduler.")
    s.add_argument("model", help="neutral model file (*.mbs.xml)")
    s.add_argument("--param", action="append", default=[], metavar="PATH=LOW:HIGH[:LEVELS]",
                   help="a parameter and its range (LEVELS for a grid) or PATH=V1,V2,... "
                        "(a list; grid only); e.g. 'Spring.Stiffness=1e3:1e5:9' (repeat for more)")
    s.add_argument("--objective", action="append", default=[], metavar="EXPR",
                   help="an objective, e.g. 'rms(Hull.az)' or 'max(abs(Bearing.Fx))'; the "
                        "optimisers minimise the first (repeat for more)")
    s.add_argument("--constraint", action="append", default=[], metavar="EXPR<=BOUND",
                   help="a constraint, e.g. 'max(Piston.z) <= 180 mm' (repeat for more)")
    s.add_argument("--method", default="grid", help=f"{', '.join(STUDY_METHODS)} "
                                                     "(default grid)")
    s.add_argument("--samples", type=int, default=0, help="lhs, sobol: number of points")
    s.add_argument("--seed", type=int, help="lhs, sobol, de: seed of the random numbers")
    s.add_argument("--max-evaluations", type=int, default=200,
                   help="optimisers: most runs (default 200)")
    s.add_argument("--tolerance", type=float, default=1e-4,
                   help="optimisers: on the parameters, a fraction of each range (default 1e-4)")
    s.add_argument("--scheduler", metavar="ADDRESS",
                   help="a running Dask scheduler (tcp://host:8786); default: a local cluster")
    s.add_argument("--workers", type=int, help="local cluster: worker processes (default: the "
                                               "cores)")
    s.add_argument("--serial", action="store_true",
                   help="run the variants in this process, one after the other (no Dask)")
    s.add_argument("--sim-method", help=f"simulation method: {', '.join(METHODS)} (default: "
                                        "the model's)")
    s.add_argument("--integrator", help=f"integrator: {', '.join(INTEGRATORS)} (default: the "
                                        "model's)")
    s.add_argument("--t-end", type=float, help="end time of each run, s")
    s.add_argument("--step", type=float, help="integrator step, s")
    s.add_argument("--output-step", type=float, help="spacing of the results, s")
    s.add_argument("--accept-corrections", action="store_true",
                   help="run variants whose start moves parts away from the drawing")
    s.add_argument("--out", "-o", required=True, help="the study's table, .csv")
    s.set_defaults(func=cmd_study)
    return s


def cmd_study(args, out) -> int:
    """``study``: run a design study, progress on stderr, the table to ``--out``; exit 0 or 2
    (1 when it was interrupted: the rows that finished are written; 3 when any variant was
    untrusted: the table is written, those rows marked and their objectives not used)."""
    import signal

    from .model.problems import ModelError
    from .study import Study, parse_parameter, run_study
    from .study.executors import make_executor
    from .study.parameters import StudyError, problem
    from .model.files import check_writable
    from .study.executors import executor_problems
    if not args.out.lower().endswith(".csv"):
        raise CliError(f"{args.out}: the study's table must end in .csv")
    model, problems = _load(args.model)
    if problems:
        _print_problems(args.model, problems, out)
        return EXIT_INVALID
    problems = _study_argument_problems(args) + executor_problems(args.scheduler, args.workers,
                                                                  args.serial)
    if problems:
        _print_problems(args.model, problems, out, "the study is not valid")
        return EXIT_INVALID
    check_writable(args.out)
    params = []
    for k, text in enumerate(args.param, 1):
        try:
            params.append(parse_parameter(text))
        except ValueError as exc:
            problems.append(problem(f"Parameter {k}", "--param", str(exc)))
    if problems:
        _print_problems(args.model, problems, out, "the study is not valid")
        return EXIT_INVALID
    settings = {k: v for k, v in dict(method=args.sim_method, integrator=args.integrator,
                                      t_end=args.t_end, step=args.step,
                                      output_step=args.output_step).items() if v is not None}
    if args.accept_corrections:
        settings["accept_corrections"] = True
    study = Study(params, list(args.objective), list(args.constraint), args.method,
                  samples=args.samples, seed=args.seed, max_evaluations=args.max_evaluations,
                  tolerance=args.tolerance, settings=settings)
    bar = ProgressBar(sys.stderr, label="study")
    stop = [None]
    executor = None

    def interrupted(signum, frame):
        stop[0] = stop[0] or signum
    old = signal.signal(signal.SIGINT, interrupted)
    old_term = signal.signal(signal.SIGTERM, interrupted)
    try:
        executor = make_executor(args.scheduler, args.workers, args.serial)
        table = run_study(model, study, executor=executor,
                          progress=lambda done, total, row: bar(min(1.0, done / max(1, total))),
                          cancel=lambda: bool(stop[0]))
    except StudyError as exc:
        _print_problems(args.model, exc.problems, out, "the study is not valid")
        return EXIT_INVALID
    except ModelError as exc:
        _print_problems(args.model, exc.problems, out)
        return EXIT_INVALID
    finally:
        try:
            if executor is not None:
                executor.close()
        except Exception:
            pass
        signal.signal(signal.SIGINT, old)
        signal.signal(signal.SIGTERM, old_term)
    bar.finish(1.0 if not table.cancelled else len(table.rows) / max(1, len(table.rows)),
               "  interrupted" if table.cancelled else "")
    print(table.summary(), file=out)
    table.to_csv(args.out)
    print(f"study table written to {args.out} ({len(table.rows)} rows)", file=out)
    if stop[0]:
        cause = Terminated() if stop[0] == signal.SIGTERM else KeyboardInterrupt()
        return interrupted_exit(cause, "the finished variants' rows are written")
    if table.cancelled:
        return 1
    untrusted = table.untrusted_rows
    if untrusted:
        first = untrusted[0]
        print(_cut(f"untrusted: {len(untrusted)} of {len(table.rows)} variants (the first: "
                   f"variant {first.index}: {first.error}); their rows are marked "
                   f"'untrusted' in {args.out} and their objectives not used; exit code "
                   f"{EXIT_UNTRUSTED}"), file=sys.stderr)
        return EXIT_UNTRUSTED
    return EXIT_OK


def _study_argument_problems(args) -> list:
    """The study command's own numbers that cannot be: times and steps that are not finite and
    positive, counts below their least value, a tolerance outside (0, 1]."""
    from .study.parameters import problem
    out = []
    for name, field in (("t_end", "EndTime"), ("step", "Step"), ("output_step", "OutputStep")):
        v = getattr(args, name)
        if v is not None and not (math.isfinite(v) and v > 0):
            out.append(problem("Study", field, f"--{name.replace('_', '-')} {v!r}: must be a "
                                               "positive finite number of seconds"))
    if args.samples < 0:
        out.append(problem("Study", "Samples", f"--samples {args.samples}: must be 0 or more"))
    if args.max_evaluations < 1:
        out.append(problem("Study", "MaxEvaluations",
                           f"--max-evaluations {args.max_evaluations}: must be 1 or more"))
    if not (math.isfinite(args.tolerance) and 0 < args.tolerance <= 1):
        out.append(problem("Study", "Tolerance", f"--tolerance {args.tolerance!r}: must be a "
                                                 "fraction of the ranges, in (0, 1]"))
    return out
