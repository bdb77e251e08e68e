#!/usr/bin/env python3
"""Write the code and schema that follow from the force laws' registry.

The registry is ``LAWS`` in ``MultibodyWB/solver/elements/forces/__init__.py`` (one module per
law, its ``TYPES`` rows with their :class:`Param` rows). From it this script writes, between the
``<generated ...>`` and ``</generated ...>`` markers:

- ``elements/forces/__init__.py``: the compiled dispatchers ``has_loads``, ``applied_loads`` and
  ``force_power`` (numba compiles calls to named functions only, so a dispatcher is a list of
  calls, one per law);
- ``methods/mstmm/kernels.py`` (``_fixed_run``) and ``methods/mstmm/adaptive.py``: the same
  calls made in place, each law with its own struct (see ``_fixed_run``'s docstring why);
- ``resources/multibody.xsd``: the ``ForceTypeName`` enumeration with each type's
  documentation, and the elements of the laws' own parameters in ``Force``.

Run it after adding or changing a law: ``python3 scripts/generate_registry.py``;
``--check`` says which files differ and exits 1 (``tests/test_registry_generation.py`` does the
same). The output is checked in.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import textwrap
from xml.sax.saxutils import escape

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

PKG = os.path.join(ROOT, "MultibodyWB")
FILES = {
    "forces": os.path.join(PKG, "solver", "elements", "forces", "__init__.py"),
    "kernels": os.path.join(PKG, "solver", "methods", "mstmm", "kernels.py"),
    "adaptive": os.path.join(PKG, "solver", "methods", "mstmm", "adaptive.py"),
    "xsd": os.path.join(PKG, "resources", "multibody.xsd"),
}

#: The XML element of each common field of a force type, in the order the documentation names
#: them.
FIELD_TAGS = (("direction", "Direction"), ("magnitude", "Magnitude"),
              ("stiffness", "Stiffness"), ("damping", "Damping"),
              ("free_length", "FreeLength"))

LOAD_ARGS = "mags, R, pb, pc, hp, w, vh, FC, TC"
POWER_ARGS = "mags, R, pb, pc, hp, w, vh, {out}"


def _laws():
    from MultibodyWB.solver.elements import forces
    return [(name, law) for name, law in zip(forces.NAMES, forces.LAWS)]


def _count(law) -> str:
    """The number of a law's elements: its first array's first dimension."""
    return f"{law.FIELDS[0][0]}.shape[0]"


def _returns_dissipation(law) -> bool:
    return bool(getattr(law, "LOADS_RETURN_DISSIPATION", False))


# --------------------------------------------------------------------------------------------------
# Python
# --------------------------------------------------------------------------------------------------

def forces_dispatch() -> str:
    """``has_loads``, ``applied_loads`` and ``force_power`` of elements/forces/__init__.py."""
    laws = _laws()
    counts = " + ".join(f"F.{n}.{_count(law)}" for n, law in laws)
    out = ['@njit(**_INL)', 'def has_loads(F):',
           '    """Whether any force element or contact is there (gravity alone: False)."""']
    out += _wrap(f"return ({counts} > 0)", "    ", "            ")
    out += ['', '', '@njit(**_INL)',
            'def applied_loads(mags, F, mass, R, pb, pc, hp, w, vh, FC, TC):',
            '    """Gravity and the applied forces on each body: FC (n, 3) force, TC (n, 3) '
            'torque about',
            '    the mass centres ``pc``.',
            '',
            '    ``mags`` holds the current values of the force magnitudes (time functions), '
            'indexed by the',
            "    laws' magnitude indices (-1: none). The bodies' arrays as in "
            ":mod:`...maths.bodies`.",
            '    Returns the power the contacts dissipate (W: what :func:`force_power` adds for '
            'them).',
            '    """',
            '    n = mass.size',
            '    g = F.gravity',
            '    for i in range(n):',
            '        for a in range(3):',
            '            FC[i, a] = mass[i] * g[a]',
            '            TC[i, a] = 0.0',
            '    dissipated = 0.0']
    for n, law in laws:
        out.append(f"    if F.{n}.{_count(law)} > 0:")
        lhs = "dissipated = " if _returns_dissipation(law) else ""
        out += _wrap(f"{lhs}{n}.add_loads(F.{n}, {LOAD_ARGS})", "        ", "            ")
    out.append("    return dissipated")
    out += ['', '', '@njit(**_INL)',
            'def force_power(mags, F, R, pb, pc, hp, w, vh, out):',
            '    """Add the forces\' power to ``out[1]`` and their dampers\' dissipation to '
            '``out[2]``."""']
    for n, law in laws:
        out.append(f"    if F.{n}.{_count(law)} > 0:")
        out += _wrap(f"{n}.add_power(F.{n}, {POWER_ARGS.format(out='out')})", "        ",
                     "            ")
    return "\n".join(out) + "\n"


