"""Quarter car crossing a bump, and the design study that tunes its suspension (seed 000's tank
example in small: minimise the RMS vertical acceleration of the hull over the suspension's
parameters).

Three bodies stacked on vertical prismatic hinges (global z):

- the **road** plate under the tyre, driven by the road profile: a bump :data:`BUMP_HEIGHT` high
  and :data:`BUMP_LENGTH` long met at :data:`SPEED` (a quintic hill, ``step5`` up and down: the
  road's displacement, speed and acceleration are continuous);
- the **wheel** (unsprung mass ``m_u``) on the road through the **tyre**, a spring ``k_t``;
- the **hull** (a quarter of the sprung mass, ``m_s``) on the wheel through the **suspension**, a
  spring ``k_s`` and a damper ``c_s``.

The model describes the motion about the static equilibrium, which is how the parts are drawn:
the weight, carried by the springs' constant preload, is left out (``Gravity`` 0), so that a
study that changes ``k_s`` does not also move the start. The hinge coordinates are then
``Suspension.z = z_s - z_u`` and ``Tyre.z = z_u - z_r`` (displacements from the drawing), and

    ``m_s z_s'' = -k_s (z_s - z_u) - c_s (z_s' - z_u')``
    ``m_u z_u'' =  k_s (z_s - z_u) + c_s (z_s' - z_u') - k_t (z_u - z_r)``

(:func:`reference`: the same equations integrated by scipy, for the tests).

:func:`design_study` is the study of the demo: ``Suspension.Stiffness`` and ``Suspension.Damping``
within their ranges, the objective ``rms(Hull.az)`` (ride comfort), the constraint that the
suspension's travel stays within :data:`TRAVEL` (the rattle space; a soft suspension is
comfortable until it hits its bump stops).
"""

from __future__ import annotations

import numpy as np

from ..solver.model import massprops
from ..solver.model import Driver, MultibodySystem
from .parts import STEEL

SPRUNG_MASS = 300.0       #: kg, m_s (a quarter of the vehicle's sprung mass)
UNSPRUNG_MASS = 40.0      #: kg, m_u (wheel, hub, brake, half the axle)
TYRE_STIFFNESS = 2.0e5    #: N/m, k_t
SUSPENSION_STIFFNESS = 4.0e4   #: N/m, k_s: the stiff first design
SUSPENSION_DAMPING = 4.0e3     #: N s/m, c_s
SPEED = 10.0              #: m/s (36 km/h)
BUMP_HEIGHT = 0.06        #: m
BUMP_LENGTH = 1.0         #: m
BUMP_AT = 3.0             #: m of road before the bump
TRAVEL = 0.05             #: m, the rattle space: |Suspension.z| at most this
END_TIME = 2.5            #: s
WHEEL_CENTRE = 0.3        #: m above the road, as drawn
HULL_HEIGHT = 0.8         #: m, the hull's base frame above the road

#: The study of :func:`design_study`: ranges of the suspension's stiffness and damping.
STIFFNESS_RANGE = (1.0e4, 6.0e4)    #: N/m
DAMPING_RANGE = (5.0e2, 6.0e3)      #: N s/m


def road_expression(speed=SPEED, height=BUMP_HEIGHT, length=BUMP_LENGTH, at=BUMP_AT) -> str:
    """The road's height under the tyre as an expression in ``t`` (m): a quintic hill."""
    t0, t1, t2 = at / speed, (at + length / 2) / speed, (at + length) / speed
    return (f"step5(t, {t0!r}, 0, {t1!r}, {height!r}) - "
            f"step5(t, {t1!r}, 0, {t2!r}, {height!r})")


