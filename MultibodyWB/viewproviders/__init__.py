"""View providers of the Multibody document objects (GUI only; imported when FreeCAD.GuiUp).

A document saved with the GUI names each view provider's class by its module
(``MultibodyWB.viewproviders.body.ViewProviderBody``...): these modules and class names stay as
they are, or old files open without their symbols and panels.
"""
