"""Solids that are no primitives tumbling down a tilted plate: convex contact shapes.

A plate tilted :data:`TILT` about the global y axis (the ground's plane through the origin,
downhill along +x) ends in a fence :data:`FENCE` down the slope (a second ground plane, square to
the plate, facing up the slope). Three solids whose surfaces are no primitives fall onto the plate
from where they are drawn, tumble down and pile up against the fence: an egg (an ellipsoid of
semi-axes :data:`EGG`), a cone (:data:`CONE`) and a hexagonal prism (:data:`PRISM`), each on a free
hinge to the ground. Each is a ``convex`` contact shape, the convex hull of points on its surface
in its marker's frame (the egg's on a grid of latitudes and longitudes, the cone's base circle and
apex, the prism's twelve corners), as the FreeCAD side makes them from a solid's tessellation
(:mod:`MultibodyWB.examples_fc.tumbling_solids` builds the same from FreeCAD solids). Every solid
has a contact with the plate and one with the fence (convex against plane) and one with each other
solid (convex against convex), all with Coulomb friction: nine contacts.

Stiffness: each solid's weight on three hull vertices (a facet) presses them :data:`STATIC_DEPTH`
in at the exponent 1.5 (``k = m g / (3 d^1.5)``, the workbench's default rule for a convex side);
a solid against a solid takes the first one's (the input's, as the workbench's rule).
Nothing drives the system: its energy only decreases by what the contacts dissipate
(``energy.residual`` stays small), and after :data:`END_TIME` the solids rest on the plate
against the fence and each other.

Settings: the adaptive DOP853 at a relative tolerance of 1e-8.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from ..solver.model import MultibodySystem

TILT = math.radians(25.0)      #: plate's slope, rad (steeper than the friction angle of 0.4)
FENCE = 0.12                   #: m, the fence's distance down the slope from the origin
DENSITY = 1200.0               #: kg/m^3 (a plastic)
EGG = (0.020, 0.014)           #: m, semi-axes: along its axis, across
CONE = (0.015, 0.035)          #: m, base radius, height
PRISM = (0.015, 0.025)         #: m, hexagon's circumradius (= side), length
STATIC_DEPTH = 1e-5            #: m, depth of three points under a solid's weight
FRICTION = (0.4, 0.3)          #: static, dynamic
RESTITUTION = 0.5              #: at 1 m/s
END_TIME = 3.0                 #: s
#: name, start position in the plate's axes (down the slope, across, above the plate; m), Bryant
#: angles (rad)
START = (
    ("Egg", (-0.10, 0.00, 0.035), (0.0, 0.0, math.pi / 2)),        # axis across the slope
    ("Cone", (-0.03, 0.01, 0.045), (0.4, 0.6, 0.0)),
    ("Prism", (-0.18, -0.005, 0.04), (math.pi / 2, 0.3, 0.0)),     # on its side: it rolls
)


def egg_points(n_around=16, n_lat=9):
    """Points (n, 3) on the egg's surface (its axis x): rings of ``n_around`` points at ``n_lat``
    latitudes between the two tips, and the tips."""
    a, b = EGG
    points = [(-a, 0.0, 0.0), (a, 0.0, 0.0)]
    for i in range(1, n_lat + 1):
        theta = math.pi * i / (n_lat + 1)
        for j in range(n_around):
            phi = 2 * math.pi * (j + 0.5 * (i % 2)) / n_around
            points.append((-a * math.cos(theta), b * math.sin(theta) * math.cos(phi),
                           b * math.sin(theta) * math.sin(phi)))
    return np.array(points)


def cone_points(n_around=24):
    """The cone's base circle (``n_around`` points) and apex, about its centroid (its axis z, the
    base at -h/4)."""
    r, h = CONE
    ring = [(r * math.cos(2 * math.pi * j / n_around), r * math.sin(2 * math.pi * j / n_around),
             -h / 4) for j in range(n_around)]
    return np.array(ring + [(0.0, 0.0, 3 * h / 4)])


def prism_points():
    """The hexagonal prism's twelve corners about its centre (its axis z)."""
    r, h = PRISM
    return np.array([(r * math.cos(math.pi * j / 3), r * math.sin(math.pi * j / 3), s * h / 2)
                     for s in (-1, 1) for j in range(6)])


