"""The nonlinear bushing (issue 36 item 3: a force law with parameters of its own, added as one
module and one registry line): its loads against the closed-form force and torque, against the
gradient of its closed-form potential (anisotropic, large rotations), its dampers' power against
their loads, a Duffing oscillator's period from quadrature by all three methods, and the file,
the checks and the study parameters reading its registry rows."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.spatial.transform import Rotation

from MultibodyWB.solver.elements import forces
from MultibodyWB.solver.elements.forces import FORCE_TYPES, nonlinear_bushing as nb
from MultibodyWB.solver.model import MultibodySystem, massprops
from MultibodyWB.solver.model import xmlio
from MultibodyWB.solver.model.validation import validate
from MultibodyWB.solver.run.simulate import simulate

K = np.array([2.0e4, 5.0e3, 9.0e3])         # N/m
K3 = np.array([2.0e7, 1.0e6, 2.5e6])        # N/m^3
C = np.array([30.0, 12.0, 7.0])             # N s/m
KR = np.array([300.0, 80.0, 150.0])         # N m/rad
KR3 = np.array([900.0, 40.0, 500.0])        # N m/rad^3
CR = np.array([2.0, 0.5, 1.3])              # N m s/rad


def struct(Rl, pl, Ro, po, k=K, k3=K3, c=C, kr=KR, kr3=KR3, cr=CR):
    """One bushing from body 0's marker (Rl, pl, local) to a ground marker (Ro, po, global)."""
    S = forces.LAW_STRUCTS["nonlinear_bushing"]
    one = lambda v: np.array([v], dtype=float)             # noqa: E731
    return S(nb_bi=np.array([0]), nb_Ri=one(Rl), nb_pi=one(pl), nb_bo=np.array([-1]),
             nb_Ro=one(Ro), nb_po=one(po), nb_k=one(k), nb_k3=one(k3), nb_c=one(c),
             nb_kr=one(kr), nb_kr3=one(kr3), nb_cr=one(cr))


def loads(F, Rb, pb, v=np.zeros(3), w=np.zeros(3)):
    """Force and torque about the body's frame origin (= its mass centre here) on body 0."""
    FC, TC = np.zeros((1, 3)), np.zeros((1, 3))
    pbs = np.array([pb], dtype=float)
    nb.add_loads(F, np.zeros(1), np.array([Rb]), pbs, pbs, pbs, np.array([w], dtype=float),
                 np.array([v], dtype=float), FC, TC)
    return FC[0], TC[0]


def potential(F, Rb, pb):
    ee = np.zeros(1)

    def attach(body, Rl, pl):
        if body < 0:
            return Rl[None], pl[None]
        return (Rb @ Rl)[None], (pb + Rb @ pl)[None]
    nb.add_potential(F, attach, ee)
    return ee[0]


Ro = Rotation.from_rotvec([0.3, -0.5, 0.2]).as_matrix()
PO = np.array([0.1, -0.2, 0.05])
RL = Rotation.from_rotvec([-0.2, 0.1, 0.4]).as_matrix()
PL = np.array([0.03, 0.02, -0.04])


def test_closed_form_force_and_torque():
    """An offset d and a rotation about the output marker's z: force -Ro (k d + k3 d^3), torque
    -Ro (kr3 theta^3 + kr theta) e_z, both at the input marker's origin."""
    d = np.array([0.004, -0.007, 0.002])
    theta = 0.35
    Rrel = Rotation.from_rotvec([0, 0, theta]).as_matrix()
    Ri = Ro @ Rrel                       # the input marker's frame, global
    Rb = Ri @ RL.T
    pI = PO + Ro @ d
    pb = pI - Rb @ PL
    F = struct(RL, PL, Ro, PO)
    f, t = loads(F, Rb, pb)
    G = Ro @ (K * d + K3 * d ** 3)
    T = Ro @ np.array([0, 0, KR[2] * theta + KR3[2] * theta ** 3])
    np.testing.assert_allclose(f, -G, rtol=1e-12, atol=1e-12 * np.abs(G).max())
    np.testing.assert_allclose(t, -T + np.cross(pI - pb, -G), rtol=1e-10,
                               atol=1e-12 * np.abs(T).max())
    # the potential, closed form
    V = (0.5 * K * d ** 2 + 0.25 * K3 * d ** 4).sum() + 0.5 * KR[2] * theta ** 2 + \
        0.25 * KR3[2] * theta ** 4
    assert potential(F, Rb, pb) == pytest.approx(V, rel=1e-12)


