"""The add-on's resources (icons, the XSD schema) and where they are.

This module imports neither FreeCAD nor Qt, so it can be used (and tested) anywhere, including from
InitGui.py before the workbench is initialised.
"""

import os

RESOURCES_DIR = os.path.dirname(os.path.abspath(__file__))
"""This directory: ``MultibodyWB/resources``."""

PACKAGE_DIR = os.path.dirname(RESOURCES_DIR)
"""Directory of the ``MultibodyWB`` package."""

ADDON_DIR = os.path.dirname(PACKAGE_DIR)
"""Directory of the add-on (the one holding package.xml, Init.py and InitGui.py)."""

ICONS_DIR = os.path.join(RESOURCES_DIR, "icons")


def icon_path(name):
    """Return the absolute path of the icon file ``name`` in ``MultibodyWB/resources/icons``.

    Parameters
    ----------
    name : str
        File name, with extension (``"MultibodyWB.svg"``).

    Returns
    -------
    str
        Absolute path; the file is not required to exist.
    """
    return os.path.join(ICONS_DIR, name)


WORKBENCH_ICON = icon_path("MultibodyWB.svg")
"""Absolute path of the workbench icon."""
