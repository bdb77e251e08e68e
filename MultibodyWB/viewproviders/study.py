"""View provider of the Study: an icon in the tree, nothing in the 3D view (an empty display mode,
so that the tree shows it as a visible object, not greyed out). A double-click opens the Study
task panel."""

from .base import ViewProvider


class ViewProviderStudy(ViewProvider):
    """A design study."""

    ICON = "Study.svg"
    MODE = "Study"

    def doubleClicked(self, vobj):
        """Open the Study panel."""
        from ..gui import task_study
        task_study.open_panel(vobj.Object)
        return True
