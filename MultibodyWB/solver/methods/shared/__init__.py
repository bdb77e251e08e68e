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
"""
