"""What the ``Simulation`` settings accept: the solution methods and the integrators."""

#: Solution methods and integrators the simulation settings accept.
METHODS = ("mstmm", "constrained", "newton-euler")
INTEGRATORS = ("rk4", "euler", "DOP853", "RK45", "Radau", "BDF", "LSODA")
#: The fixed-step integrators (``Step`` is their step; ``OutputStep`` a whole number of steps):
#: classical Runge-Kutta (four evaluations a step) and semi-implicit (symplectic) Euler (one).
#: The other integrators are scipy's adaptive ones. (The newton-euler method has its own
#: fixed-step scheme, a symplectic Euler step, whatever ``Integrator`` says.)
FIXED_STEP = ("rk4", "euler")
