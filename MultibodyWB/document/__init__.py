"""The Multibody model in a FreeCAD document, without Qt: making, importing, running, moving.

:mod:`.factory` makes the document objects (the functions the GUI commands call and record as
macro lines), :mod:`.import_model` builds them from a neutral model file, :mod:`.runs` simulates a
mechanism and stores its runs as Result objects, :mod:`.animation` moves the solids and markers
to a run's poses and :mod:`.preview` to the poses of a kinematic preview; :mod:`.interference`
finds the bodies whose solids overlap as drawn. The export to the neutral
model is :mod:`MultibodyWB.objects.export`, below the objects' proxies (the Mechanism's recompute
checks the model with it). Above this package: the view providers, the GUI and the commands.
"""
