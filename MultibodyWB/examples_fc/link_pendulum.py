"""A link swinging on a pin, its length set by a spreadsheet: the design-study example (issue 15).

``Spreadsheet.LinkLength`` (alias of cell A1, 100 mm) sets the length of the link, a Part box
10 mm x 10 mm in section (its ``Length`` is bound to the cell by an expression). The link hangs
from a revolute pin at its end x = 0 on a base block (the ground), its axis along global y;
gravity points along +x, so the drawn link hangs straight and is released from
``THETA0`` (30 deg). A marker on the link's far end face (``Tip``) follows the length.

The Study ``LengthStudy`` varies the length on a grid and measures the period of the swing,
``period(Pivot.rz)``. Run inside FreeCAD (``setup(FreeCAD.newDocument())``) or headless;
:func:`setup` returns the Mechanism.
"""

import FreeCAD

from ..document import factory

LENGTH = 100.0          #: mm, the link's drawn length
SECTION = 10.0          #: mm, the link's width and height
THETA0 = 30.0           #: deg, the release angle
DENSITY = 2700.0        #: kg/m^3 (aluminium)
GRAVITY = 9810.0        #: mm/s^2, along +x
END_TIME = 1.5          #: s, about two and a half periods at 100 mm
STEP = 1e-3             #: s


def setup(doc, parameters=("Spreadsheet.LinkLength = 80 mm : 120 mm : 3",),
          objectives=("period(Pivot.rz)",), constraints=(), study=True, **options):
    """Build the link pendulum and (unless ``study`` is False) its Study in ``doc``; return the
    Mechanism."""
    sheet = doc.addObject("Spreadsheet::Sheet", "Spreadsheet")
    sheet.set("A1", f"{LENGTH} mm")
    sheet.setAlias("A1", "LinkLength")
    link = doc.addObject("Part::Box", "Link")
    link.Width = link.Height = SECTION
    link.Placement.Base = FreeCAD.Vector(0, -SECTION / 2, -SECTION / 2)
    link.setExpression("Length", "Spreadsheet.LinkLength")
    base = doc.addObject("Part::Box", "Base")
    base.Length, base.Width, base.Height = 20.0, 40.0, 40.0
    base.Placement.Base = FreeCAD.Vector(-20, -20, -20)
    doc.recompute()

    mech = factory.make_mechanism(doc, "LinkPendulum", gravity=(GRAVITY, 0.0, 0.0),
                                  simulation=False,
                                  description="a link on a pin, its length from a spreadsheet")
    factory.make_simulation(doc, mech, end_time=END_TIME, step=STEP, output_step=STEP)
    ground = factory.make_body(doc, mech, base, ground=True, name="Base body")
    body = factory.make_body(doc, mech, link, density=DENSITY, name="Link body")
    # Part::Box faces: Face1 at x = 0, Face2 at x = Length (centred on them: flat-face markers)
    pin = factory.make_marker(doc, body, (link, "Face1"), name="PinOnLink")
    seat = factory.make_marker(doc, ground, (base, "Face2"), name="PinOnBase")
    factory.make_marker(doc, body, (link, "Face2"), name="Tip")
    for marker in (pin, seat):
        factory.orient_marker(marker, z=(0, 1, 0), x=(1, 0, 0))
    factory.make_hinge(doc, mech, "revolute", pin, seat, name="Pivot", initial=[THETA0])
    doc.recompute()
    if not study:
        return mech
    factory.make_study(doc, mech, "LengthStudy", parameters=parameters, objectives=objectives,
                       constraints=constraints, **options)
    doc.recompute()
    return mech
