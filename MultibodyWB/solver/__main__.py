"""``python3 -m MultibodyWB.solver``: see :mod:`MultibodyWB.solver.cli`.

Ctrl-C or SIGTERM while the solver's libraries load (numpy, scipy, numba take a second or more)
ends with one line and exit 130 or 143, as it does later in :func:`~.cli.main`; so does one that
arrives after the command's work (its files are complete by then, and the line says so), and the
process then ends at once, without the interpreter's shutdown, in which no handler can answer."""

import os
import signal
import sys


def _stopped(signum, frame):
    raise KeyboardInterrupt(signum)


def _after_the_work(signum, frame):
    name = "SIGTERM" if signum == signal.SIGTERM else "Ctrl-C"
    try:
        sys.stderr.write(f"interrupted ({name}): after the command had finished\n")
        sys.stderr.flush()
    finally:
        os._exit(143 if signum == signal.SIGTERM else 130)


def _run() -> int:
    previous = signal.signal(signal.SIGTERM, _stopped)
    try:
        from .cli import main
    except KeyboardInterrupt as exc:
        term = exc.args == (signal.SIGTERM,)
        print(f"interrupted ({'SIGTERM' if term else 'Ctrl-C'}): nothing done", file=sys.stderr)
        return 143 if term else 130
    finally:
        signal.signal(signal.SIGTERM, previous)
    code = main()
    signal.signal(signal.SIGTERM, _after_the_work)
    signal.signal(signal.SIGINT, _after_the_work)
    return code


def _exit(code) -> None:
    """End the process now, its output flushed: skipping the interpreter's shutdown leaves no
    moment in which Python has put back the default signal handlers (a signal there ended the
    process with status -2 and no line). Every file is complete and closed by then."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):        # a closed pipe: nothing more can be said
            pass
    os._exit(code if isinstance(code, int) else 1)


_exit(_run())
