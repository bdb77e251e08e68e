"""The Multibody workbench in the FreeCAD GUI, under Xvfb: commands, view providers, files.

Each GUI script in ``tests/gui`` runs once per module (a fixture) in its own FreeCAD; the tests
then check what it reported:

- ``check_commands.py``: every command in the toolbars and the menu, enabled by the selection it
  needs; run on a selection it makes its objects through the factory in one undo step, echoed as
  macro lines in the Python console; export, import and the topology figure;
- ``check_crank_slider.py``: the crank-slider engine built from solids shows the markers' axes,
  the hinge symbols and the gas force arrow (screenshot, colours counted, symbols measured); the
  view settings, the problem marking; save, close and reopen keep the objects and their view
  providers (also for a file saved with the older base view provider class);
- ``check_refusals.py``: export, topology figure and import refuse a model with problems, listing
  every problem in a dialog and in the report view;
- ``check_gallery.py``: one hinge of every type and one force of every type, each drawn.

Screenshots are copied to ``$MBWB_ARTIFACTS_DIR`` when it is set.
"""

import os
import re
import shutil
from pathlib import Path

import pytest

import freecad_env

GUI_DIR = Path(__file__).resolve().parent / "gui"

#: What the mechanism's check prints for an object with a problem (expected while a model is built).
MODEL_REPORT = re.compile(r"^(Err|Wrn): MultibodyWB: "
                          r"(Mechanism|Body|Marker|Hinge|Force|Simulation) "
                          r"'[^']*'(, property [\w, ]+)?: ")


def _run(name, tmp_path_factory):
    work = tmp_path_factory.mktemp(name.replace(".py", ""))
    return freecad_env.run_freecad_gui(GUI_DIR / name, timeout=400, work_dir=work)


def _keep(result, *names):
    """Copy the screenshots ``names`` of a run to $MBWB_ARTIFACTS_DIR (if set)."""
    artifacts = os.environ.get("MBWB_ARTIFACTS_DIR")
    if not artifacts:
        return
    os.makedirs(artifacts, exist_ok=True)
    for name in names:
        path = Path(result["_output_dir"]) / name
        if path.is_file():
            shutil.copy(path, Path(artifacts) / name)


def _no_exception(result):
    assert "exception" not in result, result["exception"]


@pytest.fixture(scope="module")
def commands_run(tmp_path_factory):
    result = _run("check_commands.py", tmp_path_factory)
    _keep(result, "commands_window.png", "topology_dialog.png")
    return result


@pytest.fixture(scope="module")
def crank_run(tmp_path_factory):
    result = _run("check_crank_slider.py", tmp_path_factory)
    _keep(result, "crank_slider_gui.png", "crank_slider_reopened.png", "main_window.png",
          "toolbar.png")
    return result


@pytest.fixture(scope="module")
def refusals_run(tmp_path_factory):
    return _run("check_refusals.py", tmp_path_factory)


@pytest.fixture(scope="module")
def gallery_run(tmp_path_factory):
    result = _run("check_gallery.py", tmp_path_factory)
    _keep(result, "glyph_gallery_iso.png")
    return result


# --- the tables (no GUI needed) -------------------------------------------------------------------

@pytest.mark.freecad
def test_symbol_tables_cover_every_solver_type(freecad):
    pytest.importorskip("pivy.coin")
    from MultibodyWB import resources
    from MultibodyWB.solver.model import FORCE_TYPES, HINGE_TYPES
    from MultibodyWB.viewproviders import force, hinge
    assert set(hinge.HINGE_GLYPHS) == set(HINGE_TYPES)
    assert set(force.FORCE_GLYPHS) == set(FORCE_TYPES)
    for name in HINGE_TYPES:
        assert Path(resources.icon_path(hinge.icon_file(name))).is_file(), name
    for name in FORCE_TYPES:
        assert Path(resources.icon_path(force.icon_file(name))).is_file(), name


# --- commands -------------------------------------------------------------------------------------

