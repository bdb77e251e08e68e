"""The guide "Adding an element family" in docs/design.md names every file a family touches.

The couplers are the guide's worked example, so the couplers are the measure: every file of the
workbench that mentions them (the regex :data:`MENTION`: "coupler" in any case, or the compiled
loop closure's coupler arrays ``cp_u`` and ``cp_ab``, which carry the couplers through
``methods/mstmm/adaptive.py`` without the word) must be named in that section, and every path the
section names must exist. Searched: the Python files under ``MultibodyWB/``, its schema and icons,
``Init.py`` and ``InitGui.py``: the code a new family changes. Not searched: ``tests/``,
``benchmarks/`` and ``docs/``, whose files mention couplers to test, measure or describe them
(the guide names the ones a family adds to, but a fuzz model or a GUI check that happens to
contain a coupler is no touch point). :data:`OTHER_SENSE` lists the files that say "coupler" for
the four-bar's middle link, with why. Pure Python: no FreeCAD, no solver import.
"""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DESIGN = ROOT / "docs" / "design.md"
TITLE = "## Adding an element family"

#: What makes a file a coupler touch point.
MENTION = re.compile(r"coupler|\bcp_(?:ab|u)\b", re.IGNORECASE)

#: Files that say "coupler" in the other sense (the link between crank and rocker): no touch
#: points of the coupler family.
OTHER_SENSE = {
    "MultibodyWB/examples/four_bar.py": "the four-bar's coupler link",
    "MultibodyWB/examples/andrews_squeezer.py": "its lower and upper coupler links",
    "MultibodyWB/examples/flyball_governor.py": "the governor's coupler rods",
    "MultibodyWB/objects/mechanism.py": "a loop in words, through 'Coupler' (a link's label)",
    "MultibodyWB/solver/analysis/assembly.py": "a coupler link too short to close its loop",
}

#: A path the guide names: backquoted, from the repository's root, with a folder (`cli.py` alone
#: is the package table's name of a module) or one of the top-level files.
PATH = re.compile(r"`((?:[\w.-]+/)+[\w.-]+\.(?:py|xsd|svg|md)|README\.md|Init(?:Gui)?\.py)`")


def searched_files(root: Path):
    """The files a family's code lives in, relative to ``root``, as POSIX strings."""
    package = root / "MultibodyWB"
    files = list(package.rglob("*.py"))
    files += list((package / "resources").glob("*.xsd"))
    files += list((package / "resources" / "icons").glob("*.svg"))
    files += [root / name for name in ("Init.py", "InitGui.py") if (root / name).exists()]
    return sorted({f.relative_to(root).as_posix() for f in files
                   if "__pycache__" not in f.parts})


def touch_points(root: Path):
    """The searched files that mention couplers (in their text or their name), the other
    sense left out."""
    found = []
    for rel in searched_files(root):
        text = (root / rel).read_text(encoding="utf-8", errors="replace")
        if (MENTION.search(text) or MENTION.search(Path(rel).name)) and rel not in OTHER_SENSE:
            found.append(rel)
    return found


def guide_section(text: str) -> str:
    """The text of the section :data:`TITLE`, up to the next section of its level."""
    start = text.index(TITLE + "\n")
    end = text.find("\n## ", start + len(TITLE))
    return text[start:] if end < 0 else text[start:end]


def named_paths(section: str):
    return set(PATH.findall(section))


def unnamed(root: Path, section: str):
    """Touch points under ``root`` that ``section`` does not name."""
    named = named_paths(section)
    return [rel for rel in touch_points(root) if rel not in named]


def _section():
    return guide_section(DESIGN.read_text(encoding="utf-8"))


def test_every_coupler_touch_point_is_named_in_the_guide():
    found = touch_points(ROOT)
    assert len(found) > 30                     # the search works: the couplers touch many files
    missing = unnamed(ROOT, _section())
    assert missing == [], f"not named in '{TITLE}' of docs/design.md: {missing}"


def test_every_path_the_guide_names_exists():
    missing = sorted(p for p in named_paths(_section()) if not (ROOT / p).exists())
    assert missing == [], f"'{TITLE}' names paths that do not exist: {missing}"


def test_the_files_of_the_other_sense_exist_and_mention_a_coupler():
    for rel in OTHER_SENSE:
        assert MENTION.search((ROOT / rel).read_text(encoding="utf-8")), rel


def test_a_new_file_that_mentions_couplers_and_is_not_named_is_found(tmp_path):
    """The check bites: a file of a copy of the tree that mentions a coupler, not in the guide."""
    new = tmp_path / "MultibodyWB" / "solver" / "elements" / "new_family.py"
    new.parent.mkdir(parents=True)
    new.write_text('"""Like a coupler."""\n', encoding="utf-8")
    (tmp_path / "MultibodyWB" / "solver" / "elements" / "quiet.py").write_text("x = 1\n")
    section = _section()
    assert unnamed(tmp_path, section) == ["MultibodyWB/solver/elements/new_family.py"]
    named = section + "\n- `MultibodyWB/solver/elements/new_family.py`: its module.\n"
    assert unnamed(tmp_path, named) == []
