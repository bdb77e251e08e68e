"""Fingerprints of every example's results, to show that a refactoring changed no bit.

    /usr/bin/python3 benchmarks/example_fingerprints.py --save before.json
    /usr/bin/python3 benchmarks/example_fingerprints.py --compare before.json

Runs each example of :mod:`MultibodyWB.examples` (and the loop examples' variants, and three
random trees of tests/randmodels.py with every hinge type and force law) with every
method and integrator that applies (mstmm with rk4 and DOP853, constrained with rk4,
newton-euler), for a short end time, and takes the SHA-256 of the result table (column names and
the bytes of every value), of the states and of the start report. ``--compare`` prints the runs
whose fingerprint differs and, for them, the largest difference in any column (and the largest
relative to its quantity's scale: the largest magnitude of that quantity, ``w`` or ``alpha`` say,
in any column); the exit status
is 1 when one differs. Fingerprints are only comparable on the same machine and libraries
(numba's code and BLAS may differ elsewhere in the last bit). Not a test: it takes a few
minutes.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from MultibodyWB.examples import build     # noqa: E402

#: example name -> (options, end time in s)
CASES = {
    "seed_box": ({}, 0.2),
    "double_pendulum": ({}, 0.2),
    "branched_tree": ({}, 0.1),
    "four_bar": ({}, 0.1),
    "crank_slider": ({}, 0.02),
    "crank_slider_planar": ({"variant": "planar"}, 0.02),
    "seed004": ({}, 0.2),
    "chain": ({"n": 10}, 0.1),
    # contacts, stops and couplers
    "bouncing_balls": ({}, 0.2),
    "cam_valve": ({}, 0.02),
    "tumbling_solids": ({}, 0.05),
    "gear_train": ({}, 0.05),
    "quarter_car": ({}, 0.2),
}

#: random trees of tests/randmodels.py with every hinge type, every force law, drivers, springs
#: and dampers: seed -> end time in s
RANDOM = {1: 0.05, 2: 0.05, 3: 0.05}


def _random_model(seed):
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                    "tests"))
    from randmodels import random_tree
    return random_tree(np.random.default_rng(seed), 9, name=f"Random{seed}")

#: (method, integrator, step, output step)
RUNS = [
    ("mstmm", "rk4", 1e-4, 1e-3),
    ("mstmm", "DOP853", 1e-4, 1e-3),
    ("constrained", "rk4", 1e-4, 1e-3),
    ("newton-euler", None, 1e-6, 1e-3),
]


def _digest(results) -> str:
    h = hashlib.sha256()
    h.update("\n".join(results.names).encode())
    h.update(np.ascontiguousarray(results.data).tobytes())
    if results.states is not None:
        h.update(np.ascontiguousarray(results.states).tobytes())
    start = results.meta.get("start")
    h.update(json.dumps(start, sort_keys=True, default=str).encode())
    return h.hexdigest()


def _one_chunk_newton_euler():
    """Newton-Euler runs in chunks that follow the wall time; before dcc347e its results
    depended on them (by round-off amplified in its penalty joints): one chunking for all."""
    try:
        from MultibodyWB.solver.methods.newton_euler import run as ne_run
    except ImportError:                 # the layout before issue 13
        from MultibodyWB.solver import newton_euler as ne_run
    ne_run.CHUNK_SECONDS = 1e9


def fingerprints(only=None) -> dict:
    """{case/method/integrator: {"sha256", "names", "data"}} (or {"sha256", "error"})."""
    try:
        from MultibodyWB.solver.run.simulate import simulate
    except ImportError:                 # the layout before issue 13
        from MultibodyWB.solver.simulate import simulate
    _one_chunk_newton_euler()
    out = {}
    cases = [(case, t_end, (lambda c=case, o=options: build(c.replace("_planar", ""), **o)))
             for case, (options, t_end) in CASES.items()]
    cases += [(f"random{seed}", t_end, (lambda s=seed: _random_model(s)))
              for seed, t_end in RANDOM.items()]
    for case, t_end, builder in cases:
        if only and case not in only:
            continue
        for method, integrator, step, output_step in RUNS:
            t_run = min(t_end, 0.01) if method == "newton-euler" else t_end
            key = f"{case}/{method}/{integrator or '-'}"
            model = builder()
            t0 = time.perf_counter()
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    res = simulate(model, method=method, integrator=integrator, t_end=t_run,
                                   step=step, output_step=output_step,
                                   accept_corrections=True)
            except Exception as exc:     # a refusal is a result too: it must stay the same
                out[key] = {"sha256": hashlib.sha256(
                    f"{type(exc).__name__}: {exc}".encode()).hexdigest(),
                    "error": f"{type(exc).__name__}: {str(exc)[:200]}"}
                print(f"{key:45s} refused: {str(exc)[:80]}", flush=True)
                continue
            out[key] = {"sha256": _digest(res), "names": res.names,
                        "data": res.data.tolist()}
            print(f"{key:45s} {out[key]['sha256'][:16]}  {len(res)} rows "
                  f"{time.perf_counter() - t0:6.1f} s", flush=True)
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--save", metavar="FILE")
    g.add_argument("--compare", metavar="FILE")
    p.add_argument("--only", nargs="*", help="cases to run (default: all)")
    args = p.parse_args(argv)
    now = fingerprints(args.only)
    if args.save:
        with open(args.save, "w") as f:
            json.dump(now, f)
        print(f"{len(now)} fingerprints saved to {args.save}")
        return 0
    with open(args.compare) as f:
        before = json.load(f)
    differ = 0
    for key, fp in now.items():
        if key not in before:
            print(f"{key}: not in {args.compare}")
            differ += 1
            continue
        if fp["sha256"] == before[key]["sha256"]:
            continue
        differ += 1
        if "data" in fp and "data" in before[key] and fp["names"] == before[key]["names"]:
            a, b = np.asarray(fp["data"]), np.asarray(before[key]["data"])
            if a.shape == b.shape:
                d = np.abs(a - b).max(axis=0)
                worst = int(np.argmax(d))
                # relative to the quantity's scale: the largest magnitude before of that
                # quantity in any column (Ball1.wx, Ball2.wz...: the angular velocities' scale)
                mag = np.abs(b).max(axis=0)
                kinds = [n.rsplit(".", 1)[-1] for n in fp["names"]]
                stems = [k[:-1] if k[-1:] in "xyz" and len(k) > 1 else k for k in kinds]
                scale = {}
                for stem, m in zip(stems, mag):
                    scale[stem] = max(scale.get(stem, 0.0), m)
                rel = d / np.maximum([scale[st] for st in stems], np.finfo(float).tiny)
                wr = int(np.argmax(rel))
                print(f"{key}: DIFFERS, largest difference {d[worst]:.3e} in {fp['names'][worst]};"
                      f" relative to its quantity's scale {rel[wr]:.3e} in {fp['names'][wr]}")
                continue
        print(f"{key}: DIFFERS ({fp.get('error') or 'shape or columns changed'})")
    missing = sorted(set(before) - set(now)) if not args.only else []
    for key in missing:
        print(f"{key}: missing now")
    print(f"{len(now)} runs compared, {differ + len(missing)} differ")
    return 1 if differ or missing else 0


if __name__ == "__main__":
    sys.exit(main())
