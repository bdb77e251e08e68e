"""The stiff flyball governor: problem A05 of the IFToMM multibody benchmark library.

The library's problem (M. Gonzalez's benchmark at lim.ii.udc.es, "Stiff flyball governor",
2005; kept at iftomm-multibody.org/benchmark): Watt's governor whose coupler rods are replaced by
stiff spring-dampers. The data used here, as the library's description states them (read from
the benchmark's own table as the OpenSim benchmark suite of Tagliapietra et al. and Exudyn's
examples reproduce it; the library's pdf itself was not found, see below):

* a vertical shaft, 1.0 x 0.01 x 0.01 m, density 3000 kg/m^3 (0.3 kg), on a revolute hinge
  about the global z axis at its lower end (the origin); started spinning at 2 pi rad/s
  (one turn a second) and then free: no torque drives it;
* the slider (sleeve), a 0.1 m cube of the same density (3 kg), on a prismatic hinge along the
  shaft, its centre at s = 0.5 m above the shaft's lower end at t = 0 (``s``, the benchmark's
  coordinate of the slider: the hinge ``Slide``'s coordinate ``z`` is s itself);
* two rods, 1.0 x 0.01 x 0.01 m of the same density (0.3 kg), hinged to the shaft at its top at
  x = +-0.05 m (the points A and B, 0.1 m apart) about axes across the shaft's plane of the
  rods, started alpha = 30 deg below the horizontal; each carries a point mass of 5 kg at its
  outer end (the balls, rigidly joined to the rod: one body);
* the stiff spring-dampers that replace the couplers: from the slider's side faces (0.05 m from
  its centre towards each rod) to each rod's midpoint, K = 8e5 N/m, C = 4e4 N s/m, free length
  0.5 m, which is their length in the start (the points form equilateral triangles of 0.5 m);
* gravity 9.81 m/s^2 down (-z); 10 s of simulated time; all bodies start turning with the shaft
  (no relative motion): the springs relaxed, the weights and the centrifugal loads not in
  balance, so the sleeve and the balls move from the first instant.

The quantity the benchmark compares is the slider's position s(t). Not found: the library's
reference solution file (the time history of s) and its pdf description; :data:`REFERENCE`
holds s at 10 s from an independent Lagrangian derivation of the same equations, which this
model reproduces to 2.3e-13 m (see ``benchmarks/bench_governor.py``). In 10 s the balls swing
out and back ten times (s between 0.4999 and 0.7436 m; 0.6196 m at the end) and the spin
drops from 6.28 to 5.55 rad/s as they go out; the dampers take only 3 mJ of the 239 J.

Assumptions where the description is silent (the same as in both reproductions cited): the
bodies' inertias are those of homogeneous boxes, the balls are points (no inertia of their own),
the rods' spring attachment is the rod's axis at its midpoint (not its surface), the shaft's
inertia about its own axis counts (5e-6 kg m^2; nothing beside the balls'). The rods
are hinged about global y at t = 0 (the shaft's frame turns with it).

What makes it stiff: the springs and dampers hold each 5.3 kg rod-and-ball about its hinge.
The eigenvalues of the Lagrange equations linearised at the start (bench_governor.py's model):
-8120 and -1450 1/s (the dampers' fast modes, overdamped), -20.3 and -20.1 1/s (K / C: the
springs relaxing through the dampers), +-7.35i (the governor's own swing of the balls and the
slider, the springs' lengths almost unchanged: the dampers hardly touch it; in the run the
slider's maxima come every 1.03 s) and 0 (the spin). An explicit integrator's step is bound by
the fastest: rk4 is stable below about 2.8 / 8120 = 3.4e-4 s (the example runs it at 1e-4 s,
the issue's step); an implicit one can step at the swing's time scale.

Angular momentum about z: nothing applies a moment about the shaft's axis (gravity is parallel
to it, the hinge has no friction), so L_z is constant; the tests check it.
"""

from __future__ import annotations

import numpy as np

from ..solver.model import MultibodySystem, massprops

DENSITY = 3000.0             #: kg/m^3, shaft, rods and slider
SHAFT = (0.01, 0.01, 1.0)    #: m, the shaft's box (along z)
ROD = (1.0, 0.01, 0.01)      #: m, a rod's box (along its own x)
SLIDER = 0.1                 #: m, the slider's edge
BALL = 5.0                   #: kg, each point mass, at the rod's outer end
HALF_AB = 0.05               #: m, the rods' hinges from the shaft's axis (A and B 0.1 m apart)
S0 = 0.5                     #: m, the slider's centre above the shaft's lower end at t = 0
ALPHA = np.radians(30.0)     #: rad, the rods below the horizontal at t = 0
OMEGA0 = 2.0 * np.pi         #: rad/s, the shaft's spin at t = 0
K = 8e5                      #: N/m, each spring
C = 4e4                      #: N s/m, each damper
L0 = 0.5                     #: m, the springs' free length
END_TIME = 10.0              #: s, the benchmark's simulated time

#: The state at t = 10 s (``benchmarks/bench_governor.py --reference``; the tests compare
#: with it): the slider's position s (m, the benchmark's quantity), the spin (rad/s)
#: and the rods' angle below the horizontal (rad), from the governor's Lagrange equations
#: derived apart from this code (sympy) and integrated with scipy's Radau at rtol 1e-12. This
#: model with rk4 at 1e-4 s gives s = 0.6196229170615133 (2.3e-13 m from it), at 2.5e-5 s
#: 0.6196229170613641; the compiled DOP853 at rtol 1e-10 0.6196229170613754.
REFERENCE = {"s": 0.6196229170612876, "spin_rate": 5.548203622655356,
             "angle": 0.39007370184472934}
