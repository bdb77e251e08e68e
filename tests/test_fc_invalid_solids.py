"""Issue 12's silent acceptances on the FreeCAD side: a solid whose recompute failed (a
``Part::Box`` of length 0, state Invalid) and a solid 1e300 mm away are problems of the body,
naming the solid and what is wrong, never a model built from a stale or rounded-away shape."""

from test_fc_objects import _pendulum, doc  # noqa: F401  (the doc fixture)


def _problems(mech):
    from MultibodyWB.objects import export
    result = export.collect(mech)
    return result, [str(x) for x in result.problems]


def test_box_of_length_0_is_invalid_and_refused_naming_the_solid_and_its_length(freecad, doc):
    p = _pendulum(freecad, doc)
    _, before = _problems(p["mech"])
    assert before == []
    p["link"].Length = 0
    doc.recompute()
    assert "Invalid" in p["link"].State          # FreeCAD keeps the last valid shape
    assert p["link"].Shape.Volume > 0.0
    _, problems = _problems(p["mech"])
    assert problems == ["Body 'Link', property Solids: 'LinkSolid' failed to recompute "
                        "(Length = 0 mm): its shape is the last valid one, not what its "
                        "properties say; fix it and recompute"]
    # fixed, the problem goes
    p["link"].Length = 50
    doc.recompute()
    assert _problems(p["mech"])[1] == []


def test_solid_1e300_mm_away_is_refused_naming_the_solid_and_its_placement(freecad, doc):
    p = _pendulum(freecad, doc)
    p["link"].Placement.Base = freecad.Vector(1e300, 0, 20)
    doc.recompute()
    _, problems = _problems(p["mech"])
    assert ("Body 'Link', property Solids: 'LinkSolid' reaches 1e+300 mm from the origin (more "
            "than 1e+09 mm): its mass properties are lost in rounding there; check its "
            "Placement and units") in problems
    # 1 km away is still a mechanism (the limit is the solver's 1e6 m)
    p["link"].Placement.Base = freecad.Vector(1e6, 0, 20)
    doc.recompute()
    assert not [m for m in _problems(p["mech"])[1] if "LinkSolid" in m]