def inline_imports() -> str:
    names = sorted(n for n, _ in _laws())
    return "\n".join(_wrap("from ...elements.forces import (" + ", ".join(names) + ")", "",
                           "                                 ")) + "\n"


def inline_unpack() -> str:
    """Each law's struct and count, taken out once before the loop (``f_<law>``,
    ``n_<law>``)."""
    out = []
    for n, law in _laws():
        out.append(f"f_{n} = F.{n}")
        out.append(f"n_{n} = f_{n}.{_count(law)}")
    return "\n".join(out) + "\n"


def inline_loads() -> str:
    """The laws' loads, called in place (after the gravity loads are set)."""
    out = ["dissipated = 0.0"]
    for n, law in _laws():
        out.append(f"if n_{n} > 0:")
        lhs = "dissipated = " if _returns_dissipation(law) else ""
        out += _wrap(f"{lhs}{n}.add_loads(f_{n}, {LOAD_ARGS})", "    ", "        ")
    return "\n".join(out) + "\n"


def inline_power() -> str:
    """The laws' power into ``pf`` (the loads' pass gave the contacts' dissipation)."""
    out = ["pf[1] = 0.0", "pf[2] = 0.0"]
    for n, law in _laws():
        if _returns_dissipation(law):
            out.append("pf[2] += dissipated")
            continue
        out.append(f"if n_{n} > 0:")
        out += _wrap(f"{n}.add_power(f_{n}, {POWER_ARGS.format(out='pf')})", "    ", "        ")
    return "\n".join(out) + "\n"


#: Columns of a generated line (the region's own indentation included).
WIDTH = 100
_width = [WIDTH]


def _wrap(line: str, indent: str, cont: str) -> list:
    """``line`` at ``indent``, broken at spaces into lines of at most ``width`` columns; after an
    opening parenthesis, continued under the character after it (``cont`` otherwise)."""
    width = _width[0]
    paren = line.find("(")
    if paren >= 0 and len(indent) + len(line) > width:
        cont = " " * (len(indent) + paren + 1)
    return textwrap.wrap(line, width=width, initial_indent=indent, subsequent_indent=cont,
                         break_long_words=False, break_on_hyphens=False)


# --------------------------------------------------------------------------------------------------
# Schema
# --------------------------------------------------------------------------------------------------

def _param_unit(p) -> str:
    return p.unit + (", per axis" if p.size == 3 else "")


def xsd_force_types() -> str:
    from MultibodyWB.solver.elements.forces import FORCE_TYPES
    out = []
    for name, kind in FORCE_TYPES.items():
        markers = "Input, Output" if kind.markers == 2 else "Input"
        uses = []
        for field, tag in FIELD_TAGS:
            if field in kind.fields:
                unit = kind.units.get(field, "1")
                uses.append(tag if unit == "1" else f"{tag} ({unit})")
        uses += [f"{p.tag} ({_param_unit(p)})" for p in kind.params]
        doc = (f"{kind.description}. Markers: {markers}. "
               f"Uses: {', '.join(uses) or 'nothing else'}.")
        out.append(f'<xs:enumeration value="{name}">')
        out.append(f'  <xs:annotation><xs:documentation>{escape(doc)}'
                   f'</xs:documentation></xs:annotation>')
        out.append('</xs:enumeration>')
    return "\n".join(out) + "\n"