@pytest.mark.parametrize("rotvec", [[0.02, -0.01, 0.03], [0.6, -0.4, 0.5], [-1.2, 0.9, 1.5]])
def test_loads_are_minus_the_potential_gradient(rotvec):
    """Anisotropic stiffnesses, rotations up to 2.1 rad: the force is -dV/dx and the torque about
    the body's origin -dV/d(theta) (central differences of the closed-form potential)."""
    d = np.array([0.006, 0.01, -0.008])
    Ri = Ro @ Rotation.from_rotvec(rotvec).as_matrix()
    Rb = Ri @ RL.T
    pb = PO + Ro @ d - Rb @ PL
    F = struct(RL, PL, Ro, PO)
    f, t = loads(F, Rb, pb)
    eps = 1e-6
    for j in range(3):
        e = np.eye(3)[j]
        dVdx = (potential(F, Rb, pb + eps * e) - potential(F, Rb, pb - eps * e)) / (2 * eps)
        rot = lambda s: Rotation.from_rotvec(s * e).as_matrix() @ Rb    # noqa: E731
        dVdt = (potential(F, rot(eps), pb) - potential(F, rot(-eps), pb)) / (2 * eps)
        assert f[j] == pytest.approx(-dVdx, rel=1e-6, abs=1e-6 * np.abs(f).max())
        assert t[j] == pytest.approx(-dVdt, rel=1e-6, abs=1e-6 * np.abs(t).max())


def test_the_dampers_dissipate_what_their_loads_take():
    """Dampers alone (no stiffness): the loads' power on the moving body is minus the
    dissipation add_power reports, which is c d'^2 + cr w^2 per axis in the output axes."""
    Ri = Ro @ Rotation.from_rotvec([0.2, 0.1, -0.3]).as_matrix()
    Rb = Ri @ RL.T
    pb = PO + Ro @ np.array([0.01, 0.0, 0.02]) - Rb @ PL
    v, w = np.array([0.3, -0.2, 0.5]), np.array([1.5, -0.7, 2.0])
    zero = np.zeros(3)
    F = struct(RL, PL, Ro, PO, k=zero, k3=zero, kr=zero, kr3=zero)
    f, t = loads(F, Rb, pb, v, w)
    power = f @ v + t @ w
    out = np.zeros(3)
    pbs = np.array([pb])
    nb.add_power(F, np.zeros(1), np.array([Rb]), pbs, pbs, pbs, np.array([w]), np.array([v]), out)
    pI = pb + Rb @ PL
    dd = Ro.T @ (v + np.cross(w, pI - pb))
    wr = Ro.T @ w
    assert out[2] == pytest.approx((C * dd ** 2).sum() + (CR * wr ** 2).sum(), rel=1e-12)
    assert power == pytest.approx(-out[2], rel=1e-12)
    assert nb.does_work(F) and not nb.does_work(struct(RL, PL, Ro, PO, c=zero, cr=zero))