@pytest.mark.gui
def test_every_command_is_in_the_toolbars_and_the_menu(commands_run):
    r = commands_run
    _no_exception(r)
    assert r["toolbars"] == r["expected_toolbars"]
    assert set(r["toolbars"]) == {"Multibody model", "Multibody hinges", "Multibody forces",
                                  "Multibody simulation"}
    assert r["toolbars"]["Multibody simulation"] == [
        "MultibodyWB_Simulate", "MultibodyWB_Play", "MultibodyWB_Plot", "MultibodyWB_Study",
        "MultibodyWB_FemLoads"]
    assert r["menu"] == r["commands"]
    names = [n for n in r["commands"] if n != "Separator"]
    # 15 model (Track among them), file, check (status, interference), simulation, study and
    # FEM loads commands,
    # one per hinge and force type, Contact, Coupler
    assert len(names) == len(set(names)) == \
        15 + len(r["hinge_types"]) + len(r["force_types"]) + 2
    assert set(names) <= set(r["registered"])
    hinges = r["toolbars"]["Multibody hinges"]
    assert hinges == [f"MultibodyWB_Hinge{t.capitalize()}" for t in r["hinge_types"]]
    forces = r["toolbars"]["Multibody forces"]
    assert len(forces) == len(r["force_types"]) + 2
    assert forces[-2:] == ["MultibodyWB_Contact", "MultibodyWB_Coupler"]
    for name, res in r["resources"].items():
        assert res["menu_text"] and len(res["tool_tip"]) > 30, name
        assert res["icon_file"] and res["icon_loads"], (name, res["icon"])
    icons = [r["resources"][n]["icon"] for n in hinges]
    assert len(set(icons)) == len(icons), "each hinge type has its own icon"


@pytest.mark.gui
def test_commands_are_enabled_by_what_is_selected(commands_run):
    states = commands_run["states"]
    assert states["nothing"]["MultibodyWB_Mechanism"] and states["nothing"]["MultibodyWB_Import"]
    assert not any(on for name, on in states["nothing"].items()
                   if name not in ("MultibodyWB_Mechanism", "MultibodyWB_Import"))
    assert states["solid"]["MultibodyWB_Body"] and states["solid"]["MultibodyWB_Ground"]
    assert not states["solid"]["MultibodyWB_Marker"]
    assert not states["solid"]["MultibodyWB_HingeRevolute"]
    on_body = states["face_on_body"]
    assert on_body["MultibodyWB_Marker"] and on_body["MultibodyWB_PointForce"]
    assert not on_body["MultibodyWB_Body"] and not on_body["MultibodyWB_HingeRevolute"]
    assert not on_body["MultibodyWB_SpringDamper"]
    # a mechanism without a stored run: Simulate, not Play or Plot
    assert on_body["MultibodyWB_Simulate"]
    assert not on_body["MultibodyWB_Play"] and not on_body["MultibodyWB_Plot"]
    assert not on_body["MultibodyWB_FemLoads"]
    two = states["faces_on_two_bodies"]
    assert all(on for name, on in two.items() if name.startswith("MultibodyWB_Hinge"))
    assert two["MultibodyWB_SpringDamper"] and not two["MultibodyWB_PointForce"]
    assert two["MultibodyWB_Contact"] and not on_body["MultibodyWB_Contact"]
    assert not two["MultibodyWB_Coupler"] and not on_body["MultibodyWB_Coupler"]


@pytest.mark.gui
def test_body_command_makes_the_body_in_one_undo_step(commands_run):
    step = commands_run["steps"]["body"]
    assert step["active"]
    assert step["made"] == {"Body": "Multibody::Body", "Mechanism": "Multibody::Mechanism",
                            "Simulation": "Multibody::Simulation"}
    assert step["after_undo"] == []
    assert step["after_redo"] == sorted(step["made"])
    assert step["undo_names"] == ["Body from solids"]
    assert commands_run["body_solids"] == ["Arm"]


