"""Documents saved without a GUI (the demo, scripts run with FreeCADCmd) reopened in the GUI.

Such a file has no ``GuiDocument.xml``: FreeCAD opens every object hidden, and the Multibody
objects have no view provider (no symbols, no icons, no double-click). :func:`ensure_views`
gives the Multibody objects their view providers and shows the mechanisms' solids and markers;
it changes nothing in a document that already has them. The Play and Simulate commands call it.
"""

import FreeCAD

from ..document import factory
from ..objects.base import BaseProxy, type_of
from ..objects.body import TYPE as BODY


def ensure_views(doc):
    """Attach missing Multibody view providers and show what they belong with; return the
    number of objects fixed."""
    fixed = 0
    for obj in doc.Objects:
        vobj = getattr(obj, "ViewObject", None)
        if vobj is None or not isinstance(getattr(obj, "Proxy", None), BaseProxy):
            continue
        if factory.has_view(obj) or not factory.attach_view(obj):
            continue
        vobj.Visibility = True
        fixed += 1
        if type_of(obj) == BODY:
            for solid in obj.Solids:
                if getattr(solid, "ViewObject", None) is not None:
                    solid.ViewObject.Visibility = True
    if fixed:
        FreeCAD.Console.PrintLog(f"MultibodyWB: {fixed} objects of '{doc.Label}' given their "
                                 "view (the file was saved without a GUI)\n")
    return fixed
