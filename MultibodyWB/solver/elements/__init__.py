"""The elements a model is made of, each defined in one place: hinge types (:mod:`.hinges`) and
force laws (:mod:`.forces`)."""
