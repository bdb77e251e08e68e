"""What the ``Simulation`` settings accept: the solution methods and the integrators."""

#: Solution methods and integrators the simulation settings accept.
METHODS = ("mstmm", "constrained", "newton-euler")
INTEGRATORS = ("rk4", "DOP853", "RK45", "Radau", "BDF", "LSODA")
