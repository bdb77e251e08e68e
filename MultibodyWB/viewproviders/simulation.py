"""View provider of the Simulation settings: an icon in the tree, nothing in the 3D view (an empty
display mode, so that the tree shows it as a visible object, not greyed out). A double-click opens
the Simulate task panel of its mechanism."""

from .base import ViewProvider


class ViewProviderSimulation(ViewProvider):
    """The simulation settings."""

    ICON = "Simulation.svg"
    MODE = "Settings"

    def doubleClicked(self, vobj):
        """Open the Simulate panel of the mechanism."""
        from ..gui import simulate_panel
        from ..objects.mechanism import mechanism_of
        mechanism = mechanism_of(vobj.Object)
        if mechanism is None:
            return False
        simulate_panel.open_panel(mechanism)
        return True
