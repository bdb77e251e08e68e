"""One unit formatter for every view (issue 32 item 6), headless FreeCAD: the player's loads, the
FEM loads table, the study table (parameters, objectives, constraint margins) and the plots show
values in the document's unit schema with sensible prefixes: torques and moments in N·m (never J
or eV), stiffnesses in N/m and N·m/rad (never ``mm^2*kg/(s^2*deg)``), round-off as 0 (never
``2e-12 mN``), a constraint's margin in the unit its bound is written in."""

import math
import re

import pytest

pytestmark = pytest.mark.freecad

#: What a designer cannot read: base units spelled out, a torque as an energy, round-off shown.
UNREADABLE = re.compile(r"mm\^\d\*kg|kg/s\b|/\(s\^\d|\*deg\)|\beV\b|e-\d\d ")


@pytest.fixture
def units(freecad):
    from MultibodyWB.objects import units
    schema = freecad.Units.getSchema()
    freecad.Units.setSchema(0)                  # Standard (mm/kg/s/degree), FreeCAD's default
    yield units
    freecad.Units.setSchema(schema)


@pytest.mark.parametrize("value, si, text", [
    (0.08, "m", "80 mm"),
    (0.0021, "N m", "2.1 mN·m"),
    (0.0021, "N*m", "2.1 mN·m"),
    (2500.0, "N·m", "2.5 kN·m"),
    (1.6e-19, "N m", "0 N·m"),                    # FreeCAD's schema: 1 eV
    (2e-15, "N", "0 N"),                          # FreeCAD's schema: 2e-12 mN
    (3e-7, "N", "300 nN"),
    (12.5, "N", "12.5 N"),
    (2.0, "N m/rad", "2 N·m/rad"),
    (2.0, "m^2*kg/(s^2*rad)", "2 N·m/rad"),       # a hinge stiffness as the study writes it
    (0.035, "N*m/rad", "35 mN·m/rad"),
    (1000.0, "N/m", "1 kN/m"),
    (1000.0, "kg/s^2", "1 kN/m"),
    (10.0, "N s/m", "10 N·s/m"),
    (10.0, "kg/s", "10 N·s/m"),
    (0.05, "N*m*s/rad", "50 mN·m·s/rad"),
    (7.9e-7, "kg m^2", "0.79 kg·mm²"),
    (0.3, "J", "300 mJ"),
    (1.5, "1", "1.5"),
])
def test_values_in_the_documents_units_with_sensible_prefixes(units, value, si, text):
    shown = units.si_text(value, si)
    assert shown == text
    assert not UNREADABLE.search(shown + " ")


def test_round_off_against_the_scale_of_what_it_is_shown_with(units):
    assert units.si_text(3e-9, "N m", reference=40.0) == "0 N·m"
    assert units.si_text(3e-5, "N m", reference=40.0) == "30 µN·m"     # small, not round-off
    assert units.si_text(-2.5, "N", reference=40.0) == "-2.5 N"
    assert units.si_text(0.0, "N m") == "0 N·m"
    assert units.si_text(math.nan, "N") == "nan N"


def test_vectors_and_internal_units(units):
    # the FEM loads table: a moment in FreeCAD's internal units (mN mm = 1e-6 N m)
    assert units.user_vector_text([0.0, 1e-20, 2.5e6], "N*m") == "(0, 0, 2.5) N·m"
    assert units.user_text(2.5e6, "N*m") == "2.5 N·m"
    assert units.user_vector_text([1200e3, -300e3, 0.0], "N") == "(1.2, -0.3, 0) kN"
    assert units.user_vector_text([8.5, 6, 6.5], "mm") == "(8.5, 6, 6.5) mm"
    assert units.user_text(1000.0, "mm^3") == "1 ml"


def _schema(freecad, start):
    """The index of FreeCAD's unit schema whose name starts with ``start`` (0.20 and 1.0 number
    them differently)."""
    names = [freecad.Units.listSchemas(k) for k in range(freecad.Units.listSchemas().__len__())]
    return next(k for k, n in enumerate(names) if n.startswith(start))


def _schema_text(freecad, internal, unit):
    """A quantity (internal units) as the current schema shows it, with 4 significant digits."""
    _, scale, name = freecad.Units.Quantity(f"{internal} {unit}").getUserPreferred()
    return f"{internal / scale:.4g} {name}"


@pytest.mark.parametrize("schema", ["MKS", "US customary", "Building Euro", "FEM"])
def test_the_schema_is_followed(freecad, units, schema):
    freecad.Units.setSchema(_schema(freecad, schema))
    try:
        # lengths and speeds as the schema shows them
        assert units.si_text(2.5, "m") == _schema_text(freecad, 2500.0, "mm")
        assert units.si_text(0.25, "m/s") == _schema_text(freecad, 250.0, "mm/s")
        # torques and forces readable whatever the schema (US customary spells a force
        # mm*kg/s^2)
        assert units.si_text(0.0021, "N m") == "2.1 mN·m"
        assert units.si_text(2.0, "N*m/rad") == "2 N·m/rad"
        assert not UNREADABLE.search(units.si_text(5.0, "N") + " ")
    finally:
        freecad.Units.setSchema(0)
    assert units.si_text(2.5, "m") == "2500 mm"


def test_the_study_table_units(freecad, units):
    from MultibodyWB.document import study as dstudy
    # a hinge stiffness parameter, as the study stores its SI unit
    assert dstudy.shown(2.0, "m^2*kg/(s^2*rad)") == "2 N·m/rad"
    assert dstudy.display_scale("m^2*kg/(s^2*rad)", 2.0) == (1.0, "N·m/rad")
    assert dstudy.display_scale("m", 0.1) == (1000.0, "mm")
    row = dstudy.StoredRow(0, (2.0,), (0.95, 0.0123, 0.31), (0.6,), (0.0123, -10.0),
                           False, "ok", "", 1.0)
    kept = dstudy.StoredTable(["Pivot.StiffnessRz"], ["m^2*kg/(s^2*rad)"],
                              ["period(Link – Base revolute.rz)", "max(abs(Pivot.Fx))",
                               "max(Pivot.rz) * 2"],
                              ["max(Slider.z) <= 50 mm", "min(Cam.Fn) > 1 kN"], [row], 0)
    objs = dstudy.objective_scales(kept)
    assert objs[0] == (1.0, "s")
    assert objs[1][1] == "mN" and objs[1][0] == pytest.approx(1000.0)
    assert objs[2] == (1.0, "")                    # no single unit: a plain number
    margins = dstudy.margin_scales(kept)
    assert margins[0][1] == "mm" and margins[0][0] == pytest.approx(1000.0)    # as written
    assert margins[1][1] == "kN" and margins[1][0] == pytest.approx(1e-3)


def test_the_plots_use_the_same_units(freecad, units):
    pytest.importorskip("matplotlib")
    try:
        from MultibodyWB.gui import plot_panel
    except ImportError as exc:                     # no Qt in this FreeCAD console
        pytest.skip(str(exc))
    assert plot_panel._freecad_unit("N m") == (1.0, "N·m")
    assert plot_panel._freecad_unit("m") == (1000.0, "mm")
    assert plot_panel._freecad_unit("1") == (1.0, plot_panel.NO_UNIT)
