"""The add-on as FreeCAD sees it: manifest, entry points, the FreeCAD-free solver rule, start-up.

- package.xml is a valid Addon Manager manifest (read as XML, and by FreeCAD's own ``FreeCAD.Metadata``);
- ``MultibodyWB.solver`` never imports FreeCAD or Qt (checked by importing it in a clean interpreter
  and by scanning its sources);
- FreeCAD's console application loads the add-on (Init.py) without errors;
- the FreeCAD GUI, under Xvfb, activates the Multibody workbench without errors (screenshot kept).
"""

import ast
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import freecad_env
from freecad_env import ADDON_NAME, FORBIDDEN_GUI_MODULES, REPO_ROOT

PACKAGE_XML = REPO_ROOT / "package.xml"
NS = {"p": "https://wiki.freecad.org/Package_Metadata"}
WORKBENCH_CLASS = "MultibodyWorkbench"
ICON = "MultibodyWB/resources/icons/MultibodyWB.svg"
SOLVER_DIR = REPO_ROOT / "MultibodyWB" / "solver"
GUI_DIR = Path(__file__).resolve().parent / "gui"


def _package_version():
    text = (REPO_ROOT / "MultibodyWB" / "__init__.py").read_text(encoding="utf-8")
    return re.search(r'^__version__\s*=\s*"([^"]+)"', text, re.MULTILINE).group(1)


# --- manifest and entry points (no FreeCAD needed) ------------------------------------------------

def test_package_xml_is_a_valid_addon_manifest():
    root = ET.parse(PACKAGE_XML).getroot()
    assert root.tag == "{%s}package" % NS["p"]
    assert root.get("format") == "1"

    def text(path):
        element = root.find(path, NS)
        assert element is not None, f"package.xml has no <{path}>"
        return (element.text or "").strip()

    assert text("p:name") == "MultibodyWB"
    assert len(text("p:description")) > 20
    assert text("p:version") == "0.1.0" == _package_version()
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", text("p:date"))
    maintainer = root.find("p:maintainer", NS)
    assert maintainer.text.strip() == "MultibodyWB developers"
    assert maintainer.get("email") == "dev@multibodywb.invalid"
    license_ = root.find("p:license", NS)
    assert license_.text.strip() == "LGPL-2.1-or-later"
    assert license_.get("file") == "LICENSE"
    urls = {url.get("type"): url.text.strip() for url in root.findall("p:url", NS)}
    assert urls.get("repository", "").startswith("https://")
    assert text("p:icon") == ICON and (REPO_ROOT / ICON).is_file()

    workbenches = root.findall("p:content/p:workbench", NS)
    assert len(workbenches) == 1
    workbench = workbenches[0]
    assert workbench.find("p:classname", NS).text.strip() == WORKBENCH_CLASS
    subdirectory = REPO_ROOT / workbench.find("p:subdirectory", NS).text.strip()
    assert subdirectory.resolve() == REPO_ROOT
    assert workbench.find("p:freecadmin", NS).text.strip() == "0.20"
    # FreeCAD 0.20 takes the workbench's own <icon> (relative to <subdirectory>), not the package's.
    assert (subdirectory / workbench.find("p:icon", NS).text.strip()).is_file()
    assert (subdirectory / "Init.py").is_file() and (subdirectory / "InitGui.py").is_file()


def test_initgui_defines_and_registers_the_workbench_class():
    tree = ast.parse((REPO_ROOT / "InitGui.py").read_text(encoding="utf-8"))
    classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
    assert WORKBENCH_CLASS in classes
    methods = {node.name for node in classes[WORKBENCH_CLASS].body if isinstance(node, ast.FunctionDef)}
    assert {"Initialize", "Activated", "Deactivated", "GetClassName"} <= methods
    registrations = [node for node in ast.walk(tree) if isinstance(node, ast.Call)
                     and getattr(node.func, "attr", None) == "addWorkbench"]
    assert len(registrations) == 1
    assert ast.unparse(registrations[0].args[0]) == f"{WORKBENCH_CLASS}()"


