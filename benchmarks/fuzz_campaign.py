"""Fuzz campaign (issue 12): mutated examples through ``check`` and a short ``run``.

    /usr/bin/python3 benchmarks/fuzz_campaign.py [--seed S] [--models N] [--runs R]
                                                 [--processes P] [--timeout T] [--log FILE]

Draws ``N`` mutants of every example in turn (tests/fuzzmodels.py: deleted, duplicated and renamed
elements, dangling references, non-finite, malformed and extreme numbers, lists of the wrong
length, hostile and refused expressions, odd settings, other hinge types, hinges turned round,
markers moved, two mutations at once; seeded), puts every one through ``check`` and the first
``R`` of them through a 0.01-s ``run`` (``cli.main`` in ``P`` worker processes; a model past ``T``
seconds is a hang: its worker is killed and replaced), and prints the counts of tracebacks, hangs,
wrong accepts (exit 0 for a model that must be refused) and check/run disagreements, with the
seed, the machine and the load. Each bad case is written to the log with its mutation and answer.
Issue 12's target: 10,000 models through check and 400 through run with 0 of each.
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))
sys.path.insert(0, HERE)

from bench_tree import load, machine          # noqa: E402
from fuzzmodels import Pool, classify, mutants  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=20261126)
    ap.add_argument("--models", type=int, default=10_000, help="mutants through check")
    ap.add_argument("--runs", type=int, default=400, help="of which through a 0.01-s run")
    ap.add_argument("--processes", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=30.0, help="per model, s")
    ap.add_argument("--log", default="fuzz_campaign.log", help="bad cases, one block each")
    args = ap.parse_args(argv)
    print(f"machine: {machine()}")
    print(f"load before: {load()}")
    print(f"seed {args.seed}: {args.models} models through check, {args.runs} through run "
          f"(0.01 s), {args.processes} processes, timeout {args.timeout:g} s", flush=True)
    models = mutants(args.seed, args.models)
    counts = {c: collections.Counter() for c in ("check", "run")}
    exits = {c: collections.Counter() for c in ("check", "run")}
    check_codes = {}
    slowest = {c: (0.0, None) for c in ("check", "run")}
    log = open(args.log, "w", encoding="utf-8")

    def on_result(key, answer, took):
        command, k = key
        name, mutant = models[k]
        if took > slowest[command][0]:
            slowest[command] = (took, f"{name}: {mutant.what}")
        if answer is not None:
            exits[command][answer[0]] += 1
            if command == "check":
                check_codes[k] = answer[0]
        verdict = classify(mutant, command, answer, check_codes.get(k))
        counts[command][verdict] += 1
        if verdict != "ok":
            log.write(f"=== {verdict} in {command} #{k} ({name}): {mutant.what}\n")
            if answer is None:
                log.write(f"  no answer in {args.timeout:g} s\n")
            else:
                code, out, err, tb = answer
                log.write(f"  exit {code}\n  out: {out[-600:]}\n  err: {err[-600:]}\n{tb}\n")
            log.flush()
        done = sum(sum(c.values()) for c in counts.values())
        if done % 500 == 0:
            print(f"  {done} answers, {time.monotonic() - t0:.0f} s: "
                  f"check {dict(counts['check'])}, run {dict(counts['run'])}", flush=True)

    def jobs(command, ks):
        return [((command, k), command, models[k][1].text) for k in ks]

    pool = Pool(args.processes, args.timeout)
    t0 = time.monotonic()
    try:
        pool.map(jobs("check", range(args.models)), on_result)
        t_check = time.monotonic() - t0
        pool.map(jobs("run", range(min(args.runs, args.models))), on_result)
    finally:
        pool.close()
        log.close()
    t_all = time.monotonic() - t0
    print(f"seed {args.seed}; machine: {machine()}")
    for c in ("check", "run"):
        n = sum(counts[c].values())
        print(f"{c}: {n} models; exit codes {dict(sorted(exits[c].items()))}; "
              f"tracebacks {counts[c]['traceback']}, hangs {counts[c]['hang']}, "
              f"wrong accepts {counts[c]['wrong accept']}"
              + (f", run errors (exit 1, one line) {counts[c]['run error']}" if c == "run" else "")
              + (f", check/run disagreements {counts[c]['disagree']}" if c == "run" else "")
              + f"; slowest {slowest[c][0]:.1f} s ({slowest[c][1]})")
    print(f"wall time: check {t_check:.0f} s, all {t_all:.0f} s; bad cases in {args.log}")
    print(f"load after: {load()}")
    bad = sum(v for c in counts.values() for k, v in c.items() if k not in ("ok", "run error"))
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
