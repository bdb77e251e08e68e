"""View provider of the Result (one stored run): an icon in the tree, nothing in the 3D view (an
empty display mode, so that the tree shows it as a visible object, not greyed out). A double-click
opens the player (a task panel) on the run, which moves the solids themselves
(:class:`MultibodyWB.document.animation.Animator`)."""

from .base import ViewProvider


class ViewProviderResult(ViewProvider):
    """A stored simulation run."""

    ICON = "Result.svg"
    MODE = "Result"

    def doubleClicked(self, vobj):
        """Open the player on this run."""
        from ..gui import player
        from ..objects.mechanism import mechanism_of
        mechanism = mechanism_of(vobj.Object)
        if mechanism is None:
            return False
        player.open_player(mechanism, vobj.Object)
        return True
