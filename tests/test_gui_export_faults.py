"""The FreeCAD export path (the plot dock's Export CSV and PNG buttons) writes complete files or
none (issue 33): SIGKILL at 24 random moments of an export leaves the previous file or the new
one, a full disk says the file and keeps the previous one. Runs tests/gui/check_export_faults.py
in the FreeCAD GUI under Xvfb."""

import pytest

import freecad_env

GUI_DIR = freecad_env.REPO_ROOT / "tests" / "gui"


@pytest.fixture(scope="module")
def faults(tmp_path_factory):
    work = tmp_path_factory.mktemp("check_export_faults")
    return freecad_env.run_freecad_gui(GUI_DIR / "check_export_faults.py", timeout=400,
                                       work_dir=work)


@pytest.mark.gui
def test_export_buttons_write_through_the_dialog(faults):
    assert "exception" not in faults, faults["exception"]
    assert faults["sizes"]["A"] > 500_000 and faults["sizes"]["B"] > 500_000
    assert faults["png_magic"] == "89504e470d0a1a0a"


@pytest.mark.gui
def test_killed_exports_leave_the_old_or_the_new_file(faults):
    assert "exception" not in faults, faults["exception"]
    assert faults["kill_bad"] == []
    assert len(faults["kill_outcomes"]) == 24
    assert set(faults["kill_outcomes"]) == {"old", "new"}, faults["kill_outcomes"]
    assert faults["files_after"] == ["values.csv"] or all(
        not f.startswith(".values.csv.") for f in faults["files_after"]), faults["files_after"]


@pytest.mark.gui
def test_full_disk_export_names_the_file_and_keeps_the_previous(faults):
    assert "exception" not in faults, faults["exception"]
    if not faults["mounted"]:
        pytest.skip("this process cannot mount a tmpfs (CI runs as root and can)")
    assert faults["full_disk_kept"] is True
    assert len(faults["full_disk_warnings"]) == 1
    text = faults["full_disk_warnings"][0]
    assert "small/values.csv" in text and "no space left" in text, text
    assert faults["full_disk_files"] == ["values.csv"]