@pytest.mark.gui
def test_every_command_makes_its_objects_in_one_undo_step(commands_run):
    steps = commands_run["steps"]
    expected = {
        "ground": ["Multibody::Body"],
        "marker": ["Multibody::Marker", "Multibody::Marker"],
        "hinge_from_faces": ["Multibody::Hinge", "Multibody::Marker", "Multibody::Marker"],
        "spring_from_markers": ["Multibody::Force"],
        "force_on_face": ["Multibody::Force", "Multibody::Marker"],
        "mechanism": ["Multibody::Mechanism", "Multibody::Simulation"],
    }
    for name, types in expected.items():
        step = steps[name]
        assert step["active"], name
        assert sorted(step["made"].values()) == types, (name, step)
        assert step["after_undo"] == [], name
        assert step["after_redo"] == sorted(step["made"]), name
    assert commands_run["ground"] == "Ground"
    hinge = commands_run["hinge"]
    # the ground face was picked first: the ground is still the output
    assert hinge == {"type": "revolute", "input_body": "Body", "output_body": "Ground",
                     "icon": hinge["icon"]}
    assert hinge["icon"].endswith("HingeRevolute.svg")
    assert commands_run["force"] == {"type": "point_force", "frame": "marker",
                                     "direction": [0.0, 0.0, -1.0]}


@pytest.mark.gui
def test_commands_are_recorded_as_macro_lines(commands_run):
    console = commands_run["console"]
    for line in (
            ">>> import MultibodyWB.document.factory",
            ">>> mechanism = MultibodyWB.document.factory.make_mechanism(FreeCAD.ActiveDocument)",
            ">>> MultibodyWB.document.factory.make_body(FreeCAD.ActiveDocument, mechanism, "
            "[FreeCAD.ActiveDocument.getObject('Arm')])",
            ">>> MultibodyWB.document.factory.make_body(FreeCAD.ActiveDocument, "
            "FreeCAD.ActiveDocument.getObject('Mechanism'), "
            "[FreeCAD.ActiveDocument.getObject('Base')], ground=True, name='Ground')",
            ">>> input_marker = MultibodyWB.document.factory.make_marker(FreeCAD.ActiveDocument, "
            "FreeCAD.ActiveDocument.getObject('Body'), "
            "(FreeCAD.ActiveDocument.getObject('Arm'), 'Face1'))",
            ">>> MultibodyWB.document.factory.make_hinge(FreeCAD.ActiveDocument, "
            "FreeCAD.ActiveDocument.getObject('Mechanism'), 'revolute', input_marker, "
            "output_marker)",
            ">>> MultibodyWB.objects.export.write(FreeCAD.ActiveDocument.getObject('Mechanism'), "):
        assert line in console, f"{line!r} not in the Python console:\n{console[-3000:]}"
    assert "MultibodyWB.document.factory.make_force(" in console
    assert "MultibodyWB.document.import_model.import_file(FreeCAD.ActiveDocument, " in console


@pytest.mark.gui
def test_export_import_and_topology_figure(commands_run):
    r = commands_run
    assert r["exported"]
    # objects made by the commands are labelled from what they join (the model's names)
    assert r["exported_model"] == {
        "bodies": ["Arm body"], "hinges": [["Arm \u2013 Ground revolute", "revolute"]],
        "forces": [["Arm \u2013 Ground spring-damper", "spring_damper"],
                   ["Arm force", "point_force"]]}
    figure = r["figure"]
    assert figure and figure["visible"] and figure["width"] > 100 and figure["height"] > 50
    assert figure["title"] == "Multibody: Topology of 'Mechanism'"
    assert sorted(set(r["imported"])) == ["Multibody::Body", "Multibody::Force",
                                          "Multibody::Hinge", "Multibody::Marker",
                                          "Multibody::Mechanism", "Multibody::Simulation"]
    assert r["imported"].count("Multibody::Body") == 2       # ground and the arm
    assert r["imported_after_undo"] == []


@pytest.mark.gui
def test_commands_report_nothing_unexpected(commands_run):
    # while the model is built the mechanism's check reports what is still missing (no ground,
    # a body connected to nothing): that is expected; nothing else is
    unexpected = [p for p in commands_run["_problems"] if not MODEL_REPORT.match(p)]
    assert unexpected == [], "\n\n".join(unexpected)
    assert commands_run["dialogs"] == []


# --- the crank-slider in the 3D view --------------------------------------------------------------

