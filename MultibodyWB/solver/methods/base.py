"""The contract every method keeps, and the table of the methods (:data:`METHODS`).

A method integrates a model's equations of motion from its start to its end time and records
the result rows. :func:`...run.simulate.simulate` checks the model and the settings, starts the
model from the drawing (:mod:`...analysis.start`), looks the method up in :data:`METHODS` and
calls its :meth:`Method.solve`; then it checks the results (values that are not finite, the
energy balance) and adds the start's record. A method is one entry of :data:`METHODS`, and
keeps these rules (tests/test_methods_contract.py holds them for every entry):

1. A method is a subclass of :class:`Method`, registered in :data:`METHODS` under its name,
   the ``Simulation/Method`` it answers to (:data:`...model.settings.METHODS` lists the names a
   model may hold). Its package is ``methods/<name>/``; it imports from the layers below
   ``methods``, from :mod:`.runtime` and from :mod:`.shared`, never from another method's
   package (what two methods share moves to :mod:`.shared`). Not yet so for four imports (the
   constrained method on mstmm's System and kernels, mstmm's loop rows on the constrained
   formulation, newton-euler's power on an mstmm kernel): listed in
   tests/test_methods_contract.py, a list that may only shrink.
2. Input: :meth:`Method.solve` takes a :class:`Prepared` run: the model as started (its check
   passed, its start moved to where the drawing says, corrections accepted), the start's report,
   and the run's settings already resolved and checked (method and integrator by their canonical
   names, end time, step, output step, tolerances, the method's options). A method does not
   check them again, and does not change the model.
3. Output: :meth:`Method.solve` returns :class:`~...results.table.Results`: ``names`` (the first
   ``time``, then the columns of :mod:`...model.columns`, the ``energy.*`` columns last),
   ``data`` (one row per output time ``0, OutputStep, 2 OutputStep, ...`` and ``EndTime``),
   ``states`` (the method's state at each output time, one row per data row: ``meta['ny']``
   columns), ``meta`` with at least :data:`META_KEYS`. The caller adds the start's record
   (``meta['start']``...) and its warnings; the method adds its own warnings to
   ``meta['warnings']`` (a list).
4. What a method may raise: :class:`~...model.problems.ModelError` (its
   :class:`~.runtime.RunError` too) when the run stops because of the model, naming the element
   and field to look at (a hinge or body whose state is not finite, and when; the stiffest
   element when an integrator cannot go on); :class:`~.runtime.Cancelled` when ``cancel()``
   returned True; :class:`~.runtime.SimulationError` when the integration failed for a reason
   the method cannot put on an element (the caller adds the element to look at);
   :class:`~...model.timefunction.EvaluationError` (a ModelError) from an expression that cannot
   be evaluated at a time. ``ArithmeticError``, ``ValueError``, ``SystemError`` and
   ``numpy.linalg.LinAlgError`` from a numerical breakdown may pass through: the caller makes
   them a RunError with the time reached. Nothing else; never results with values that are not
   finite (the caller refuses them, naming the column).
5. Progress and cancel: ``progress(fraction)`` is called with fractions of the simulated time
   that never decrease, the first 0.0, the last 1.0; ``cancel()`` is looked at between chunks
   of at most about 0.1 s of wall time (:data:`.mstmm.run.CHUNK_SECONDS`), and a True stops the
   run with :class:`~.runtime.Cancelled`. ``cancel`` may raise
   :class:`~.runtime.BudgetExceeded` (the run's wall-clock budget), which the method passes on.
6. The energy check: the ``energy.*`` columns hold the kinetic and potential energies, the work
   of the drivers and forces, the energy dissipated, and the residual of the balance. When
   :attr:`Method.energy_check` is True that residual is the method's integration error, and the
   caller warns and marks the run untrusted (:meth:`~...results.table.Results.mark_untrusted`)
   when it passes :data:`...run.simulate.ENERGY_WARNING` of the energies' scale. A method whose
   residual holds more than its error (newton-euler: the energy its penalty joints store and
   dissipate) sets it False and says so in its docstring.
7. Options: keyword options of a method are named in :attr:`Method.options`; a method with
   ``options = ()`` refuses any (TypeError); ``None``: options are ignored (the constrained
   method, as before issue 36).
8. Fixed steps: :meth:`Method.fixed_step` says whether ``Step`` is the run's step (then
   ``OutputStep`` is a whole number of steps and the contacts' stiffness is checked against it
   before the run) or only the first step of an adaptive integrator.
"""

from __future__ import annotations

import time as _time
from dataclasses import dataclass, field

from ..model.settings import FIXED_STEP
from ..results.table import Results

#: What every method's ``meta`` holds (rule 3).
META_KEYS = ("model", "method", "step", "output_step", "end_time", "wall_time", "steps",
             "evaluations")


