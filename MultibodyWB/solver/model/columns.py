"""The names, units and meanings of the result columns: what a model's results are called.

Which columns an element has follows from its type (:func:`hinge_quantities`); every column's unit
follows from its quantity alone (:func:`unit_of`). :mod:`..results.table` documents the
conventions (axes, reference points, signs); the checks of a model (:mod:`.validation`) use these
names to find elements whose columns would clash.
"""

from __future__ import annotations

from ..elements.couplers import COUPLER_COLUMNS
from ..elements.forces.contact import COLUMNS as CONTACT_COLUMNS
from ..elements.hinges import (COORDINATE_KIND, COORDINATE_UNIT, HINGE_TYPES, LOAD_UNIT,
                               QUATERNION_TYPES)


#: ``time`` column.
TIME_COLUMN = ("time", "s", "output time")


#: Per rigid body: quantity -> (unit, description). Global axes, SI units.
BODY_COLUMNS: dict[str, tuple[str, str]] = {
    "x": ("m", "global x of the base-frame origin"),
    "y": ("m", "global y of the base-frame origin"),
    "z": ("m", "global z of the base-frame origin"),
    "a": ("rad", "Bryant angle a (about x) of the base frame, continuous in time"),
    "b": ("rad", "Bryant angle b (about y') of the base frame, continuous in time"),
    "c": ("rad", "Bryant angle c (about z'') of the base frame, continuous in time"),
    **{f"R{i}{j}": ("1", f"rotation matrix entry row {i}, column {j} (base frame to global)")
       for i in (1, 2, 3) for j in (1, 2, 3)},
    "vx": ("m/s", "global x velocity of the base-frame origin"),
    "vy": ("m/s", "global y velocity of the base-frame origin"),
    "vz": ("m/s", "global z velocity of the base-frame origin"),
    "wx": ("rad/s", "angular velocity, global x"),
    "wy": ("rad/s", "angular velocity, global y"),
    "wz": ("rad/s", "angular velocity, global z"),
    "ax": ("m/s^2", "global x acceleration of the base-frame origin"),
    "ay": ("m/s^2", "global y acceleration of the base-frame origin"),
    "az": ("m/s^2", "global z acceleration of the base-frame origin"),
    "alphax": ("rad/s^2", "angular acceleration, global x"),
    "alphay": ("rad/s^2", "angular acceleration, global y"),
    "alphaz": ("rad/s^2", "angular acceleration, global z"),
}


def _hinge_columns() -> dict[str, tuple[str, str]]:
    cols = {}
    rate = {"m": "m/s", "rad": "rad/s"}
    acc = {"m": "m/s^2", "rad": "rad/s^2"}
    for c, kind in COORDINATE_KIND.items():
        u = COORDINATE_UNIT[kind]
        what = ("translation along the output marker's " + c if kind == "translation" else
                "rotation " + c + " (Bryant angle; continuous for spherical, free, bushing)")
        cols[c] = (u, f"hinge coordinate: {what}")
        note = (" (spherical, free and bushing hinges have wx .. alphaz instead)"
                if kind == "rotation" else "")
        cols[f"{c}_rate"] = (rate[u], f"rate of coordinate {c}{note}")
        cols[f"{c}_acc"] = (acc[u], f"second derivative of coordinate {c}{note}")
        cols[f"{c}_drive"] = (LOAD_UNIT[kind], f"generalised load the driver of {c} applies")
        cols[f"{c}_stop"] = (LOAD_UNIT[kind], f"generalised load of the stop of {c} (its limits; "
                                              "0 between them)")
    for a in "wxyz":
        cols[f"q{a}"] = ("1", f"quaternion component {a} of the relative rotation "
                              "(spherical, free, bushing)")
    for a in "xyz":
        cols[f"w{a}"] = ("rad/s", f"relative angular velocity, output-marker {a} "
                                  "(spherical, free, bushing)")
    for a in "xyz":
        cols[f"alpha{a}"] = ("rad/s^2", f"rate of the relative angular velocity w{a} "
                                        "(spherical, free, bushing)")
    for a in "xyz":
        cols[f"F{a}"] = ("N", f"reaction force on the input body, global {a}")
    for a in "xyz":
        cols[f"T{a}"] = ("N m", f"reaction torque on the input body about the input marker "
                                f"origin, global {a}")
    return cols


#: Per hinge: quantity -> (unit, description).
HINGE_COLUMNS: dict[str, tuple[str, str]] = _hinge_columns()

#: Cut hinges (closed loops, ``constrained`` method): how far the loop is from closed, as the norm
#: of the loop-closure residual over the hinge's constrained directions.
HINGE_COLUMNS.update({
    "closure_gap": ("m", "cut hinge: loop-closure error, translation"),
    "closure_angle": ("rad", "cut hinge: loop-closure error, rotation"),
    "closure_gap_rate": ("m/s", "cut hinge: loop-closure error at velocity level, translation"),
    "closure_angle_rate": ("rad/s", "cut hinge: loop-closure error at velocity level, rotation"),
})


