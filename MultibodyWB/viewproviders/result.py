"""View provider of the Result (one stored run): an icon in the tree, nothing in the 3D view (an
empty display mode, so that the tree shows it as a visible object, not greyed out). Playing the
run back is the player's (the task panel), which moves the solids themselves
(:class:`MultibodyWB.animation.Animator`)."""

from .base import ViewProvider


class ViewProviderResult(ViewProvider):
    """A stored simulation run."""

    ICON = "Result.svg"
    MODE = "Result"
