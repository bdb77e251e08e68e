"""``python3 -m MultibodyWB.solver``: see :mod:`MultibodyWB.solver.cli`.

Ctrl-C or SIGTERM while the solver's libraries load (numpy, scipy, numba take a second or more)
ends with one line and exit 130 or 143, as it does later in :func:`~.cli.main`."""

import signal
import sys


def _stopped(signum, frame):
    raise KeyboardInterrupt(signum)


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
    return main()


sys.exit(_run())