#: System energies: ``energy.<quantity>`` -> (unit, description).
ENERGY_COLUMNS: dict[str, tuple[str, str]] = {
    "kinetic": ("J", "kinetic energy of all bodies"),
    "gravity": ("J", "potential energy of gravity, -sum m g . r_C"),
    "elastic": ("J", "energy stored in hinge springs, spring-dampers, rotational "
                     "spring-dampers and contacts"),
    "potential": ("J", "gravity + elastic"),
    "total": ("J", "kinetic + potential"),
    "work_drivers": ("J", "work done since t = 0 by the drivers (prescribed hinge coordinates, "
                          "motors)"),
    "work_forces": ("J", "work done since t = 0 by the applied forces: point forces and "
                         "torques, the time-function part of spring-dampers"),
    "dissipated": ("J", "energy dissipated since t = 0 by the dampers of hinges (bushings "
                        "included), spring-dampers and rotational spring-dampers, and by "
                        "contacts (damping and friction)"),
    "residual": ("J", "energy balance residual (drift): total - total(0) - work_drivers - "
                      "work_forces + dissipated"),
}


#: The energy-balance columns (:data:`ENERGY_COLUMNS`): works and dissipation since t = 0 and
#: the residual of the balance.
BALANCE_COLUMNS = ("work_drivers", "work_forces", "dissipated", "residual")




def hinge_quantities(hinge_type: str, driven=()) -> list[str]:
    """The quantities (column suffixes) a hinge of ``hinge_type`` has, in column order.

    ``driven`` lists the driven coordinates (each adds ``<coordinate>_drive``).
    """
    coords = list(HINGE_TYPES[hinge_type].coordinates)
    out = list(coords)
    if hinge_type in QUATERNION_TYPES:
        trans = [c for c in coords if COORDINATE_KIND[c] == "translation"]
        out += ["qw", "qx", "qy", "qz"]
        out += [f"{c}_rate" for c in trans] + ["wx", "wy", "wz"]
        out += [f"{c}_acc" for c in trans] + ["alphax", "alphay", "alphaz"]
    else:
        out += [f"{c}_rate" for c in coords] + [f"{c}_acc" for c in coords]
    out += ["Fx", "Fy", "Fz", "Tx", "Ty", "Tz"]
    out += [f"{c}_drive" for c in coords if c in driven]
    return out


def unit_of(name: str) -> str:
    """The unit of a column, from its name (raises KeyError for a name that is no column)."""
    if name == "time":
        return "s"
    owner, _, qty = name.rpartition(".")
    if not owner:
        raise KeyError(f"'{name}' is not a column name")
    if owner == "energy" and qty in ENERGY_COLUMNS:
        return ENERGY_COLUMNS[qty][0]
    if qty in BODY_COLUMNS:
        return BODY_COLUMNS[qty][0]
    if qty in HINGE_COLUMNS:
        return HINGE_COLUMNS[qty][0]
    if qty in CONTACT_COLUMNS:
        return CONTACT_COLUMNS[qty][0]
    if qty in COUPLER_COLUMNS:
        return COUPLER_COLUMNS[qty][0]
    raise KeyError(f"'{name}': no quantity '{qty}' (see results.BODY_COLUMNS, HINGE_COLUMNS, "
                   "CONTACT_COLUMNS, ENERGY_COLUMNS)")


def describe(name: str) -> str:
    """A one-line description of a column, with its unit."""
    if name == "time":
        return f"time [s]: {TIME_COLUMN[2]}"
    owner, _, qty = name.rpartition(".")
    for table in ((ENERGY_COLUMNS,) if owner == "energy" else ()) + (BODY_COLUMNS, HINGE_COLUMNS,
                                                                    CONTACT_COLUMNS,
                                                                    COUPLER_COLUMNS):
        if qty in table:
            unit, text = table[qty]
            return f"{name} [{unit}]: {text}"
    raise KeyError(f"'{name}' is not a column name")


def columns_table() -> str:
    """Every documented quantity with its unit, as text (for documentation and ``--help``)."""
    lines = [f"{'time':<24} {'s':<8} {TIME_COLUMN[2]}"]
    for title, prefix, table in (("bodies", "<Body>.", BODY_COLUMNS),
                                 ("hinges", "<Hinge>.", HINGE_COLUMNS),
                                 ("contacts", "<Contact>.", CONTACT_COLUMNS),
                                 ("couplers", "<Coupler>.", COUPLER_COLUMNS),
                                 ("system", "energy.", ENERGY_COLUMNS)):
        lines.append(f"-- {title}")
        for q, (unit, text) in table.items():
            lines.append(f"{prefix + q:<24} {unit:<8} {text}")
    return "\n".join(lines)
