"""Force laws: one module per law, each defining everything about it in one place.

A law's module holds:

- ``TYPES``: its :class:`~.base.ForceType` rows (name, markers, fields and their units, the
  kind of its spring): the schema check, the XML reader and writer and the GUI read them from
  :data:`FORCE_TYPES`;
- ``FIELDS`` and ``pack(forces, marker, magnitude, drawn_distance)``: the arrays its elements
  put into its own struct in the compiled :data:`Forces` (``F.<law>``; its kernels get that
  struct as their ``F``);
- ``add_loads`` and ``add_power`` (compiled): its loads on the bodies and their power, from the
  bodies' state arrays (:mod:`...maths.bodies`) — the **one** implementation that every
  formulation calls (MSTMM, Newton-Euler, the constrained method) through :func:`applied_loads`
  and :func:`force_power` (the MSTMM fixed-step kernel, ``mstmm.kernels._fixed_run``, calls
  them itself: a dispatcher that gets the struct keeps reference counts of all its arrays at
  every call);
- ``add_potential``: its elastic energy over many result rows; ``does_work``: whether its
  elements do work (magnitudes, dampers, friction);
- ``ELEMENTS`` (optional): the model's list its elements come from, when it is not
  ``forces`` filtered by the law's types (:mod:`.contact` packs ``contacts``, :mod:`.stop`
  the hinges' limits; :mod:`.cut_spring` the cut hinges a formulation gives :func:`pack`).

- ``LOADS_RETURN_DISSIPATION`` (optional, :mod:`.contact`): its ``add_loads`` returns the power
  its elements dissipate, which the fixed-step and adaptive runs take instead of calling its
  ``add_power``.

A law's own parameters (beyond direction, magnitude, stiffness, damping and free length) are
:class:`~.base.Param` rows of its types (``ForceType.params``): the model keeps them in
``Force.params``, and the file, the checks, the studies and the FreeCAD layer read the rows.

Adding a force law: write its module (:mod:`.spring_damper` is the fullest of the common
fields, :mod:`.nonlinear_bushing` the example of parameters of its own), add it to :data:`LAWS`
and run ``python3 scripts/generate_registry.py``: it writes the compiled dispatchers below
(:func:`has_loads`, :func:`applied_loads`, :func:`force_power`; numba compiles calls to named
functions only), the same calls in ``mstmm.kernels._fixed_run`` and ``mstmm.adaptive``, and the
schema's force types and parameter elements.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from ...maths.small import _INL
from . import (contact, cut_spring, nonlinear_bushing, point, rotational_spring_damper,
               spring_damper, stop)
from .base import ForceType

#: The registered laws, in the order their arrays are in :data:`Forces`.
LAWS = (point, spring_damper, rotational_spring_damper, contact, stop, cut_spring,
        nonlinear_bushing)

#: Every force type: name -> :class:`~.base.ForceType`.
FORCE_TYPES: dict[str, ForceType] = {t.name: t for law in LAWS for t in law.TYPES}

#: The law of each force type.
LAW_OF = {t.name: law for law in LAWS for t in law.TYPES}

#: Each law's name in :data:`Forces` (its module's name).
NAMES = tuple(law.__name__.rsplit(".", 1)[-1] for law in LAWS)

#: Each law's compiled struct: its ``FIELDS``, by :data:`NAMES`. Each is also a name of this
#: module (``Forces_point``...): numba's cache pickles the types of a kernel's arguments, and
#: pickle finds a class by its module and name.
LAW_STRUCTS = {}
for _name, _law in zip(NAMES, LAWS):
    LAW_STRUCTS[_name] = globals()[f"Forces_{_name}"] = namedtuple(
        f"Forces_{_name}", [f for f, _, _ in _law.FIELDS])
del _name, _law

#: The compiled struct of a model's forces: ``gravity`` (3,) and one struct of each law's
#: ``FIELDS`` (``F.point.pf_body``...). A law's kernels get only their own struct: a compiled
#: call counts a reference for every array of its arguments, the 42 of all the laws' arrays
#: at every call made the force laws most of an evaluation of a small model.
Forces = namedtuple("Forces", ("gravity",) + NAMES)

__all__ = ["FORCE_TYPES", "Forces", "ForceType", "LAWS", "LAW_OF", "applied_loads",
           "force_power", "add_potential", "does_work", "has_loads", "pack"]


def pack(model, marker, magnitude, drawn_distance, cut_hinges=()) -> Forces:
    """The :data:`Forces` struct of ``model``'s forces.

    Parameters
    ----------
    model : MultibodySystem
    marker : callable(MarkerRef) -> (body index or -1, R (3, 3), p (3,))
        A marker's attachment as the formulation's compiled code wants it (the marker's frame
        on its body; the ground's in global axes).
    magnitude : callable(Force) -> int
        Index of the force's magnitude among the time functions the caller evaluates (-1: none).
    drawn_distance : callable(Force) -> float
        The distance of a two-marker force's origins as drawn (m).
    cut_hinges : sequence of str
        The hinges that close loops by constraint loads in the caller's formulation (its order):
        their springs and dampers are :mod:`.cut_spring`'s elements (none by default).
    """
    structs = {"gravity": np.array(model.gravity, dtype=float)}
    # magnitudes numbered in the model's order of forces, whatever their laws
    index = {id(f): magnitude(f) for f in model.forces if "magnitude" in FORCE_TYPES[f.type].fields}
    for law_name, law in zip(NAMES, LAWS):
        source = getattr(law, "ELEMENTS", "forces")
        if source == "forces":
            names = {t.name for t in law.TYPES}
            elements = [f for f in model.forces if f.type in names]
        elif source == "cut_hinges":
            elements = [model.hinge(name) for name in cut_hinges]
        else:                                       # a list of its own (contacts)
            elements = list(getattr(model, source, ()))
        values = law.pack(elements, marker, lambda f: index[id(f)], drawn_distance)
        arrays = {}
        for name, kind, shape in law.FIELDS:
            v = values[name]
            if kind == "int":
                arrays[name] = np.array(v, dtype=np.int64).reshape((len(v),) + shape)
            else:
                arrays[name] = np.array(v, dtype=float).reshape((len(v),) + shape)
        structs[law_name] = LAW_STRUCTS[law_name](**arrays)
    return Forces(**structs)


# <generated: dispatch> written by scripts/generate_registry.py
@njit(**_INL)
def has_loads(F):
    """Whether any force element or contact is there (gravity alone: False)."""
    return (F.point.pf_body.shape[0] + F.spring_damper.sd_bi.shape[0] +
            F.rotational_spring_damper.rs_bi.shape[0] + F.contact.ct_int.shape[0] +
            F.stop.st_int.shape[0] + F.cut_spring.cs_int.shape[0] +
            F.nonlinear_bushing.nb_bi.shape[0] > 0)


@njit(**_INL)
def applied_loads(mags, F, mass, R, pb, pc, hp, w, vh, FC, TC):
    """Gravity and the applied forces on each body: FC (n, 3) force, TC (n, 3) torque about
    the mass centres ``pc``.

    ``mags`` holds the current values of the force magnitudes (time functions), indexed by the
    laws' magnitude indices (-1: none). The bodies' arrays as in :mod:`...maths.bodies`.
    Returns the power the contacts dissipate (W: what :func:`force_power` adds for them).
    """
    n = mass.size
    g = F.gravity
    for i in range(n):
        for a in range(3):
            FC[i, a] = mass[i] * g[a]
            TC[i, a] = 0.0
    dissipated = 0.0
    if F.point.pf_body.shape[0] > 0:
        point.add_loads(F.point, mags, R, pb, pc, hp, w, vh, FC, TC)
    if F.spring_damper.sd_bi.shape[0] > 0:
        spring_damper.add_loads(F.spring_damper, mags, R, pb, pc, hp, w, vh, FC, TC)
    if F.rotational_spring_damper.rs_bi.shape[0] > 0:
        rotational_spring_damper.add_loads(F.rotational_spring_damper, mags, R, pb, pc, hp, w, vh,
                                           FC, TC)
    if F.contact.ct_int.shape[0] > 0:
        dissipated = contact.add_loads(F.contact, mags, R, pb, pc, hp, w, vh, FC, TC)
    if F.stop.st_int.shape[0] > 0:
        stop.add_loads(F.stop, mags, R, pb, pc, hp, w, vh, FC, TC)
    if F.cut_spring.cs_int.shape[0] > 0:
        cut_spring.add_loads(F.cut_spring, mags, R, pb, pc, hp, w, vh, FC, TC)
    if F.nonlinear_bushing.nb_bi.shape[0] > 0:
        nonlinear_bushing.add_loads(F.nonlinear_bushing, mags, R, pb, pc, hp, w, vh, FC, TC)
    return dissipated


@njit(**_INL)
def force_power(mags, F, R, pb, pc, hp, w, vh, out):
    """Add the forces' power to ``out[1]`` and their dampers' dissipation to ``out[2]``."""
    if F.point.pf_body.shape[0] > 0:
        point.add_power(F.point, mags, R, pb, pc, hp, w, vh, out)
    if F.spring_damper.sd_bi.shape[0] > 0:
        spring_damper.add_power(F.spring_damper, mags, R, pb, pc, hp, w, vh, out)
    if F.rotational_spring_damper.rs_bi.shape[0] > 0:
        rotational_spring_damper.add_power(F.rotational_spring_damper, mags, R, pb, pc, hp, w, vh,
                                           out)
    if F.contact.ct_int.shape[0] > 0:
        contact.add_power(F.contact, mags, R, pb, pc, hp, w, vh, out)
    if F.stop.st_int.shape[0] > 0:
        stop.add_power(F.stop, mags, R, pb, pc, hp, w, vh, out)
    if F.cut_spring.cs_int.shape[0] > 0:
        cut_spring.add_power(F.cut_spring, mags, R, pb, pc, hp, w, vh, out)
    if F.nonlinear_bushing.nb_bi.shape[0] > 0:
        nonlinear_bushing.add_power(F.nonlinear_bushing, mags, R, pb, pc, hp, w, vh, out)
# </generated: dispatch>


def does_work(F) -> bool:
    """Whether a force element or contact does work (a magnitude, a damper, friction): without
    any, the forces are conservative (their energy is in ``energy.elastic``)."""
    return any(law.does_work(getattr(F, name)) for name, law in zip(NAMES, LAWS))


def add_potential(F, attach, ee) -> None:
    """Add the forces' elastic energy to ``ee`` (rows,); ``attach(body, R, p) -> (rotations
    (rows, 3, 3), points (rows, 3))`` of an attachment in every row."""
    for name, law in zip(NAMES, LAWS):
        law.add_potential(getattr(F, name), attach, ee)
