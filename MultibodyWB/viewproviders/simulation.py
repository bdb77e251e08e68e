"""View provider of the Simulation settings: an icon in the tree, nothing in the 3D view (an empty
display mode, so that the tree shows it as a visible object, not greyed out)."""

from .base import ViewProvider


class ViewProviderSimulation(ViewProvider):
    """The simulation settings."""

    ICON = "Simulation.svg"
    MODE = "Settings"
