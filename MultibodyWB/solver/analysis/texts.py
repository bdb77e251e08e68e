"""Numbers in the start check's and the assembly's messages, written so that people can read them.

A message that compares two values ("prescribed as X, but the loop gives Y") must show them
different when they are: the tolerances of the start (1e-10 of a rate, 0.01 mm, 0.01 deg) are
finer than the six or four significant digits a message usually gives, and "prescribed as 101.191
deg/s, the loop gives 101.191 deg/s" leaves a user nothing to act on. :func:`pair` gives both
with the fewest significant digits at which they read differently, and a value that is zero but
for round-off as 0.
"""

from __future__ import annotations

#: A value within this fraction of the other value of its pair (or of 1 when both are smaller)
#: is zero but for round-off and is shown as 0.
ROUND_OFF = 1e-12


def without_round_off(value: float, other: float = 0.0) -> float:
    """``value``, or 0.0 when it is zero but for round-off: within :data:`ROUND_OFF` of
    ``max(1, |other|)`` (``other``: the value it is compared with, if any; both in SI units)."""
    return 0.0 if abs(value) <= ROUND_OFF * max(1.0, abs(other)) else value


def pair(a: float, b: float, scale: float = 1.0, least: int = 6, most: int = 17
         ) -> tuple[str, str]:
    """``a * scale`` and ``b * scale`` as texts (``g`` format, no unit) that differ when ``a`` and
    ``b`` differ: ``least`` significant digits, more (up to ``most``: 17 tell any two doubles
    apart) until the two read differently. ``a`` and ``b`` in SI units, zero but for round-off
    shown as 0 (see :func:`without_round_off`); ``scale`` turns them into the unit shown.

    >>> pair(1.7661218063696502, 1.766122, 57.29577951308232)
    ('101.19133', '101.19134')
    >>> pair(0.1, 0.1 + 1e-17, 1e3, least=4)
    ('100', '100')
    """
    a, b = without_round_off(a, b), without_round_off(b, a)
    sa, sb = a * scale, b * scale
    for digits in range(least, most + 1):
        ta, tb = f"{sa:.{digits}g}", f"{sb:.{digits}g}"
        if ta != tb:
            break
    else:
        ta, tb = f"{sa:.{least}g}", f"{sb:.{least}g}"     # equal (or NaN)
    return ta, tb
