"""The mechanism's status names the hinge that closes each loop (headless FreeCAD): where a
designer looks to learn which hinge is the cut one, whose springs and dampers act between its
markers like any hinge's."""

import pytest

pytestmark = pytest.mark.freecad


@pytest.fixture
def doc(freecad):
    d = freecad.newDocument("CutHingeStatus")
    yield d
    freecad.closeDocument(d.Name)


def test_status_names_the_hinge_that_closes_the_loop(freecad, doc):
    from MultibodyWB.examples_fc import crank_slider
    from MultibodyWB.objects.mechanism import mechanism_status
    mech = crank_slider.setup(doc)
    big_end = doc.getObject("BigEnd")
    lines = mech.Status.split("\n")
    assert ("Loop: closed by 'BigEnd' (through 'connecting rod', 'piston', 'engine frame', "
            "'crank')") in lines, lines
    big_end.Label = "Big end – rod"                   # a label with any character
    mech.touch()
    doc.recompute()
    lines = mech.Status.split("\n")
    loop = [line for line in lines if line.startswith("Loop")]
    assert loop == ["Loop: closed by 'Big end – rod' (through 'connecting rod', 'piston', "
                    "'engine frame', 'crank')"], lines
    assert lines[0] == "1 degree of freedom, 1 driven"      # the headline as before
    assert mechanism_status(mech).loops == loop
