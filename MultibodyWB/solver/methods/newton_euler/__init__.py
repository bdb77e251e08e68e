"""The discrete-time Newton-Euler method: every body on its own, joints as stiff spring-dampers.

After Zhanal and Portes, *Calculation of mechanism motion using discrete time approach* (Vibroeng.
Procedia 18, 2018): each rigid body is integrated by the Newton-Euler equations with a very small
step (1e-5 to 1e-7 s); its orientation is updated by the incremental rotation matrix about the axis
of its angular velocity; every joint is a very stiff spring-damper on the relative motions it
forbids. No system matrix, no solve: the cost per step is linear in the number of bodies and
joints, and the loops are tight compiled code. Closed loops need no special treatment: tree and
cut hinges are the same kind of element here.

State (absolute coordinates, global axes, SI)
    Per body: the mass centre ``x``, the rotation ``R`` of the body's *central principal frame*
    (the base frame turned by the principal axes of the inertia tensor about the mass centre, so
    that the inertia is diagonal, ``J = diag(J1, J2, J3)``), the velocity ``v`` of the mass centre
    and the angular momentum ``L`` about the mass centre. Markers and force points are stored in
    that frame once, at assembly; results are turned back to the base frame.

One step of length h (the paper's scheme: loads, then velocities, then positions)
    1. Loads at (t, state): gravity, point forces and torques, spring-dampers, rotational
       spring-dampers, and for every hinge its penalty wrench (below) plus its own springs and
       dampers on its free coordinates. Force ``F`` and torque ``T`` about the mass centre.
    2. Velocities: ``v += h F / m``, ``L += h T`` (Newton; Euler's equations in their momentum
       form ``dL/dt = T``, which is ``J dw_b/dt + w_b x J w_b = T_b`` in body axes).
    3. Drivers (see below): velocity-level projection of each driven coordinate.
    4. Positions: ``x += h v`` (semi-implicit, symplectic Euler: the new velocity moves the body),
       ``R <- R exp(~w_b h)`` with ``w_b = J^-1 R^T L`` the new body-axes angular velocity: the
       incremental rotation by the angle ``|w| h`` about the axis of ``w`` (Rodrigues' formula, the
       paper's Eq. (1) and (11); a series in ``|w| h`` below 1e-2, exact to round-off). Working with
       ``L`` instead of ``w`` makes the free gyroscopic motion exact in magnitude (``|L|`` is kept
       by the rotation; an explicit ``w x J w`` term would make a fast spinning body gain energy
       by a factor ``1 + (|w| h)^2`` per step). ``R`` is re-orthonormalised every 64 steps.
    The scheme is first order (global error O(h)) and symplectic: without dampers the energy error
    stays bounded (O(h)) instead of drifting.

Joints: penalty spring-dampers on the forbidden relative motions
    For hinge j with output marker frame ``A`` (origin ``pA``) on body ``o`` and input marker frame
    ``B`` (origin ``pB``) on body ``i``, ``r = pB - pA``, ``dv`` the velocity of B's material point
    at ``pB`` relative to A's material point there, ``dw = w_i - w_o``, the displacement ``d`` in
    the blocked directions is

    * translations: ``d_a = e_a . r`` along the blocked axes ``e_a`` of ``A`` (all three for
      revolute, universal, spherical, fixed; x and y for prismatic and cylindrical; z for planar);
    * rotations: the misalignment of the axes, ``zA x zB`` on ``xA, yA`` for revolute, cylindrical
      and planar hinges; ``1/2 vee(B A^T - A B^T)`` (the rotation vector for small angles) on
      ``xA, yA, zA`` for fixed and prismatic hinges; ``xA . yB`` about ``n = xA x yB`` for
      universal hinges (the cross stays square). Spherical, free and bushing hinges block no
      rotation; free and bushing hinges no translation.

    The penalty is a spring-damper *weighted by the joint's effective mass*: with ``d`` the
    blocked displacements (rotations and translations together, up to six rows) and ``d'`` their
    rates,

        ``lambda = M (w_j^2 d + c_j d')``,    ``M = G^-1``,    ``G = sum_b J_b M_b^-1 J_b^T``

    where row k of ``J_b`` is body b's velocity along row k per unit twist of the body (``[e_k;
    0]`` for a rotation row, ``[s_b x e_k; e_k]`` for a translation row at ``pB``, ``s_b`` the
    arm from the body's mass centre to ``pB``) and ``M_b = diag(J_b, m_b I)`` its inertia at the
    mass centre (the ground contributes nothing). ``G`` is the mobility of the joint: the
    relative acceleration of its blocked rows per unit of their loads ``lambda``. Body i gets the
    forces ``-lambda_k e_k`` at ``pB`` and the torques ``-lambda_k e_k``, body o the opposite
    (forces also at ``pB``: then the translational part is the exact gradient of
    ``1/2 d^T K d`` for constant ``K = w_j^2 M``, turning of ``A`` included). So the joint
    alone, between its two bodies, is an oscillator of the same natural frequency ``w_j`` in every
    blocked direction, whatever the masses, inertias and lever arms. (A scalar stiffness per
    direction is limited by the most mobile direction, e.g. the spin of a slender link about its
    axis, and leaves the others soft; separate translation and rotation blocks miss that a
    rotation about the joint point moves the mass centre: on seed 004's arm, whose joint is 0.3 m
    from a 50 mm cube, that mode is 15 times slower than the block estimate, nearly undamped, and
    rang at 10 rad/s^2 through the run.)

    ``G`` changes only with the bodies' orientations (by about ``|w| h`` per step): it is built
    and inverted (Cholesky) every :data:`REFRESH_EVERY` = 16 steps, and between refreshes ``M``
    is extrapolated linearly from the last two (holding it constant instead makes the stiffness
    jump at every refresh, and the joints ring: 10 times the reaction error of a refresh every
    step; with the extrapolation the error is that of a refresh every step, at 1.8 times the
    speed).

Default joint frequency and damping (derived from the step)
    For symplectic Euler the oscillator ``x'' + 2 z w x' + w^2 x = 0`` is stable for
    ``4 - 4 z w h - (w h)^2 > 0`` (amplification matrix of one step: trace ``2 - 2 z w h -
    (w h)^2``, determinant ``1 - 2 z w h``, Jury's conditions): ``w h < 0.83`` when critically
    damped, ``w h < 2`` undamped. The step's Nyquist limit is ``pi / h``; the top of the penalty
    spectrum is placed at

        ``w_J = f pi / h``,  f = :data:`JOINT_FRACTION` = 0.1  (``w_J h = 0.31``, 20 steps a period)

    a stability margin of 2.6 (f may go to 0.26). Joints share the bodies: a body held by ``n``
    penalty joints would see its modes add up to ``sqrt(n)`` times one joint's frequency
    (Gershgorin), so a hinge whose bodies carry at most ``n_j`` hinges with blocked directions
    gets

        ``w_j = w_J / sqrt(n_j)``      (``w_J / sqrt 2`` for a link with a hinge at each end)

    Measured on the examples (the penalty system linearised at rest by finite differences), the
    highest penalty mode is then 0.93 to 1.0 ``w_J``. The damping is proportional to the
    stiffness and critical at ``w_J``: ``c_j = 2 z w_j^2 / w_J`` (z = 1), so that every penalty
    mode ``w_i <= w_J`` has the damping ratio ``z w_i / w_J <= 1``. (Critical damping at each
    joint's own ``w_j`` instead over-damps the coupled modes above it, up to 1.7 times critical on
    the examples, and the explicit damper turns them unstable at f = 0.2.) A joint alone rings
    down at the rate ``z w_j^2 / w_J = z w_J / n_j``, in 0.06 ms for ``n_j = 2`` at h = 1e-5 s.
    The joint deflects by about ``(load / effective mass) / w_j^2 = n_j a h^2 / (f pi)^2``: 2e-8 m
    for an acceleration of 10 m/s^2 and n_j = 2 at h = 1e-5 s; the method converges to rigid
    joints as ``h -> 0``. Overrides: ``joint_fraction`` (f), ``joint_frequency`` (``w_J / 2 pi``
    in Hz, absolute), ``joint_damping_ratio`` (z); :meth:`NewtonEuler.joint_stiffness` gives a
    hinge's current stiffness matrix.

Drivers: velocity-level projection instead of a servo spring
    A stiff servo spring on a driven coordinate lags under load by ``load / k``: on the engine's
    crank, whose own inertia is small compared to the loads it carries, that is degrees. Instead
    each driven coordinate is made to follow its prescribed value exactly: after the velocity
    update of step n, an impulse ``P`` along the coordinate (torque about the hinge axis, or force
    along the slide at ``pB``, equal and opposite on the two bodies) sets the coordinate's rate to
    ``(q_d(t_{n+1}) - q_n) / h``, so that the position update lands the coordinate on
    ``q_d(t_{n+1})`` (to first order in the step; the next step corrects what is left). ``P``
    follows from the coordinate's effective inverse inertia of the two bodies (``e^T J^-1 e``,
    or ``1/m + (r x e)^T J^-1 (r x e)``); the driver load is ``P / h``. This is the exact
    rheonomic constraint for that one coordinate, stable for any load, with no parameter; it is
    not a stiff spring, so it adds no fast mode. Several drivers are projected one after another.

Results (the same columns as every method, see :mod:`.results`)
    At each output time the state at that time is evaluated (loads, joint wrenches, drivers) as
    the step from that time does: the reaction of a hinge is its penalty wrench plus its springs,
    dampers and driver, on its input body at the input marker's origin; body accelerations are
    those of the Newton-Euler equations of that step (``a = F/m``, ``alpha = J^-1 (T - w x L)``,
    driver impulses included); hinge coordinates are measured from the bodies' poses (angles
    tracked every step so that they are continuous over any number of turns), rates and
    accelerations are projections of the bodies' relative motion on the hinge's axes.
    Cut hinges have the columns of every hinge plus their loop-closure errors (``closure_gap``
    ...), here the deflection of their penalty joint (:class:`NewtonEulerRecorder`).
    The energy balance (``energy.work_drivers``, ``work_forces``, ``dissipated``): the power of
    the drivers (their loads times the coordinates' rates), of the applied forces and of the
    hinges' own and the force elements' dampers, evaluated at the output times and integrated by
    the trapezoidal rule, so it is as accurate as the output step resolves the motion. The
    penalty joints are not in it: the energy they store (deflection ``1/2 d^T K d``) and
    dissipate (their damping), the method's O(h) energy error, and the sampling error of the
    works are in ``energy.residual``; use a fine output step (or ``mstmm``) for a tight balance.
    At t = 0 the joints are not yet deflected: the first row has zero reactions and the
    accelerations of the bodies without their joints. The joints load within their ring-down time
    (about ``n_j / w_J``, some ten steps), after which the reactions follow the rigid ones to
    O(h). Where constraints are redundant (a planar four-bar of revolute hinges in 3D) the rigid
    reactions are not unique: the penalty joints share those loads by their stiffness (an elastic
    solution), the MSTMM solver gives the minimum-norm cut-hinge loads; the motion agrees.

Initial state
    From the hinges' initial coordinates and rates (drivers at t = 0), placed by the spanning
    tree (:func:`.kinematics.forward_kinematics`) with body initial velocities on free hinges
    as in :class:`.system.System`. For closed loops the position coordinates not given are
    adjusted by Newton iterations to close the loops (when the drawing does not), and the rates
    not given are made consistent with the loops (least-norm correction, the given and driven
    ones kept: the same rates as the assembly of the other methods on the examples), so that the
    stiff joints do not start with a jolt. Bodies not connected to the ground keep their drawn
    pose and their initial velocities.
"""
