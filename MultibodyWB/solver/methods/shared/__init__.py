"""What the methods share, below them: each method package (``mstmm``, ``constrained``,
``newton_euler``) imports from here and from :mod:`..runtime`, never from another method
(tests/test_methods_contract.py). Nothing here imports a method.

:mod:`.instant`
    :class:`~.instant.Instant`, what a method knows at one instant (the result rows are made
    from it), and :func:`~.instant.marker_attachment`, where a marker sits as the methods'
    arrays need it.
:mod:`.singularity`
    :class:`~.singularity.SingularityMonitor`, the singular configurations a run with closed
    loops passes, from a conditioning ratio sampled in time (the mstmm and the constrained
    methods).
:mod:`.system`
    :class:`~.system.PreparedSystem`, the model's tree in flat arrays and the state layout every
    method starts from (mstmm's ``System`` adds its kernels' evaluation).
:mod:`.power`
    :func:`~.power.power_flows`, the compiled power of drivers, forces and dampers.
:mod:`.loops`
    The bodies in absolute coordinates from the tree's (Python) and the loop-closure
    constraints at an instant (:func:`~.loops.loop_constraints`).
:mod:`.cut_rows`
    :class:`~.cut_rows.CutHingeRecorder`, the result columns of the cut hinges.

The relative kinematics of each hinge type is below the methods too, with the hinge types:
:mod:`...elements.hinge_kinematics`.
"""
