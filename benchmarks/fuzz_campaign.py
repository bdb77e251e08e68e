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

Issue 33 extends it:

- the run stage (``--runs R``) draws its own mutants (:func:`fuzzmodels.run_mutants`), at least
  half of them from the examples with contacts, couplers, stops and motors, mutated where it
  matters at run time (huge, tiny and zero coefficients, fast motors and initial speeds, big
  gravity, degenerate contact geometry, other shapes, the euler integrator, new elements added);
  each goes through ``check`` and a 0.01-s ``run --step 1e-4`` whose results are written to an
  NPZ file and read back: exit 0 with a value that is not finite in it (or no file) is a
  *success with NaN*;
- a study stage (``--studies S``): mutated ``study`` command lines
  (:func:`fuzzmodels.study_mutants`, ``--serial``; a few with the real executor, only where it
  must be refused before a cluster starts); each answer exit 0 or 2, no traceback, no hang, no
  exit 0 for a command line that must be refused, no row that ran with a non-finite objective;
- a fault stage (``--kills K --disks D``, tests/fuzzfaults.py): ``run`` and ``study`` killed
  with SIGKILL, SIGINT or SIGTERM at random moments, a 1 MB tmpfs filled to random levels, a
  read-only tmpfs.
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
from fuzzmodels import (Pool, classify, classify_study, has_new_elements,  # noqa: E402
                        mutants, run_mutants, study_mutants, example_texts,
                        WALL_BUDGET)
from fuzzfaults import fault_trials            # noqa: E402