def test_rotation_gradient_map_is_the_transpose_of_the_rate_map():
    """The torque map J(phi)^-T is the transpose of the map w -> phi' (taken from differences
    of the rotation vector, w in the output marker's axes)."""
    phi = np.array([0.7, -1.1, 0.4])
    R0 = Rotation.from_rotvec(phi).as_matrix()
    eps = 1e-7
    J = np.empty((3, 3))             # phi' = J w, w the angular velocity in the output axes
    for j in range(3):
        e = np.eye(3)[j]
        up = Rotation.from_matrix(Rotation.from_rotvec(eps * e).as_matrix() @ R0).as_rotvec()
        dn = Rotation.from_matrix(Rotation.from_rotvec(-eps * e).as_matrix() @ R0).as_rotvec()
        J[:, j] = (up - dn) / (2 * eps)
    np.testing.assert_allclose(nb.rotation_gradient_map(phi), J.T, atol=1e-7)


# --------------------------------------------------------------------------------------------------
# A Duffing oscillator
# --------------------------------------------------------------------------------------------------

def duffing(amplitude=0.03, method="mstmm", integrator="rk4"):
    m = MultibodySystem("Duffing", gravity=(0, 0, 0))
    g = m.set_ground()
    o = g.add_marker((0, 0, 0), (0.2, -0.3, 0.5))
    mp = massprops.box((0.1, 0.1, 0.1), 2000.0, corner=(-0.05, -0.05, -0.05))
    b = m.add_body("Block", mp.mass, mp.ji, mass_center=mp.center)
    # the block's marker drawn at the output marker, then the block offset along its x
    mk = b.add_marker((0, 0, 0), (0.2, -0.3, 0.5))
    Rout = m.ground.marker(o.marker).frame.rotation
    m.add_hinge("Float", "free", mk, o, initial_coordinates=[amplitude, 0, 0, 0, 0, 0])
    m.add_force("Mount", "nonlinear_bushing", mk, o, params={
        "translation_stiffness": K, "translation_cubic_stiffness": K3,
        "rotation_stiffness": KR, "rotation_cubic_stiffness": KR3})
    m.simulation.method = method
    m.simulation.integrator = integrator
    return m, mp.mass, Rout


def duffing_period(mass, k, k3, a):
    """4 * integral_0^a dx / sqrt(2 (V(a) - V(x)) / m), V = k x^2 / 2 + k3 x^4 / 4."""
    def V(x):
        return 0.5 * k * x * x + 0.25 * k3 * x ** 4
    # x = a sin(s) takes the root singularity away
    f = lambda s: a * np.cos(s) / np.sqrt(2 * (V(a) - V(a * np.sin(s))) / mass)  # noqa: E731
    return 4 * quad(f, 0, np.pi / 2, epsabs=0, epsrel=1e-13)[0]


@pytest.mark.parametrize("method, integrator", [("mstmm", "rk4"), ("mstmm", "DOP853"),
                                                ("newton-euler", "euler"),
                                                ("constrained", "rk4")])
def test_duffing_period_by_every_method(method, integrator):
    a = 0.03
    m, mass, Rout = duffing(a, method, integrator)
    m.simulation.relative_tolerance, m.simulation.absolute_tolerance = 1e-9, 1e-12
    T = duffing_period(mass, K[0], K3[0], a)
    linear = 2 * np.pi * np.sqrt(mass / K[0])
    assert T < 0.8 * linear                          # the cubic term matters
    step = {"euler": 2e-6}.get(integrator, 1e-4)     # rk4: the step; adaptive: the rows
    r = simulate(m, integrator=integrator, t_end=1.3 * T, step=step, output_step=1e-4)
    t = r.time
    x = r["Float.x"]
    # the upward zero crossings of the offset, interpolated: one period apart
    i = np.nonzero((x[:-1] < 0) & (x[1:] >= 0))[0][0]
    j = np.nonzero((x[:-1] > 0) & (x[1:] <= 0))[0][0]
    t_up = t[i] - x[i] * (t[i + 1] - t[i]) / (x[i + 1] - x[i])
    t_dn = t[j] - x[j] * (t[j + 1] - t[j]) / (x[j + 1] - x[j])
    tol = {"euler": 2e-4}.get(integrator, 1e-6)
    assert 2 * (t_up - t_dn) == pytest.approx(T, rel=tol)
    assert np.abs(x).max() == pytest.approx(a, rel=1e-4)
    for c in ("Float.y", "Float.z"):
        assert np.abs(r[c]).max() < 1e-9 * a        # the motion stays on the axis
    e = r["energy.total"]
    assert np.ptp(e) < {"euler": 1e-3}.get(integrator, 1e-7) * np.ptp(r["energy.elastic"])