def mass_properties():
    """``{name: (mass kg, (Ixx, Iyy, Izz) kg m^2 about the centroid, points (n, 3) m)}``."""
    a, b = EGG
    m_egg = DENSITY * 4 / 3 * math.pi * a * b * b
    r, h = CONE
    m_cone = DENSITY * math.pi * r * r * h / 3
    s, length = PRISM
    m_prism = DENSITY * 3 * math.sqrt(3) / 2 * s * s * length
    return {
        "Egg": (m_egg, (m_egg * 2 * b * b / 5, m_egg * (a * a + b * b) / 5,
                        m_egg * (a * a + b * b) / 5), egg_points()),
        "Cone": (m_cone, (m_cone * (3 * r * r / 20 + 3 * h * h / 80),
                          m_cone * (3 * r * r / 20 + 3 * h * h / 80), m_cone * 3 * r * r / 10),
                 cone_points()),
        "Prism": (m_prism, (m_prism * (5 * s * s / 24 + length ** 2 / 12),
                            m_prism * (5 * s * s / 24 + length ** 2 / 12),
                            m_prism * 5 * s * s / 12), prism_points()),
    }


def plate_frame():
    """(down the slope, across, the plate's normal) as unit vectors (3,), global."""
    return (np.array([math.cos(TILT), 0.0, -math.sin(TILT)]), np.array([0.0, 1.0, 0.0]),
            np.array([math.sin(TILT), 0.0, math.cos(TILT)]))


def start_position(name):
    """Global start position (m) of a solid's centre."""
    u, v, n = plate_frame()
    s = dict((k, p) for k, p, _ in START)[name]
    return s[0] * u + s[1] * v + s[2] * n


def stiffness(mass, gravity=9.81):
    """The default rule of a convex side: ``m g`` on three points ``STATIC_DEPTH`` deep."""
    return mass * gravity / (3 * STATIC_DEPTH ** 1.5)


def build(end_time=END_TIME, friction=True) -> MultibodySystem:
    """The plate, its fence and the three solids; ``friction`` False: frictionless contacts."""
    m = MultibodySystem("TumblingSolids", gravity=(0.0, 0.0, -9.81),
                        description="an egg, a cone and a hexagonal prism tumbling down a tilted "
                                    "plate against a fence (convex contact shapes)")
    g = m.set_ground(label="tilted plate")
    plate = g.add_marker((0, 0, 0), (0.0, TILT, 0.0), label="plate (normal up)")
    fence = g.add_marker(FENCE * plate_frame()[0], (0.0, TILT - math.pi / 2, 0.0),
                         label="fence (normal up the slope)")
    origin = g.add_marker((0, 0, 0), label="origin")
    mus, mud = FRICTION if friction else (0.0, 0.0)
    law = dict(exponent=1.5, restitution=RESTITUTION, impact_speed=1.0, static_friction=mus,
               dynamic_friction=mud, stiction_velocity=1e-2)
    made = []
    props = mass_properties()
    for name, _, angles in START:
        mass, inertia, points = props[name]
        b = m.add_body(name, mass, [*inertia, 0.0, 0.0, 0.0], position=start_position(name),
                       orientation=angles, density=DENSITY, label=name.lower())
        centre = b.add_marker((0, 0, 0), label=f"{name} centre")
        m.add_hinge(f"{name}Free", "free", centre, origin)
        shape = ("convex", {"points": points})
        k = stiffness(mass)
        m.add_contact(f"{name}Plate", centre, plate, shape, ("plane",), stiffness=k, **law)
        m.add_contact(f"{name}Fence", centre, fence, shape, ("plane",), stiffness=k, **law)
        made.append((name, centre, shape, mass))
    for (n1, c1, s1, m1), (n2, c2, s2, m2) in itertools.combinations(made, 2):
        m.add_contact(f"{n1}{n2}", c1, c2, s1, s2, stiffness=stiffness(m1), **law)
    m.simulation.end_time = float(end_time)
    m.simulation.integrator = "DOP853"
    m.simulation.relative_tolerance = 1e-8
    m.simulation.absolute_tolerance = 1e-10
    m.simulation.step = 1e-5
    m.simulation.output_step = 2e-3
    return m