BAD = ("traceback", "hang", "wrong accept", "disagree", "success with NaN")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=20261129)
    ap.add_argument("--models", type=int, default=10_000, help="mutants through check")
    ap.add_argument("--runs", type=int, default=1000,
                    help="run-stage mutants through check and a 0.01-s run")
    ap.add_argument("--new-share", type=float, default=0.6,
                    help="share of the run stage drawn from the examples with new elements")
    ap.add_argument("--studies", type=int, default=400, help="mutated study command lines")
    ap.add_argument("--kills", type=int, default=60, help="runs and studies killed")
    ap.add_argument("--disks", type=int, default=20, help="runs into a small tmpfs")
    ap.add_argument("--processes", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=90.0, help="per model or command, s")
    ap.add_argument("--log", default="fuzz_campaign.log", help="bad cases, one block each")
    args = ap.parse_args(argv)
    print(f"machine: {machine()}")
    print(f"load before: {load()}")
    print(f"seed {args.seed}: {args.models} models through check, {args.runs} through check "
          f"and run (0.01 s), {args.studies} study command lines, {args.kills} kills, "
          f"{args.disks} full-disk runs; {args.processes} processes, timeout "
          f"{args.timeout:g} s", flush=True)
    t_start = time.monotonic()
    models = mutants(args.seed, args.models)
    runs = run_mutants(args.seed + 1, args.runs, args.new_share)
    studies = study_mutants(args.seed + 2, args.studies)
    texts = example_texts()
    stages = ("check", "run check", "run", "study")
    counts = {c: collections.Counter() for c in stages}
    exits = {c: collections.Counter() for c in stages}
    check_codes = {}
    slowest = {c: (0.0, None) for c in stages}
    log = open(args.log, "w", encoding="utf-8")
    new_runs = sum(has_new_elements(m.text) for _, m in runs)

    def mutant_of(stage, k):
        return (models if stage == "check" else studies if stage == "study" else runs)[k]

    def on_result(key, answer, took):
        stage, k = key
        name, mutant = mutant_of(stage, k)
        if took > slowest[stage][0]:
            slowest[stage] = (took, f"{name}: {mutant.what}")
        if answer is not None:
            exits[stage][answer[0]] += 1
            if stage == "run check":
                check_codes[k] = answer[0]
        if stage == "study":
            verdict = classify_study(mutant, answer)
        else:
            verdict = classify(mutant, "check" if stage.endswith("check") else "run fine",
                               answer, check_codes.get(k))
        counts[stage][verdict] += 1
        if verdict == "run error" and "wall-clock budget" in answer[2]:
            counts[stage]["wall budget"] += 1
        if verdict not in ("ok", "run error"):
            log.write(f"=== {verdict} in {stage} #{k} ({name}): {mutant.what}\n")
            if stage == "study":
                log.write(f"  args: {mutant.args}\n")
            if answer is None:
                log.write(f"  no answer in {args.timeout:g} s\n")
            else:
                code, out, err, tb = answer[:4]
                log.write(f"  exit {code}\n  out: {out[-600:]}\n  err: {err[-600:]}\n{tb}\n")
                if len(answer) > 4 and answer[4]:
                    log.write(f"  results: {answer[4]}\n")
            log.flush()
        done = sum(sum(c.values()) for c in counts.values())
        if done % 500 == 0:
            print(f"  {done} answers, {time.monotonic() - t0:.0f} s: "
                  + "; ".join(f"{c} {dict(counts[c])}" for c in stages if counts[c]),
                  flush=True)

    pool = Pool(args.processes, args.timeout)
    t0 = time.monotonic()
    walls = {}
    try:
        pool.map([(("check", k), "check", m.text) for k, (_, m) in enumerate(models)],
                 on_result)
        walls["check"] = time.monotonic() - t0
        t1 = time.monotonic()
        pool.map([(("run check", k), "check", m.text) for k, (_, m) in enumerate(runs)],
                 on_result)
        pool.map([(("run", k), "run fine", m.text) for k, (_, m) in enumerate(runs)],
                 on_result)
        walls["run"] = time.monotonic() - t1
        t1 = time.monotonic()
        pool.map([(("study", k), ("study", tuple(m.args)), texts[name])
                  for k, (name, m) in enumerate(studies)], on_result)
        walls["study"] = time.monotonic() - t1
    finally:
        pool.close()
    t1 = time.monotonic()
    print(f"fault stage: {args.kills} kills, {args.disks} full-disk runs ...", flush=True)
    faults, note = fault_trials(args.seed + 3, args.kills, args.disks, timeout=max(
        300.0, args.timeout)) if args.kills or args.disks else ([], "fault stage not run")
    walls["faults"] = time.monotonic() - t1
    fault_counts = collections.Counter(t.verdict == "ok" for t in faults)
    for t in faults:
        if t.verdict != "ok":
            log.write(f"=== fault: {t.what}: {t.verdict}\n  exit {t.code}, {t.seconds:.1f} s\n"
                      f"  err: {t.err}\n")
    log.close()
    t_all = time.monotonic() - t_start
    print(f"seed {args.seed}; machine: {machine()}")
    print(f"check: {sum(counts['check'].values())} models; exit codes "
          f"{dict(sorted(exits['check'].items()))}; "
          + ", ".join(f"{v} {counts['check'][v]}" for v in BAD[:3])
          + f"; slowest {slowest['check'][0]:.1f} s ({slowest['check'][1]})")
    print(f"run stage: {len(runs)} models, {new_runs} with contacts, couplers, stops, motors or "
          f"euler; check exit codes {dict(sorted(exits['run check'].items()))}; "
          f"run exit codes {dict(sorted(exits['run'].items()))}; check: "
          + ", ".join(f"{v} {counts['run check'][v]}" for v in BAD[:3]) + "; run: "
          + ", ".join(f"{v} {counts['run'][v]}" for v in BAD)
          + f", run errors (exit 1, one line) {counts['run']['run error']} (of which "
            f"{counts['run']['wall budget']} stopped by the {WALL_BUDGET:g}-s wall budget)"
          + f"; slowest run {slowest['run'][0]:.1f} s ({slowest['run'][1]})")
    print(f"study: {len(studies)} command lines, "
          f"{sum(m.must_refuse for _, m in studies)} that must be refused, "
          f"{sum('--serial' not in m.args for _, m in studies)} with the real executor; "
          f"exit codes {dict(sorted(exits['study'].items()))}; "
          + ", ".join(f"{v} {counts['study'][v]}" for v in BAD if v != "disagree")
          + f"; slowest {slowest['study'][0]:.1f} s ({slowest['study'][1]})")
    kinds = collections.Counter("read-only" if "read-only" in t.what else
                                "full disk" if "tmpfs" in t.what else
                                t.what.split(": ")[-1].split(" ")[0] for t in faults)
    print(f"faults: {len(faults)} trials ({dict(kinds)}); ok {fault_counts[True]}, "
          f"bad {fault_counts[False]}" + (f"; {note}" if note else ""))
    print("wall time: " + ", ".join(f"{k} {v:.0f} s" for k, v in walls.items())
          + f", all {t_all:.0f} s; bad cases in {args.log}")
    print(f"load after: {load()}")
    bad = sum(counts[c][v] for c in stages for v in BAD) + fault_counts[False]
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