# --------------------------------------------------------------------------------------------------
# The registry rows: file, checks, study parameters
# --------------------------------------------------------------------------------------------------

def test_the_file_carries_the_parameters(tmp_path):
    m, _, _ = duffing()
    m.forces[0].params["translation_damping"] = np.array([1.0, 2.0, 3.0])
    path = tmp_path / "d.mbs.xml"
    xmlio.write(m, path)
    text = path.read_text()
    assert xmlio.schema().validate(xmlio.etree.parse(str(path)))
    numbers = xmlio.format_vector(K3)
    assert f"<TranslationCubicStiffness>{numbers}</TranslationCubicStiffness>" in text
    back = xmlio.read(path)
    f = back.forces[0]
    assert set(f.params) == {"translation_stiffness", "translation_cubic_stiffness",
                             "rotation_stiffness", "rotation_cubic_stiffness",
                             "translation_damping"}
    for k, v in m.forces[0].params.items():
        np.testing.assert_array_equal(f.params[k], v)
    np.testing.assert_array_equal(f.value("rotation_damping"), np.zeros(3))   # the default


@pytest.mark.parametrize("attr, value, words", [
    ("translation_cubic_stiffness", [1.0, 2.0], "TranslationCubicStiffness: needs 3 numbers"),
    ("rotation_damping", [1.0, -2.0, 0.0], "RotationDamping: 1 -2 0 N m s/rad; must be not "
                                           "negative"),
    ("translation_stiffness", [1.0, np.inf, 0.0], "TranslationStiffness: 1 inf 0 N/m; must be "
                                                  "finite"),
    ("stiffness_of_the_moon", 3.0, "has no parameter 'stiffness_of_the_moon'")])
def test_the_checks_name_the_parameter(attr, value, words):
    m, _, _ = duffing()
    m.forces[0].params[attr] = np.asarray(value, dtype=float) if np.ndim(value) else value
    text = "\n".join(str(p) for p in validate(m))
    assert "Mount" in text and words in text, text


def test_a_study_sweeps_a_parameter_of_the_law():
    from MultibodyWB.solver.study.parameters import target as resolve
    m, _, _ = duffing()
    target = resolve(m, "Mount.TranslationCubicStiffness[y]")
    assert target.unit == "N/m^3" and target.current == K3[1]
    target.set(m, 7.0)
    np.testing.assert_array_equal(m.forces[0].params["translation_cubic_stiffness"],
                                  [K3[0], 7.0, K3[2]])
    damping = resolve(m, "Mount.RotationDamping[z]")        # not given: its default
    assert damping.current == 0.0


def test_the_step_advice_weighs_the_bushings_rates():
    from MultibodyWB.solver.methods.runtime import stiff_elements
    m, mass, _ = duffing()
    rows = [r for r in stiff_elements(m) if r[1] == "Force 'Mount'"]
    fields = {r[2]: r[0] for r in rows}
    assert fields["TranslationStiffness"] == pytest.approx(np.sqrt(K.max() / mass))
    assert "RotationStiffness" in fields and "TranslationCubicStiffness" not in fields


def test_the_schema_documents_the_law_from_its_row():
    kind = FORCE_TYPES["nonlinear_bushing"]
    xsd = xmlio.SCHEMA_PATH.read_text()
    for p in kind.params:
        assert f'<xs:element name="{p.tag}" type="Vector3">' in xsd
        assert f"{p.tag} ({p.unit}, per axis)" in xsd
