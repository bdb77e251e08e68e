"""Issue 12 through FreeCAD: hostile driver expressions give problems, never an exception."""

import pytest

from test_fc_objects import _pendulum, doc  # noqa: F401  (the doc fixture)


@pytest.mark.parametrize("expression, words", [
    ("-" * 5000 + "t", "nested more than 100 levels"),     # was RecursionError in collect
    ("1/t", "t = 0 s: division by zero"),                   # was a bare ZeroDivisionError
    ("9**9**9", "overflow"),                                # froze FreeCAD (big-integer power)
])
def test_collect_reports_a_bad_driver_of_the_hinge(freecad, doc, expression, words):
    from MultibodyWB.objects import export
    p = _pendulum(freecad, doc)
    p["hinge"].DriverRz = expression
    doc.recompute()
    problems = [str(x) for x in export.collect(p["mech"]).problems]
    assert any("Joint" in m and "Driver" in m and words in m for m in problems), problems
