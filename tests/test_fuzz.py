"""Issue 12's fuzz test: mutated examples through ``check`` and a short ``run``, seeded and bounded.

Every example (``MultibodyWB.examples``) is mutated in turn (tests/fuzzmodels.py: deleted,
duplicated and renamed elements, dangling references, non-finite, malformed and extreme numbers,
lists of the wrong length, hostile and refused expressions, odd settings, hinges and forces added,
other hinge types, hinges turned round, markers moved, two mutations at once), written to XML and
put through ``cli.main`` in two worker processes with a timeout per model. Asserted: no traceback
(exit 0 or 2 with messages; ``run`` may also exit 1 with a one-line error), no hang, no wrong
accept (a mutant that must be refused is refused), and ``run`` refuses what ``check`` refuses:
the short runs of the campaign, and every mutant ``check`` refuses through ``run`` with its
own settings, with the same problem lines.
The long campaign is benchmarks/fuzz_campaign.py.
"""

import collections
import time

import pytest

from fuzzmodels import Pool, classify, mutants, problem_lines

from MultibodyWB.examples import EXAMPLES

SEED = 12
CHECKS = 2800
RUNS = 140
TIMEOUT = 30.0            # s per model


@pytest.fixture(scope="module")
def campaign():
    """Run the campaign once: (models, {command: {index: answer}}, seconds)."""
    models = mutants(SEED, CHECKS)
    answers = {"check": {}, "run": {}}

    def keep(key, answer, _took):
        answers[key[0]][key[1]] = answer

    start = time.monotonic()
    pool = Pool(2, TIMEOUT)
    try:
        pool.map([(("check", k), "check", m.text) for k, (_, m) in enumerate(models)], keep)
        pool.map([(("run", k), "run", models[k][1].text) for k in range(RUNS)], keep)
    finally:
        pool.close()
    return models, answers, time.monotonic() - start


def _bad(models, answers, command, verdicts):
    out = []
    for k, answer in answers[command].items():
        name, m = models[k]
        check = answers["check"].get(k)
        v = classify(m, command, answer, check[0] if check else None)
        if v in verdicts:
            out.append((v, name, m.what, None if answer is None else answer[2][-300:]))
    return out


def test_every_example_is_mutated(campaign):
    models, answers, _ = campaign
    assert {name for name, _ in models} == set(EXAMPLES)
    assert len(answers["check"]) == CHECKS and len(answers["run"]) == RUNS
    # the fuzz is not vacuous: valid and refused models, and models that must be refused
    codes = collections.Counter(a[0] for a in answers["check"].values() if a is not None)
    assert codes[0] > 200 and codes[2] > 1200, codes
    assert sum(m.must_refuse for _, m in models) > 800
    assert sum(a is not None and a[0] == 0 for a in answers["run"].values()) > 5


def test_no_traceback(campaign):
    models, answers, _ = campaign
    for command in ("check", "run"):
        assert _bad(models, answers, command, {"traceback"}) == []


def test_no_hang(campaign):
    models, answers, _ = campaign
    for command in ("check", "run"):
        assert _bad(models, answers, command, {"hang"}) == []


def test_no_wrong_accept(campaign):
    models, answers, _ = campaign
    assert _bad(models, answers, "check", {"wrong accept"}) == []
    assert _bad(models, answers, "run", {"wrong accept", "disagree"}) == []


def test_run_refuses_every_model_check_refuses_with_the_same_problems(campaign):
    """Issue 11's one validation path: every mutant ``check`` refuses (more than a thousand
    invalid models) through ``run`` with its own settings (it must refuse it before a step:
    a run that goes on is caught by the timeout), refused with the same problem lines."""
    models, answers, _ = campaign
    refused = [k for k, a in answers["check"].items() if a is not None and a[0] == 2]
    assert len(refused) > 1200
    got = {}
    pool = Pool(2, TIMEOUT)
    try:
        pool.map([(k, "run as written", models[k][1].text) for k in refused],
                 lambda key, answer, _took: got.__setitem__(key, answer))
    finally:
        pool.close()
    def said(answer):                   # the problems listed and the errors reported
        return problem_lines(answer[1]), [line.strip() for line in answer[2].splitlines()
                                          if line.strip().startswith("error")]

    bad = []
    for k in refused:
        answer, check = got[k], answers["check"][k]
        if answer is None or answer[0] != 2 or said(answer) != said(check):
            bad.append((models[k][0], models[k][1].what, check[1][-300:], check[2][-300:],
                        answer if answer is None else answer[:3]))
    assert bad == []
    assert sum(bool(said(answers["check"][k])[0]) for k in refused) > 1000


def test_refusals_name_the_element(campaign):
    """A refusal lists problems (``- Element 'name' Field: message``), not a bare error."""
    models, answers, _ = campaign
    for k, answer in answers["check"].items():
        if answer is not None and answer[0] == 2:
            out = answer[1] + answer[2]
            assert "problem" in out or "error:" in out, (models[k][1].what, out[-300:])


def test_campaign_is_bounded(campaign):
    assert campaign[2] < 120


def test_the_harness_sees_a_traceback_a_hang_and_a_wrong_accept(monkeypatch):
    """The campaign's verdicts are not vacuous: a check that raises, one that sleeps past the
    timeout and one that accepts everything are each caught (the workers fork from here, with
    the patched command)."""
    from MultibodyWB.solver import cli
    name, mutant = next((n, m) for n, m in mutants(SEED, 40) if m.must_refuse)

    def verdict(command_impl, timeout=5.0):
        monkeypatch.setattr(cli, "cmd_check", command_impl)
        got = {}
        pool = Pool(1, timeout)
        try:
            pool.map([("k", "check", mutant.text)], lambda key, answer, took: got.update(a=answer))
        finally:
            pool.close()
        return classify(mutant, "check", got["a"])

    def boom(args, out):
        raise RuntimeError("a bug")

    def sleep(args, out):
        time.sleep(10)
        return 0

    assert verdict(boom) == "traceback"
    assert verdict(sleep, timeout=1.0) == "hang"
    assert verdict(lambda args, out: 0) == "wrong accept"
