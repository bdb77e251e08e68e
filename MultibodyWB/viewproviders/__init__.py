"""View providers of the Multibody document objects (GUI only; imported when FreeCAD.GuiUp)."""