@pytest.mark.gui
def test_crank_slider_shows_triads_hinge_symbols_and_the_gas_force(crank_run):
    r = crank_run
    _no_exception(r)
    assert r["_problems"] == [], "\n\n".join(r["_problems"])
    assert r["dialogs"] == []
    size = r["settings"]["size"]
    assert 15.0 < size < 60.0, size           # automatic: a tenth of the bodies' diagonal
    objects = r["objects"]
    kinds = {"Multibody::Marker": "ViewProviderMarker", "Multibody::Hinge": "ViewProviderHinge",
             "Multibody::Force": "ViewProviderForce", "Multibody::Body": "ViewProviderBody",
             "Multibody::Mechanism": "ViewProviderMechanism",
             "Multibody::Simulation": "ViewProviderSimulation"}
    for name, obj in objects.items():
        assert obj["view_provider"] == kinds[obj["type"]], name
        assert obj["visible"] and obj["problem"] == "", name
        if obj["type"] in ("Multibody::Marker", "Multibody::Hinge", "Multibody::Force"):
            assert obj["box"] is not None, f"{name} draws nothing"
    for name, placement in r["marker_placements"].items():
        box = objects[name]["box"]
        assert size <= max(box["size"]) <= 1.6 * size, (name, box)      # the axes' length
        assert all(abs(c - p) <= size for c, p in zip(box["center"], placement)), name
    for name, frame in r["hinge_frames"].items():
        box = objects[name]["box"]
        assert 0.2 * size < max(box["size"]) < 2.0 * size, (name, box)
        assert all(abs(c - p) <= size for c, p in zip(box["center"], frame)), name
    assert objects["GasForce"]["box"]["size"][2] > 1.5 * size           # the arrow, along z
    icons = {name: obj["icon"] for name, obj in objects.items()}
    assert icons["MainBearing"] == "HingeRevolute.svg"
    assert icons["BigEnd"] == "HingeSpherical.svg"
    assert icons["WristPin"] == "HingeUniversal.svg"
    assert icons["Cylinder"] == "HingePrismatic.svg"
    assert icons["GasForce"] == "ForcePointForce.svg"
    assert icons["Ground"] == "Ground.svg" and icons["Crank"] == "Body.svg"
    # the screenshot (1280 x 960, isometric, fit all) shows the symbols' colours
    colors = r["screenshot"]["colors"]
    for name, count in colors.items():
        assert count >= 50, (name, colors)
    assert Path(r["screenshot"]["path"]).stat().st_size > 20_000


def _subtree(lines, name):
    """The lines below the tree item ``name``, indented relative to it (FreeCAD 0.20's tree has an
    "Application" root item, 1.0's has not)."""
    for i, line in enumerate(lines):
        if line.strip() == name:
            depth = len(line) - len(line.lstrip())
            below = []
            for child in lines[i + 1:]:
                if len(child) - len(child.lstrip()) <= depth:
                    break
                below.append(child[depth + 2:])
            return below
    raise AssertionError(f"{name} is not in the tree:\n" + "\n".join(lines))


@pytest.mark.gui
def test_crank_slider_tree_nests_markers_under_bodies(crank_run):
    below = _subtree(crank_run["tree"], "CrankSlider")
    assert below == [
        "Simulation",
        "Ground", "  FrameMain", "  CylinderAxis",
        "Crank", "  CrankMain", "  CrankPinMarker",
        "Rod", "  RodBigEnd", "  RodSmallEnd",
        "Piston", "  PistonPin", "  PistonSlide", "  PistonCrown",
        "MainBearing", "BigEnd", "WristPin", "Cylinder", "GasForce"]
    document = _subtree(crank_run["tree"], "CrankSliderGui")
    assert "CrankMain" not in document          # only under its body


@pytest.mark.gui
def test_view_settings_and_problem_marking(crank_run):
    r = crank_run
    assert r["view_properties"] == {"GlyphSize": "0.0 mm", "ShowTriads": "True",
                                    "ShowGlyphs": "True", "ShowLabels": "False",
                                    "GlyphsOnTop": "True"}
    switches = r["switches"]
    assert switches["triad_children_off"] == 0 and switches["triad_children_on"] == 1
    assert 50.0 <= max(switches["triad_box_at_50mm"]["size"]) <= 80.0
    marked, cleared = r["problem_marked"], r["problem_cleared"]
    assert marked["icon"].endswith("HingeRevolute-problem.png") and Path(marked["icon"]).is_file()
    assert marked["colors"] == [[1.0, 0.0, 0.0]]
    assert cleared["icon"].endswith("HingeRevolute.svg")
    assert cleared["colors"] == [[1.0, 0.67, 0.0]]


