"""Andrews' squeezing mechanism: seven bodies, three closed loops, a motor torque and a spring.

The benchmark of Hairer and Wanner (Solving Ordinary Differential Equations II, section VII.7,
after Manning and Schiehlen's data) and of the test set for initial value problem solvers
(Mazzia and Magherini, problem "andrews"), with its published reference solution at t = 0.03 s
(:data:`REFERENCE`). A planar mechanism in the global xy plane (hinge axes along z), no gravity:

* K1, the crank, turns about the fixed point O (the origin) by beta, driven by the constant
  torque ``MOM``; K2, the rod, turns about the crank's pin P (``RR`` from O) by theta relative
  to the crank; its other end is the point E (``D`` from P).
* K3 turns about the fixed point B by gamma, E at ``SS`` from B; the spring (stiffness ``C0``,
  free length ``L0``) pulls its point D towards the fixed point C.
* K5 turns about the fixed point A by delta; K4 about K5's pin (``ZT`` from A) by phi relative
  to it, E at ``E`` from that pin.
* K7 turns about A by epsilon; K6 about K7's pin (``U`` from A) by omega relative to it, E at
  ``ZF`` from that pin.
* E joins the rod to K3, K4 and K6: three revolute hinges that close three loops (the cut
  hinges). 7 angles, 6 closure conditions in the plane: one degree of freedom.

Each body's frame is drawn at its absolute angle at t = 0 with its origin at its pivot, so that
the hinge coordinates are the benchmark's angles: O beta, P theta, B gamma, A5 delta, K45 phi,
A7 epsilon, K76 omega. The masses and inertias about the centres of mass are the benchmark's;
the centres of mass sit where its mass matrix puts them (without gravity a body turning about
a fixed point feels only its inertia there, so the direction of K1's, K3's, K5's and K7's
centres is free: along the body's x axis here). The inertias about x and y (not in the planar
benchmark) are taken as 0.6 of the one about z.

Started at rest in the benchmark's consistent configuration; in 0.03 s the crank turns about
2.5 times and the torque does 0.52 J of work. Stiff: the spring and the small masses make
explicit integrators take steps of about 1e-6 s.
"""

from __future__ import annotations

import numpy as np

from ..solver.model import MultibodySystem

# masses (kg) and inertias about the centres of mass (kg m^2) of K1 ... K7
M = (0.04325, 0.00365, 0.02373, 0.00706, 0.07050, 0.00706, 0.05498)
I = (2.194e-6, 4.410e-7, 5.255e-6, 5.667e-7, 1.169e-5, 5.667e-7, 1.912e-5)
# fixed points (m)
XA, YA = -0.06934, -0.00227
XB, YB = -0.03635, 0.03273
XC, YC = 0.014, 0.072
# lengths (m)
D, DA, E, EA = 28e-3, 115e-4, 2e-2, 1421e-5
RR, RA = 7e-3, 92e-5
SS, SA, SB, SC, SD = 35e-3, 1874e-5, 1043e-5, 18e-3, 2e-2
TA, TB = 2308e-5, 916e-5
U, UA, UB = 4e-2, 1228e-5, 449e-5
ZF, ZT, FA = 2e-2, 4e-2, 1421e-5
MOM = 0.033          #: N m, the torque that drives the crank
C0, L0 = 4530.0, 0.07785     #: N/m and m, the spring

#: The consistent start: beta, theta, gamma, phi, delta, omega, epsilon (rad).
START = (-0.0617138900142764496358948458001, 0.0, 0.455279819163070380255912382449,
         0.222668390165885884674473185609, 0.487364979543842550225598953530,
         -0.222668390165885884674473185609, 1.23054744454982119249735015568)

#: The reference solution at t = 0.03 s (the test set's, computed with PSIDE at tolerances of
#: 1e-14): the angles beta ... epsilon (rad) and their rates (rad/s), by hinge.
REFERENCE = {
    "O": (0.1581077119629904e2, 0.1139920302151208e4),
    "P": (-0.1575637105984298e2, -0.1424379294994111e4),
    "B": (0.4082224013073101e-1, 0.1103291221937134e2),
    "K45": (-0.5347301163226948, 0.1929337464421385e2),
    "A5": (0.5244099658805304, 0.5735699284790808),
    "K76": (0.5347301163226948, -0.1929337464421385e2),
    "A7": (0.1048080741042263e1, 0.3231791658026955),
}
REFERENCE_TIME = 0.03