def test_init_py_has_no_gui_imports():
    tree = ast.parse((REPO_ROOT / "Init.py").read_text(encoding="utf-8"))
    imported = _imported_top_level_modules(tree)
    assert not imported & {"FreeCADGui", "PySide", "PySide2", "PySide6", "pivy"}, imported


def test_workbench_icon_is_a_64px_svg():
    from MultibodyWB import resources
    assert Path(resources.WORKBENCH_ICON) == REPO_ROOT / ICON
    root = ET.parse(resources.WORKBENCH_ICON).getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert root.get("viewBox").split() == ["0", "0", "64", "64"]
    assert root.find("{http://www.w3.org/2000/svg}title").text == "MultibodyWB"


# --- the solver never imports FreeCAD or Qt -------------------------------------------------------

def _imported_top_level_modules(tree):
    """Top-level names of the modules a parsed source imports, anywhere in it (also in functions)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
        elif (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)
              and ast.unparse(node.func) in ("__import__", "importlib.import_module", "import_module")):
            names.add(node.args[0].value.split(".")[0])
    return names


def _freecad_free_sources():
    """The solver's sources and the modules importing it pulls in (the package ``__init__``)."""
    return sorted(SOLVER_DIR.rglob("*.py")) + [REPO_ROOT / "MultibodyWB" / "__init__.py"]


def test_solver_sources_import_no_freecad_or_qt():
    offenders = {}
    for path in _freecad_free_sources():
        imported = _imported_top_level_modules(ast.parse(path.read_text(encoding="utf-8"), str(path)))
        bad = sorted(imported & set(FORBIDDEN_GUI_MODULES + ("FreeCADGui", "freecad", "Draft")))
        if bad:
            offenders[str(path.relative_to(REPO_ROOT))] = bad
    assert not offenders, f"FreeCAD/Qt imports in the FreeCAD-free solver: {offenders}"


_IMPORT_ALL_SOLVER = textwrap.dedent("""
    import importlib, json, pkgutil, sys
    sys.path.insert(0, {repo!r})
    import MultibodyWB.solver as solver
    failed = {{}}
    names = [solver.__name__]
    for info in pkgutil.walk_packages(solver.__path__, solver.__name__ + ".",
                                      onerror=lambda name: failed.setdefault(name, "walk failed")):
        if info.name.rsplit(".", 1)[-1] == "__main__":
            continue  # the command-line entry point runs when imported
        try:
            importlib.import_module(info.name)
            names.append(info.name)
        except ModuleNotFoundError as exc:
            failed[info.name] = {{"missing": exc.name, "error": repr(exc)}}
        except Exception as exc:
            failed[info.name] = {{"missing": None, "error": repr(exc)}}
    import os
    freecad_dirs = [entry for entry in sys.path if os.path.isfile(os.path.join(entry, "FreeCAD.so"))]
    print(json.dumps({{"imported": names, "failed": failed, "modules": sorted(sys.modules),
                      "freecad_dirs": freecad_dirs}}))
""")


def test_solver_imports_without_freecad_or_qt_in_a_clean_interpreter():
    """Import every solver module in a fresh interpreter without FreeCAD on sys.path."""
    code = _IMPORT_ALL_SOLVER.format(repo=str(REPO_ROOT))
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("PYTHON", "FREECAD"))}
    proc = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True,
                          env=env, cwd=str(REPO_ROOT), timeout=300)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["freecad_dirs"] == []
    forbidden = set(FORBIDDEN_GUI_MODULES + ("FreeCADGui",))
    loaded = {name.split(".")[0] for name in report["modules"]}
    assert not loaded & forbidden, sorted(loaded & forbidden)
    # A module that fails because FreeCAD/Qt is missing breaks the rule; any other error is a bug.
    broken = {name: failure for name, failure in report["failed"].items()
              if failure["missing"] is None or failure["missing"].split(".")[0] in forbidden
              or failure["missing"].startswith("MultibodyWB")}
    assert not broken, broken
    if report["failed"]:
        missing = sorted({failure["missing"] for failure in report["failed"].values()})
        pytest.skip(f"checked {len(report['imported'])} solver modules; could not import "
                    f"{sorted(report['failed'])}: third-party packages missing from "
                    f"{sys.executable}: {missing}")
    assert len(report["imported"]) >= 2