REFERENCE_TIME = END_TIME


def _rod_mass_properties():
    """A rod with its ball: mass, JI about the hinge (the body's frame origin, x along the rod)
    and the mass centre, in the rod's frame."""
    rod = massprops.box(ROD, DENSITY, corner=(0.0, -ROD[1] / 2, -ROD[2] / 2))
    r = np.array([ROD[0], 0.0, 0.0])                 # the ball, a point at the outer end
    ball = BALL * (r @ r * np.eye(3) - np.outer(r, r))
    mass = rod.mass + BALL
    center = (rod.mass * np.asarray(rod.center) + BALL * r) / mass
    J = _tensor(rod.ji) + ball
    return mass, [J[0, 0], J[1, 1], J[2, 2], J[0, 1], J[0, 2], J[1, 2]], center


def _tensor(ji):
    xx, yy, zz, xy, xz, yz = ji
    return np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])


def build(end_time=END_TIME, stiffness=K, damping=C, alpha=ALPHA, omega=OMEGA0,
          rod_length=None) -> MultibodySystem:
    """The governor in its start, simulated to ``end_time`` with rk4 at 1e-4 s.

    ``stiffness``, ``damping``: the spring-dampers' K and C; ``alpha``: the rods' start below the
    horizontal (rad; the springs' free length stays 0.5 m, so other angles start them
    stretched); ``omega``: the shaft's start spin (rad/s); ``rod_length`` (m): the rods' length
    with the balls at their ends (default 1.0, the benchmark's).
    """
    length = ROD[0] if rod_length is None else float(rod_length)
    m = MultibodySystem("FlyballGovernor", gravity=(0.0, 0.0, -9.81),
                        description="IFToMM benchmark A05: stiff flyball governor (spring-dampers "
                                    "K = 8e5 N/m, C = 4e4 N s/m in place of the couplers)")
    g = m.set_ground(label="frame")

    sh = massprops.box(SHAFT, DENSITY, corner=(-SHAFT[0] / 2, -SHAFT[1] / 2, 0.0))
    shaft = m.add_body("Shaft", sh.mass, sh.ji, mass_center=sh.center, density=DENSITY,
                       label="vertical shaft, hinged at its lower end")
    sl = massprops.box((SLIDER,) * 3, DENSITY, corner=(-SLIDER / 2,) * 3)
    slider = m.add_body("Slider", sl.mass, sl.ji, mass_center=sl.center, density=DENSITY,
                        position=(0.0, 0.0, S0), label="sleeve sliding on the shaft")

    if rod_length is None:
        rod_mass, rod_ji, rod_center = _rod_mass_properties()
    else:
        rb = massprops.box((length, ROD[1], ROD[2]), DENSITY,
                           corner=(0.0, -ROD[1] / 2, -ROD[2] / 2))
        r = np.array([length, 0.0, 0.0])
        J = _tensor(rb.ji) + BALL * (r @ r * np.eye(3) - np.outer(r, r))
        rod_mass = rb.mass + BALL
        rod_center = (rb.mass * np.asarray(rb.center) + BALL * r) / rod_mass
        rod_ji = [J[0, 0], J[1, 1], J[2, 2], J[0, 1], J[0, 2], J[1, 2]]

    m.add_hinge("Spin", "revolute", shaft.add_marker(label="pivot"), g.add_marker(label="pivot"),
                initial_rates=[float(omega)])
    m.add_hinge("Slide", "prismatic", slider.add_marker(label="bore"),
                shaft.add_marker(label="lower end"))
    top = SHAFT[2]
    across = (-np.pi / 2, 0.0, 0.0)                  # a marker's z along its body's y
    for side, name, label in ((1.0, "Rod1", "A"), (-1.0, "Rod2", "B")):
        # the rod's x axis along the rod, outwards and alpha below the horizontal; its y axis
        # (the hinge's) along +y for Rod1 and -y for Rod2 (turned by pi about z)
        orientation = (0.0, float(alpha), 0.0) if side > 0 else (0.0, -float(alpha), np.pi)
        hinge = np.array([side * HALF_AB, 0.0, top])
        rod = m.add_body(name, rod_mass, rod_ji, mass_center=rod_center, position=hinge,
                         orientation=orientation, density=DENSITY,
                         label=f"rod hinged at {label}, its ball at the outer end")
        m.add_hinge(f"Hinge{label}", "revolute", rod.add_marker(orientation=across, label=label),
                    shaft.add_marker(hinge, orientation=across if side > 0 else
                                     (np.pi / 2, 0.0, 0.0), label=label))
        m.add_force(f"Spring{label}", "spring_damper",
                    rod.add_marker((0.5 * length, 0.0, 0.0), label="midpoint"),
                    slider.add_marker((side * SLIDER / 2, 0.0, 0.0), label=f"side {label}"),
                    stiffness=float(stiffness), damping=float(damping), free_length=L0)
    s = m.simulation
    s.end_time = float(end_time)
    s.method, s.integrator = "mstmm", "rk4"
    s.step, s.output_step = 1e-4, 0.01
    s.relative_tolerance, s.absolute_tolerance = 1e-10, 1e-12
    return m
