"""The power of what does work on a mechanism besides gravity and springs, compiled, for every
method: the drivers', the applied forces' and the dampers' (:func:`power_flows`), from one
instant's coordinates, generalised loads and body kinematics. The energy balance integrates it
(:mod:`...results`)."""

from __future__ import annotations

from numba import njit

from ...elements.forces import force_power
from ...maths.small import _JIT


@njit(**_JIT)
def power_flows(q, u, tau, mags, driven, drv_q, hk, hc, href, F, R, pb, pc, hp, w, vh, out):
    """The power of what does work on the system besides gravity and springs, into ``out`` (3,).

    ``out[0]``: drivers, the sum over driven coordinates of the driver's load (the hinge's
    generalised load ``tau`` minus its own spring and damper, ``tau + k (q - ref) + c u``) times
    the coordinate's rate; ``out[1]``: applied forces, the magnitudes of point forces and
    torques (``F . v`` of the material point, ``T . w``) and the time-function part of
    spring-dampers (``-f(t) dL/dt``); ``out[2]``: the power the dampers dissipate (>= 0): hinge
    dampers ``c u^2`` on every velocity coordinate, spring-dampers ``c (dL/dt)^2``, rotational
    spring-dampers ``c |w_in - w_out|^2``. Springs and gravity are conservative: their power is
    minus the rate of the potential energy (not here). W (N m/s). ``q``, ``u``, ``tau`` and the
    body kinematics ``R pb pc hp w vh`` of an evaluation; ``tau`` must hold the drivers' loads
    (each method's solution fills them). The hinges' part and the force elements' part are
    :func:`hinge_power` and :func:`force_power` (mstmm's fixed-step runs take the second from
    the same pass as the loads, only for a model with force elements).
    """
    hinge_power(q, u, tau, driven, drv_q, hk, hc, href, out)
    force_power(mags, F, R, pb, pc, hp, w, vh, out)


@njit(**_JIT)
def hinge_power(q, u, tau, driven, drv_q, hk, hc, href, out):
    """The drivers' power into ``out[0]``, the hinge dampers' into ``out[2]``, ``out[1] = 0``
    (see :func:`power_flows`)."""
    pd = 0.0
    pdis = 0.0
    for j in range(u.size):
        uj = u[j]
        if hc[j] != 0.0:
            pdis += hc[j] * uj * uj
        if driven[j]:
            pd += (tau[j] + hk[j] * (q[drv_q[j]] - href[j]) + hc[j] * uj) * uj
    out[0] = pd
    out[1] = 0.0
    out[2] = pdis
