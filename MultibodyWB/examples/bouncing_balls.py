"""Balls thrown into a box: contact-rich motion of free bodies.

A square box :data:`BOX` wide, open at the top, made of five ground planes (the floor at z = 0
and four walls, each plane's normal pointing into the box). Four rubber balls of radii 20 to
30 mm, each on a free hinge to the ground, start above the floor with different velocities and
spins; every ball has a contact with the floor and with each wall (sphere against plane) and with
every other ball (sphere against sphere), all with Coulomb friction. Nothing drives the system:
its energy only decreases, by what the contacts' damping and friction dissipate
(``energy.dissipated`` never decreases, and ``energy.total + energy.dissipated`` stays at its
start value up to the integration error, ``energy.residual``).

Settings: the adaptive DOP853 at a relative tolerance of 1e-9 (the residual stays below 1e-6 of
the start energy). Friction regularised at the stiction velocity is stiff during an impact
(``mu N / v_s`` against the slip of a light ball): the fixed-step rk4 at 20 us keeps the energy
balance only to about 2 % over 1.5 s (without friction: 5e-7 over 0.5 s).
"""

from __future__ import annotations

import itertools
import math

from ..solver.model import massprops
from ..solver.model import MultibodySystem

BOX = 0.4                #: m, inner width of the box
RUBBER = 1100.0          #: kg/m^3
#: name, radius (m), start position (m), start velocity (m/s), start angular velocity (rad/s)
BALLS = (
    ("Ball1", 0.030, (-0.10, -0.08, 0.20), (1.5, 0.8, 0.0), (0.0, 0.0, 0.0)),
    ("Ball2", 0.025, (0.08, -0.05, 0.30), (-1.0, 0.5, -0.5), (0.0, 20.0, 0.0)),
    ("Ball3", 0.020, (0.02, 0.10, 0.12), (0.3, -1.2, 1.0), (10.0, 0.0, 5.0)),
    ("Ball4", 0.028, (-0.09, 0.09, 0.35), (0.6, -0.6, 0.0), (0.0, 0.0, 0.0)),
)
#: wall name, marker position, Bryant angles turning the marker's z into the box
WALLS = (
    ("Floor", (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)),
    ("WallXm", (-BOX / 2, 0.0, 0.0), (0.0, math.pi / 2, 0.0)),
    ("WallXp", (BOX / 2, 0.0, 0.0), (0.0, -math.pi / 2, 0.0)),
    ("WallYm", (0.0, -BOX / 2, 0.0), (-math.pi / 2, 0.0, 0.0)),
    ("WallYp", (0.0, BOX / 2, 0.0), (math.pi / 2, 0.0, 0.0)),
)
STIFFNESS = 2e6          #: N/m^1.5, every contact
RESTITUTION = 0.8        #: at 1 m/s
FRICTION = (0.6, 0.5)    #: static, dynamic


def build(balls=len(BALLS), friction=True, end_time=1.5) -> MultibodySystem:
    """The box with the first ``balls`` balls of :data:`BALLS`; ``friction`` False: frictionless
    contacts."""
    m = MultibodySystem("BouncingBalls", gravity=(0.0, 0.0, -9.81),
                        description="rubber balls thrown into a box of ground planes")
    g = m.set_ground(label="box")
    walls = [(name, g.add_marker(p, a, label=f"{name} (normal into the box)"))
             for name, p, a in WALLS]
    centre = g.add_marker((0, 0, 0), label="box origin")
    mus, mud = FRICTION if friction else (0.0, 0.0)
    kw = dict(stiffness=STIFFNESS, exponent=1.5, restitution=RESTITUTION, impact_speed=1.0,
              static_friction=mus, dynamic_friction=mud, stiction_velocity=1e-2)
    made = []
    for name, r, p, v, w in BALLS[:balls]:
        mp = massprops.sphere(r, RUBBER)
        b = m.add_body(name, mp.mass, mp.ji, position=p, density=RUBBER, label=f"ball r = "
                       f"{r * 1000:g} mm")
        bm = b.add_marker((0, 0, 0), label=f"{name} centre")
        m.add_hinge(f"{name}Free", "free", bm, centre, initial_rates=[*v, 0, 0, 0],
                    initial_angular_velocity=list(w))
        for wall, wm in walls:
            m.add_contact(f"{name}{wall}", bm, wm, ("sphere", {"radius": r}), ("plane",), **kw)
        made.append((name, r, bm))
    for (n1, r1, m1), (n2, r2, m2) in itertools.combinations(made, 2):
        m.add_contact(f"{n1}{n2}", m1, m2, ("sphere", {"radius": r1}),
                      ("sphere", {"radius": r2}), **kw)
    m.simulation.end_time = float(end_time)
    m.simulation.integrator = "DOP853"
    m.simulation.relative_tolerance = 1e-9
    m.simulation.absolute_tolerance = 1e-11
    m.simulation.step = 1e-5
    m.simulation.output_step = 1e-3
    return m