def _rot(angle):
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def _body(m, name, k, origin, angle, center, label):
    """Body K{k+1}: frame at ``origin`` turned by ``angle`` about z, centre of mass at the local
    ``center`` (x, y); inertia about its frame's origin."""
    mass, izz = M[k], I[k]
    c = np.array([center[0], center[1], 0.0])
    central = np.diag([0.6 * izz, 0.6 * izz, izz])
    ji = central + mass * (np.dot(c, c) * np.eye(3) - np.outer(c, c))
    return m.add_body(name, mass, [ji[0, 0], ji[1, 1], ji[2, 2], ji[0, 1], ji[0, 2], ji[1, 2]],
                      mass_center=c, position=(origin[0], origin[1], 0.0),
                      orientation=(0.0, 0.0, float(angle)), label=label)


def build(end_time=REFERENCE_TIME) -> MultibodySystem:
    """The mechanism at rest in its consistent start, simulated to ``end_time`` with DOP853 at
    tolerances of 1e-10."""
    beta, theta, gamma, phi, delta, omega, eps = START
    m = MultibodySystem("AndrewsSqueezer", gravity=(0.0, 0.0, 0.0),
                        description="Andrews' squeezing mechanism (Hairer & Wanner's benchmark): "
                                    "seven bodies, three loops, a motor torque and a spring")
    g = m.set_ground(label="frame")
    o, a, b = np.zeros(2), np.array([XA, YA]), np.array([XB, YB])
    p = RR * np.array([np.cos(beta), np.sin(beta)])
    j45 = a + ZT * np.array([np.cos(delta), np.sin(delta)])
    j76 = a + U * np.array([np.sin(eps), -np.cos(eps)])

    k1 = _body(m, "K1", 0, o, beta, (RA, 0.0), "crank")
    k2 = _body(m, "K2", 1, p, beta + theta, (-DA, 0.0), "rod")
    k3 = _body(m, "K3", 2, b, gamma, (np.hypot(SA, SB), 0.0), "spring lever")
    k5 = _body(m, "K5", 4, a, delta, (np.hypot(TA, TB), 0.0), "lower link")
    k4 = _body(m, "K4", 3, j45, phi + delta, (0.0, -(E - EA)), "lower coupler")
    k7 = _body(m, "K7", 6, a, eps, (np.hypot(UA, UB), 0.0), "upper link")
    k6 = _body(m, "K6", 5, j76, omega + eps, (ZF - FA, 0.0), "upper coupler")

    def at(part, local):
        return part.add_marker((local[0], local[1], 0.0))

    def fixed(point, label):
        return g.add_marker((point[0], point[1], 0.0), label=label)

    m.add_hinge("O", "revolute", at(k1, (0.0, 0.0)), fixed(o, "O"))
    m.add_hinge("P", "revolute", at(k2, (0.0, 0.0)), at(k1, (RR, 0.0)))
    m.add_hinge("B", "revolute", at(k3, (0.0, 0.0)), fixed(b, "B"))
    m.add_hinge("A5", "revolute", at(k5, (0.0, 0.0)), fixed(a, "A"))
    m.add_hinge("K45", "revolute", at(k4, (0.0, 0.0)), at(k5, (ZT, 0.0)))
    m.add_hinge("A7", "revolute", at(k7, (0.0, 0.0)), fixed(a, "A"))
    m.add_hinge("K76", "revolute", at(k6, (0.0, 0.0)), at(k7, (0.0, -U)))
    # the point E: three hinges on the rod, each closing a loop
    m.add_hinge("E3", "revolute", at(k3, (0.0, -SS)), at(k2, (-D, 0.0)))
    m.add_hinge("E4", "revolute", at(k4, (0.0, -E)), at(k2, (-D, 0.0)))
    m.add_hinge("E6", "revolute", at(k6, (ZF, 0.0)), at(k2, (-D, 0.0)))
    m.add_force("Motor", "point_torque", at(k1, (0.0, 0.0)), direction=(0, 0, 1),
                magnitude=repr(MOM))
    m.add_force("Spring", "spring_damper", at(k3, (SD, -SC)), fixed((XC, YC), "C"),
                stiffness=C0, free_length=L0)
    s = m.simulation
    s.end_time = float(end_time)
    s.method, s.integrator = "mstmm", "DOP853"
    s.step, s.output_step = 1e-6, 1e-4
    s.relative_tolerance, s.absolute_tolerance = 1e-10, 1e-10
    return m