def xsd_force_params() -> str:
    from MultibodyWB.solver.elements.forces import FORCE_TYPES
    seen = {}
    for name, kind in FORCE_TYPES.items():
        for p in kind.params:
            if p.tag in dict(FIELD_TAGS).values() or p.tag in ("Input", "Output"):
                raise SystemExit(f"force type {name}: parameter {p.tag} is a common field's "
                                 f"element; give it a name of its own")
            if p.tag in seen and (seen[p.tag][1].unit, seen[p.tag][1].size) != (p.unit, p.size):
                raise SystemExit(f"parameter {p.tag}: {name} and {seen[p.tag][0][0]} give it "
                                 f"different units or sizes")
            seen.setdefault(p.tag, ([], p))[0].append(name)
    out = ['<xs:choice minOccurs="0" maxOccurs="unbounded">']
    for tag, (types, p) in seen.items():
        least = ("" if p.minimum is None else
                 f" Least value {p.minimum:g}." if p.minimum != 0 else " Not negative.")
        doc = (f"{p.doc[:1].upper()}{p.doc[1:]}, {p.unit} ({', '.join(types)}). "
               f"Absent: {p.default:g}.{least}")
        kind = "Vector3" if p.size == 3 else "Number"
        out.append(f'  <xs:element name="{tag}" type="{kind}">')
        out.append(f'    <xs:annotation><xs:documentation>{escape(doc)}'
                   f'</xs:documentation></xs:annotation>')
        out.append('  </xs:element>')
    out.append('</xs:choice>')
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------------------------------
# Regions
# --------------------------------------------------------------------------------------------------

#: (file key, region name, generator)
REGIONS = (
    ("forces", "dispatch", forces_dispatch),
    ("kernels", "imports", inline_imports),
    ("kernels", "unpack", inline_unpack),
    ("kernels", "loads", inline_loads),
    ("kernels", "power", inline_power),
    ("adaptive", "imports", inline_imports),
    ("adaptive", "unpack", inline_unpack),
    ("adaptive", "loads", inline_loads),
    ("adaptive", "power", inline_power),
    ("xsd", "force types", xsd_force_types),
    ("xsd", "force parameters", xsd_force_params),
)


def _markers(key: str, region: str):
    if key == "xsd":
        return (re.compile(rf"^([ \t]*)<!-- <generated: {region}>.*-->\n", re.M),
                re.compile(rf"^[ \t]*<!-- </generated: {region}> -->\n", re.M))
    return (re.compile(rf"^([ \t]*)# <generated: {region}>.*\n", re.M),
            re.compile(rf"^[ \t]*# </generated: {region}>\n", re.M))


def regenerate(key: str, text: str) -> str:
    """``text`` (the file ``key``) with its generated regions written anew."""
    for k, region, make in REGIONS:
        if k != key:
            continue
        start, end = _markers(key, region)
        m = start.search(text)
        e = end.search(text, m.end()) if m else None
        if m is None or e is None:
            raise SystemExit(f"{FILES[key]}: no region '{region}' (its two marker lines)")
        indent = m.group(1)
        _width[0] = WIDTH - len(indent)
        body = "".join((indent + line if line.strip() else line) + "\n"
                       for line in make().splitlines())
        text = text[:m.end()] + body + text[e.start():]
    return text


def outputs() -> dict:
    """Path -> (the text on disk, the text the registry gives)."""
    out = {}
    for key, path in FILES.items():
        with open(path, encoding="utf-8") as fh:
            old = fh.read()
        out[path] = (old, regenerate(key, old))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true",
                    help="write nothing; list the files that differ and exit 1 if any does")
    args = ap.parse_args(argv)
    stale = []
    for path, (old, new) in outputs().items():
        if old != new:
            stale.append(os.path.relpath(path, ROOT))
            if not args.check:
                with open(path + ".tmp", "w", encoding="utf-8") as fh:
                    fh.write(new)
                os.replace(path + ".tmp", path)
    if args.check:
        for p in stale:
            print(f"out of date: {p}")
        return 1 if stale else 0
    for p in stale:
        print(f"written: {p}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
