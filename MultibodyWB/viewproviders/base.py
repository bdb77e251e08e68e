"""The minimal view provider shared by every Multibody object: its icon, by object type.

The full view providers (marker triads, hinge symbols, problem overlays, task panels) come later;
this one only gives each object its icon in the tree. It keeps no state: after a document is
restored the icon is found again from the object's ``Proxy.Type``.
"""

from .. import gui_utils

#: Object ``Type`` -> icon file in ``MultibodyWB/resources/icons``.
ICONS = {
    "Multibody::Mechanism": "Mechanism.svg",
    "Multibody::Body": "Body.svg",
    "Multibody::Marker": "Marker.svg",
    "Multibody::Hinge": "Hinge.svg",
    "Multibody::Force": "Force.svg",
    "Multibody::Simulation": "Simulation.svg",
}


class ViewProvider:
    """View provider proxy giving a Multibody object its icon."""

    def __init__(self, vobj):
        vobj.Proxy = self

    def attach(self, vobj):
        self.ViewObject = vobj
        self.Object = vobj.Object

    def getIcon(self):
        obj = getattr(self, "Object", None)
        type_name = getattr(getattr(obj, "Proxy", None), "Type", None)
        return gui_utils.icon_path(ICONS.get(type_name, "MultibodyWB.svg"))

    # FreeCAD 0.20 saves a proxy with __getstate__ when it has one (Python 3.11 gives every object
    # one, returning __dict__, which holds the view object), 1.0 with dumps: both keep nothing.
    def dumps(self):
        return None

    def loads(self, state):
        return None

    __getstate__ = dumps
    __setstate__ = loads
