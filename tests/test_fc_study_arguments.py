"""A study object's own settings are checked with its rows, before any run (issue 33): a
scheduler address a study cannot use and a worker count past the cores are refused naming the
Study and the property, and the document is left as it was."""

import pytest

from test_fc_study import _setup, _state, doc  # noqa: F401  (the fixture)


@pytest.mark.freecad
@pytest.mark.parametrize("scheduler, workers, field, words", [
    ("tls://127.0.0.1:8786", 0, "Scheduler", "scheme tls://"),
    ("ucx://127.0.0.1:8786", 0, "Scheduler", "scheme ucx://"),
    ("", -1, "Workers", "-1: a local cluster takes 1 to"),
    ("", 100000, "Workers", "100000: a local cluster takes 1 to"),
])
def test_study_settings_refused_before_any_run(doc, scheduler, workers, field,  # noqa: F811
                                               words):
    from MultibodyWB.document import study as dstudy
    from MultibodyWB.solver.study import StudyError
    mech, st = _setup(doc)
    st.Scheduler, st.Workers = scheduler, workers
    before = _state(doc)
    with pytest.raises(StudyError) as info:
        dstudy.run(st, executor=None)
    problems = [(p.element, p.field) for p in info.value.problems]
    assert (f"Study '{st.Label}'", field) in problems, problems
    assert words in str(info.value)
    assert _state(doc) == before and st.Table == ""


@pytest.mark.freecad
def test_workers_kept_for_later_do_not_stop_a_scheduler(doc):  # noqa: F811
    from MultibodyWB.document import study as dstudy
    mech, st = _setup(doc)
    st.Scheduler, st.Workers = "tcp://127.0.0.1:8786", 100000
    assert dstudy.prepare(st).scheduler == "tcp://127.0.0.1:8786"