@pytest.mark.gui
def test_save_close_and_reopen_keep_the_objects_and_their_view_providers(crank_run):
    r = crank_run
    assert r["reopened"] == r["objects"]
    assert r["reopened_touched"] == []
    assert r["reopened_labels"] is True
    assert _subtree(r["reopened_tree"], "crank_slider_gui") == _subtree(r["tree"], "CrankSliderGui")
    for name, count in r["reopened_screenshot"]["colors"].items():
        assert count >= 50, (name, r["reopened_screenshot"]["colors"])
    # a file saved when every object had the base view provider class opens the same way
    assert r["legacy_file_classes"] == ["ViewProvider"]
    assert r["legacy"] == r["objects"]


# --- refusals -------------------------------------------------------------------------------------

@pytest.mark.gui
def test_export_topology_and_import_refuse_a_model_with_problems(refusals_run):
    r = refusals_run
    _no_exception(r)
    assert set(r["mechanism_problems"]) == {"Mechanism", "HalfHinge"}
    assert not r["export_asked_for_a_file"] and not r["export_written"]
    assert not r["figure_shown"]
    assert r["import_added"] == [] and r["import_undo_steps"] == []
    assert not r["hinge_on_one_body_active"]
    assert r["failed_script_ran"] is False
    assert r["failed_script_left"] == [] and r["failed_script_undo_steps"] == 0
    export, topology, imported, failed = r["dialogs"]
    assert failed == "Multibody: Half-way | ValueError: stopped on purpose"
    for dialog in (export, topology):
        assert "has 2 problems; fix them first" in dialog
        assert "Mechanism 'Mechanism', property Ground: the model has no ground" in dialog
        assert "Hinge 'HalfHinge', property OutputMarker: is missing" in dialog
    assert export.startswith("Multibody: Export neutral XML")
    assert topology.startswith("Multibody: Topology figure")
    assert "has 7 problems; nothing was imported" in imported
    assert "Hinge 'J1' (line 6), field Type: 'revolut' is not a hinge type" in imported
    # the report view lists the same problems; nothing else went wrong
    report = r["report_view"]
    assert "MultibodyWB: Export neutral XML...: Mechanism 'Mechanism' has 2 problems" in report
    assert "Hinge 'HalfHinge', property OutputMarker: is missing" in report
    assert "RigidBody 'Lonely' (line 4), field Mass: -1.0 kg; the mass must be positive" in report
    said = "\n".join(r["dialogs"])
    titles = [d.split(" | ")[0].replace("Multibody: ", "", 1) for d in r["dialogs"]]
    for problem in r["_problems"]:
        # a log record ("Err: MultibodyWB: ...") or a report view line ("12:00:00  MultibodyWB: ")
        text = re.sub(r"^(\d\d:\d\d:\d\d\s+)?((Err|Wrn): )?(MultibodyWB: )?", "", problem.strip())
        for title in titles:
            if text.startswith(title + ": "):
                text = text[len(title) + 2:]
        assert "Traceback" not in problem and (MODEL_REPORT.match(problem) or text in said), \
            problem


# --- every hinge and force type -------------------------------------------------------------------

@pytest.mark.gui
def test_every_hinge_and_force_type_is_drawn(gallery_run):
    r = gallery_run
    _no_exception(r)
    assert r["_problems"] == [], "\n\n".join(r["_problems"])
    objects = r["objects"]
    size = 22.0
    for name in r["hinge_types"]:
        obj = objects[name.capitalize()]
        assert obj["icon"] == f"Hinge{name.capitalize()}.svg"
        assert obj["box"] is not None, name
        assert 0.2 * size < max(obj["box"]["size"]) < 2.0 * size, (name, obj["box"])
    for name in r["force_types"]:
        obj = objects[name]
        assert obj["box"] is not None, name
        assert max(obj["box"]["size"]) > 0.5 * size, (name, obj["box"])
