"""What the ``Simulation`` settings accept: the solution methods and the integrators."""

#: Solution methods and integrators the simulation settings accept.
METHODS = ("mstmm", "constrained", "newton-euler")
INTEGRATORS = ("rk4", "euler", "DOP853", "RK45", "Radau", "BDF", "LSODA", "trbdf2",
               "trbdf2-adaptive")
#: The fixed-step integrators (``Step`` is their step; ``OutputStep`` a whole number of steps):
#: classical Runge-Kutta (four evaluations a step) and semi-implicit (symplectic) Euler (one).
#: The other integrators are scipy's adaptive ones, and the implicit ones (:data:`IMPLICIT`).
#: (The newton-euler method has its own fixed-step scheme, a symplectic Euler step, whatever
#: ``Integrator`` says.)
FIXED_STEP = ("rk4", "euler")
#: The implicit integrators compiled with the mstmm method's evaluation (TR-BDF2, L-stable,
#: 2nd order, for stiff models: :mod:`..methods.mstmm.implicit`): ``trbdf2`` with the fixed
#: step ``Step`` (halved only where Newton's iteration fails; the output rows from each step's
#: interpolant, so ``OutputStep`` need not be a whole number of steps), ``trbdf2-adaptive``
#: with the error control of ``RelativeTolerance`` and ``AbsoluteTolerance`` (``Step`` the
#: first step). Both use the tolerances for Newton's iteration. (The names are told apart
#: without regard to case, as every integrator's: not ``trbdf2`` and ``TRBDF2``.)
IMPLICIT = ("trbdf2", "trbdf2-adaptive")
