"""The document objects of the Multibody workbench, one module per concept.

``mechanism`` (the container: gravity, ground, its members), ``body`` (solids taken as one rigid
body and their mass properties), ``marker`` (a frame attached to a body's face, edge or vertex by
FreeCAD's attachment engine), ``hinge``, ``force``, ``contact`` (two bodies' shapes touching, and
what a picked face is), ``coupler`` (a gear pair or other coupling of two hinges' coordinates),
``simulation`` and ``result`` (one stored
simulation run). All share ``base.BaseProxy``. Objects are made with the functions of
:mod:`MultibodyWB.document.factory`, never by hand. ``export`` reads them into the solver's
neutral model; it sits here, below ``mechanism``, whose recompute checks the model with it.

A saved document names each object's proxy class by its module (``MultibodyWB.objects.body``
``.BodyProxy``...): these modules and class names stay as they are, or old files lose their objects.
"""