# --- FreeCAD's own view of the manifest -----------------------------------------------------------

@pytest.mark.freecad
def test_freecad_metadata_reads_package_xml(freecad):
    assert hasattr(freecad, "Metadata"), "FreeCAD.Metadata needs FreeCAD 0.20 or later"
    metadata = freecad.Metadata(str(PACKAGE_XML))
    assert metadata.Name == "MultibodyWB"
    assert metadata.Version == "0.1.0"
    assert metadata.Maintainer == [{"name": "MultibodyWB developers",
                                    "email": "dev@multibodywb.invalid"}]
    assert metadata.License[0]["name"] == "LGPL-2.1-or-later"
    assert metadata.Icon == ICON and (REPO_ROOT / metadata.Icon).is_file()
    assert metadata.supportsCurrentFreeCAD()
    workbenches = metadata.Content["workbench"]
    assert [workbench.Classname for workbench in workbenches] == [WORKBENCH_CLASS]
    workbench = workbenches[0]
    assert workbench.Subdirectory == "./"
    assert workbench.FreeCADMin.startswith("0.20")
    assert workbench.supportsCurrentFreeCAD()
    assert (REPO_ROOT / workbench.Subdirectory / workbench.Icon).is_file()


# --- FreeCAD console application ------------------------------------------------------------------

_FREECADCMD_CHECK = textwrap.dedent("""
    import json, os, sys
    import FreeCAD
    result = {"user_app_data": FreeCAD.getUserAppDataDir(), "gui_up": int(FreeCAD.GuiUp),
              "mod_dirs": list(FreeCAD.__ModDirs__)}
    try:
        import MultibodyWB, MultibodyWB.resources
        result["package_file"] = MultibodyWB.__file__
        result["version"] = MultibodyWB.__version__
        result["icon"] = MultibodyWB.resources.WORKBENCH_ICON
    except Exception as exc:
        result["exception"] = repr(exc)
    with open(os.environ["MBWB_RESULT_FILE"], "w") as stream:
        json.dump(result, stream)
""")


def _write_script(directory, name, text):
    path = Path(directory) / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.freecadcmd
def test_freecadcmd_loads_the_addon(tmp_path):
    script = _write_script(tmp_path, "mbwb_freecadcmd_check.py", _FREECADCMD_CHECK)
    run = freecad_env.run_freecadcmd(script, timeout=180, work_dir=tmp_path / "run")
    assert not run.timed_out and run.returncode == 0, run.describe()
    assert run.result and "exception" not in run.result, run.describe()
    addon = run.user_home / "Mod" / ADDON_NAME
    # FreeCAD uses the throw-away user directory, found the add-on there and ran its Init.py.
    assert Path(run.result["user_app_data"]) == run.user_home
    assert str(addon) in run.result["mod_dirs"]
    assert Path(run.result["package_file"]).parent.resolve() == REPO_ROOT / "MultibodyWB"
    assert run.result["package_file"].startswith(str(addon))
    assert run.result["version"] == _package_version()
    assert run.result["gui_up"] == 0
    assert "MultibodyWB: Init.py done" in run.log, run.describe()
    assert re.search(re.escape(str(addon)) + r"(/\./?)?\.\.\. done", run.log), run.describe()
    assert run.problems == [], run.describe()


