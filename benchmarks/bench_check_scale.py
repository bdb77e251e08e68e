"""Benchmark of ``check`` on a big model: the n-link chain example (10,000 bodies by default).

    /usr/bin/python3 benchmarks/bench_check_scale.py [--bodies N]

Builds the chain with the solver's model API (``MultibodyWB.examples.chain``), writes it to a
temporary ``.mbs.xml`` file and times ``python3 -m MultibodyWB.solver check FILE`` in this process
(``cli.main``): reading with the schema, validation, the start and the summary. Prints the wall
time of each stage that can be timed apart (build, write, read and validate, the whole check),
the CPU time of the check (less dependent on the other processes), the size of the printed
summary, the machine and the load average before and after (other
processes slow the figures down). Issue 12's target: a 10,000-body check in under 3 s. Not a
test: timings depend on the machine.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench_tree import load, machine                # noqa: E402

from MultibodyWB.examples.chain import build         # noqa: E402
from MultibodyWB.solver import cli                    # noqa: E402
from MultibodyWB.solver.model import xmlio           # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bodies", type=int, default=10_000, help="links of the chain")
    args = ap.parse_args(argv)
    print(f"machine: {machine()}")
    print(f"load before: {load()}")
    n = args.bodies
    t0 = time.perf_counter()
    model = build(n)
    t1 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, f"chain{n}.mbs.xml")
        xmlio.write(model, path)
        t2 = time.perf_counter()
        _, problems = xmlio.read_with_problems(path)
        t3 = time.perf_counter()
        out = io.StringIO()
        c3 = time.process_time()
        code = cli.main(["check", path], out=out)
        t4 = time.perf_counter()
        c4 = time.process_time()
        size = os.path.getsize(path)
    print(f"chain of {n} bodies ({size / 1e6:.1f} MB file): build {t1 - t0:.2f} s, write "
          f"{t2 - t1:.2f} s, read and validate {t3 - t2:.2f} s ({len(problems)} problems)")
    print(f"check: exit {code}, {t4 - t3:.2f} s (CPU time of this process {c4 - c3:.2f} s); summary {len(out.getvalue()):,} characters, "
          f"{out.getvalue().count(chr(10))} lines")
    print(f"load after: {load()}")
    return 0 if code == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