@dataclass
class Prepared:
    """A run ready to solve (rule 2): the model as started and the run's settings, resolved and
    checked.

    Attributes
    ----------
    model : MultibodySystem
        The model as started (:func:`...analysis.start.prepare`).
    start : StartReport
        What the start did (moves, notes).
    method, integrator : str
        Canonical names (:data:`...model.settings.METHODS`, ``INTEGRATORS``).
    t_end, step, output_step : float
        End time, step (fixed) or first step (adaptive), output spacing (s).
    rtol, atol : float
        The adaptive integrators' tolerances.
    options : dict
        The method's options (rule 7).
    wall0 : float
        ``time.perf_counter()`` when the run began (``meta['wall_time']`` counts from it).
    topology : Topology or None
        The model's (:func:`...analysis.topology.analyse`), analysed once by the start and
        handed to the method (None: the method analyses it).
    """

    model: object
    start: object
    method: str
    integrator: str
    t_end: float
    step: float
    output_step: float
    rtol: float
    atol: float
    options: dict = field(default_factory=dict)
    wall0: float = field(default_factory=_time.perf_counter)
    topology: object = None


class Method:
    """A method of :data:`METHODS` (the rules: the module docstring). A subclass sets
    :attr:`name` and the class attributes that differ and implements :meth:`solve`."""

    #: The ``Simulation/Method`` it answers to.
    name = ""
    #: Rule 6: the energy balance's residual is the integration error (checked by the caller).
    energy_check = True
    #: Rule 7: the keyword options it takes; () none (refused), None ignored.
    options = ()

    def fixed_step(self, integrator: str) -> bool:
        """Rule 8: whether ``Step`` is the step of every step of the run."""
        return integrator in FIXED_STEP

    def watch_stall(self, integrator: str) -> bool:
        """Whether the caller looks for a stall in the progress reported (wall time against
        simulated time): for a method whose adaptive integrator has no stall detector of its
        own (:class:`~.runtime.StallDetector`)."""
        return False

    def check_options(self, options: dict) -> None:
        """Rule 7: raise TypeError for options the method does not take."""
        if options and self.options == ():
            raise TypeError(f"the method {self.name} takes no options ({', '.join(options)})")

    def solve(self, run: Prepared, progress, cancel) -> Results:
        """Rules 2 to 5: the results of the prepared ``run``."""
        raise NotImplementedError

    def _meta(self, run: Prepared, **more) -> dict:
        return dict(model=run.model.name, method=self.name, integrator=run.integrator,
                    step=run.step, output_step=run.output_step, end_time=run.t_end,
                    wall_time=_time.perf_counter() - run.wall0, **more)


class Mstmm(Method):
    """The tree solver (:mod:`.mstmm`): the Riccati form of the transfer matrix method, its
    runs with every integrator in :mod:`.mstmm.run`."""

    name = "mstmm"

    def solve(self, run, progress, cancel):
        from .mstmm import run as mstmm_run
        return mstmm_run.run(run.model, run.integrator, run.t_end, run.step, run.output_step,
                             run.rtol, run.atol, progress, cancel, run.wall0,
                             topology=run.topology)


class Constrained(Method):
    """The global formulation (:mod:`.constrained`): absolute coordinates and Lagrange
    multipliers, integrated from Python (:func:`.constrained.run.run`)."""

    name = "constrained"
    options = None

    def watch_stall(self, integrator):
        return integrator not in FIXED_STEP

    def solve(self, run, progress, cancel):
        from .constrained.run import run as constrained_run
        names, times, states, data, info = constrained_run(
            run.model, run.integrator, run.t_end, run.step, run.output_step, run.rtol, run.atol,
            progress, cancel, topology=run.topology)
        meta = self._meta(run, **info)
        if run.integrator not in FIXED_STEP:
            meta.update(relative_tolerance=run.rtol, absolute_tolerance=run.atol)
        return Results(names, data, meta, states)


class NewtonEuler(Method):
    """The discrete-time method (:mod:`.newton_euler`): every body on its own with a very small
    step, joints as stiff spring-dampers. Its own scheme: the integrator does not apply (every
    step is ``Step``). No energy check (rule 6): the energy its penalty joints store and
    dissipate is in the balance's residual."""

    name = "newton-euler"
    energy_check = False
    options = ("joint_fraction", "joint_frequency", "joint_damping_ratio")

    def fixed_step(self, integrator):
        return True

    def solve(self, run, progress, cancel):
        from .newton_euler.run import run as newton_euler_run
        times, states, data, info, rec = newton_euler_run(
            run.model, run.t_end, run.step, run.output_step, progress, cancel,
            topology=run.topology, **run.options)
        meta = dict(model=run.model.name, method=self.name, step=run.step,
                    output_step=run.output_step, end_time=run.t_end,
                    wall_time=_time.perf_counter() - run.wall0, bodies=rec.bodies,
                    hinges=rec.hinges, ny=int(states.shape[1]), **info)
        return Results(rec.names, data, meta, states)


#: The methods by the name ``Simulation/Method`` gives (rule 1).
METHODS = {m.name: m for m in (Mstmm(), Constrained(), NewtonEuler())}