@pytest.mark.freecadcmd
def test_freecadcmd_check_reports_a_broken_addon(tmp_path):
    """The harness is not blind: an Init.py that raises shows up as a problem."""
    broken = tmp_path / "broken"
    broken.mkdir()
    for name in ("package.xml", "InitGui.py"):
        shutil.copy(REPO_ROOT / name, broken / name)
    (broken / "MultibodyWB").symlink_to(REPO_ROOT / "MultibodyWB", target_is_directory=True)
    (broken / "Init.py").write_text("raise RuntimeError('MultibodyWB broken on purpose')\n")
    script = _write_script(tmp_path, "mbwb_freecadcmd_check.py", _FREECADCMD_CHECK)
    run = freecad_env.run_freecadcmd(script, timeout=180, work_dir=tmp_path / "run", addon_dir=broken)
    assert any("broken on purpose" in problem for problem in run.problems), run.describe()


def test_find_problems_flags_addon_errors_and_tracebacks():
    log = ("\ufeffMsg: FreeCAD 0.20.2\nLog: Init:      Initializing /x/Mod/MultibodyWB/./... done\n"
           "Err: During initialization the error \"boom\" occurred in /x/Mod/MultibodyWB/InitGui.py\n"
           "Log: Traceback (most recent call last):\n  File \"<string>\", line 1\nNameError: x\n"
           "Wrn: Some other module is old\n")
    problems = freecad_env.find_problems(log, markers=["MultibodyWB"])
    assert len(problems) == 2
    assert problems[0].startswith("Err: During initialization")
    assert "NameError" in problems[1]
    assert freecad_env.find_problems(log.split("Err:")[0], markers=["MultibodyWB"]) == []


# --- FreeCAD GUI under Xvfb -----------------------------------------------------------------------

@pytest.mark.gui
def test_gui_activates_the_multibody_workbench(tmp_path):
    result = freecad_env.run_freecad_gui(GUI_DIR / "check_workbench.py", timeout=300,
                                         work_dir=tmp_path)
    run = result["_run"]
    assert "exception" not in result, result["exception"]
    assert result["dialogs"] == [], result["dialogs"]
    assert result["_problems"] == [], "\n\n".join(result["_problems"])
    assert result["active_workbench_name"] == WORKBENCH_CLASS, run.describe()
    assert result["menu_text"] == "Multibody"
    assert "Multibody" in result["menu_bar"], result["menu_bar"]
    assert result["icon_loads"], result["icon"]
    assert result["icon"].endswith(ICON)
    assert result["unregistered_commands"] == []

    shot = result["screenshot"]
    assert shot["saved"] and Path(shot["path"]).is_file()
    assert shot["width"] >= 800 and shot["height"] >= 600
    assert shot["distinct_colors"] >= 16, "screenshot looks blank"
    assert Path(shot["path"]).stat().st_size > 20_000
    artifacts = os.environ.get("MBWB_ARTIFACTS_DIR")
    if artifacts:
        os.makedirs(artifacts, exist_ok=True)
        shutil.copy(shot["path"], os.path.join(artifacts, "workbench.png"))


@pytest.mark.gui
def test_gui_check_reports_a_broken_workbench(tmp_path):
    """The GUI harness is not blind: an exception in Initialize() is reported, and its modal error
    dialog is closed instead of blocking FreeCAD until the time-out."""
    broken = tmp_path / "broken"
    broken.mkdir()
    for name in ("package.xml", "Init.py"):
        shutil.copy(REPO_ROOT / name, broken / name)
    (broken / "MultibodyWB").symlink_to(REPO_ROOT / "MultibodyWB", target_is_directory=True)
    source = (REPO_ROOT / "InitGui.py").read_text(encoding="utf-8")
    marker = "    def Initialize(self):\n"
    assert marker in source
    (broken / "InitGui.py").write_text(source.replace(
        marker, marker + "        raise RuntimeError('MultibodyWB broken on purpose')\n"))
    result = freecad_env.run_freecad_gui(GUI_DIR / "check_workbench.py", timeout=300,
                                         work_dir=tmp_path / "run", addon_dir=broken)
    assert result["active_workbench_name"] != WORKBENCH_CLASS
    assert any("broken on purpose" in text for text in result["dialogs"]), result["dialogs"]
    assert any("broken on purpose" in text for text in result["_problems"]), result["_problems"]