def build(stiffness=SUSPENSION_STIFFNESS, damping=SUSPENSION_DAMPING, speed=SPEED,
          bump_height=BUMP_HEIGHT, sprung_mass=SPRUNG_MASS, unsprung_mass=UNSPRUNG_MASS,
          tyre_stiffness=TYRE_STIFFNESS, end_time=END_TIME) -> MultibodySystem:
    """The quarter car (module docstring) with the suspension's ``stiffness`` (N/m) and
    ``damping`` (N s/m)."""
    m = MultibodySystem("QuarterCar", gravity=(0.0, 0.0, 0.0),
                        description="quarter car crossing a bump: hull, suspension, wheel, tyre, "
                                    "road input")
    g = m.set_ground(label="road bed")
    g_road = g.add_marker((0, 0, 0), label="road guide")
    # the road plate (driven: its mass carries no weight in the results)
    road_mp = massprops.box((0.4, 0.3, 0.02), STEEL, corner=(-0.2, -0.15, -0.02))
    road = m.add_body("Road", road_mp.mass, road_mp.ji, mass_center=road_mp.center,
                      density=STEEL, label="road under the tyre")
    r_guide = road.add_marker((0, 0, 0), label="road guide")
    r_tyre = road.add_marker((0, 0, WHEEL_CENTRE), label="tyre on the road")
    # wheel and hull: point-like masses with a plausible inertia (their rotation is held)
    wheel = m.add_body("Wheel", unsprung_mass, [0.8, 0.8, 1.2, 0, 0, 0],
                       position=(0, 0, WHEEL_CENTRE), label="wheel, hub and brake")
    w_tyre = wheel.add_marker((0, 0, 0), label="wheel centre")
    w_top = wheel.add_marker((0, 0, HULL_HEIGHT - WHEEL_CENTRE), label="suspension mount")
    hull = m.add_body("Hull", sprung_mass, [40.0, 60.0, 80.0, 0, 0, 0],
                      position=(0, 0, HULL_HEIGHT), label="quarter of the hull")
    h_mount = hull.add_marker((0, 0, 0), label="suspension mount")
    m.add_hinge("RoadInput", "prismatic", r_guide, g_road, label="road profile",
                drivers=[Driver("z", road_expression(speed, bump_height))])
    m.add_hinge("Tyre", "prismatic", w_tyre, r_tyre, label="tyre", stiffness=[tyre_stiffness])
    m.add_hinge("Suspension", "prismatic", h_mount, w_top, label="spring and damper",
                stiffness=[stiffness], damping=[damping])
    m.simulation.end_time = end_time
    m.simulation.step = 1e-3
    m.simulation.output_step = 2e-3
    return m


def reference(stiffness=SUSPENSION_STIFFNESS, damping=SUSPENSION_DAMPING, times=None,
              speed=SPEED, bump_height=BUMP_HEIGHT, sprung_mass=SPRUNG_MASS,
              unsprung_mass=UNSPRUNG_MASS, tyre_stiffness=TYRE_STIFFNESS, end_time=END_TIME):
    """The quarter car's equations (module docstring) integrated by scipy's DOP853 at tight
    tolerances: ``(times, z_s, z_u, z_s'')`` (m, m, m/s^2)."""
    from scipy.integrate import solve_ivp
    from ..solver.model.timefunction import parse
    road = parse(road_expression(speed, bump_height))
    ms, mu, ks, cs, kt = sprung_mass, unsprung_mass, stiffness, damping, tyre_stiffness

    def acc(t, y):
        zs, zu, vs, vu = y
        fs = -ks * (zs - zu) - cs * (vs - vu)
        return fs / ms, (-fs - kt * (zu - road(t))) / mu

    def rhs(t, y):
        a_s, a_u = acc(t, y)
        return [y[2], y[3], a_s, a_u]
    if times is None:
        times = np.linspace(0.0, end_time, 1001)
    sol = solve_ivp(rhs, (0.0, float(times[-1])), [0, 0, 0, 0], method="DOP853", rtol=1e-12,
                    atol=1e-14, t_eval=times, max_step=2e-3)
    a_s = np.array([acc(t, y)[0] for t, y in zip(sol.t, sol.y.T)])
    return sol.t, sol.y[0], sol.y[1], a_s


def design_study(method="nelder-mead", **kw):
    """The demo's study (module docstring): :class:`~..solver.study.Study` over the suspension's
    stiffness and damping (levels for a grid: ``levels=``)."""
    from ..solver.study import Parameter, Study
    levels = kw.pop("levels", 0)
    params = [Parameter("Suspension.Stiffness", *STIFFNESS_RANGE, levels),
              Parameter("Suspension.Damping", *DAMPING_RANGE, levels)]
    return Study(params, ["rms(Hull.az)", "max(abs(Suspension.z))", "rms(Tyre.Fz)"],
                 [f"max(abs(Suspension.z)) <= {TRAVEL * 1000:g} mm"], method=method, **kw)
