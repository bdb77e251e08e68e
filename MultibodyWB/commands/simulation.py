"""Commands of the designer's loop: Simulate, Play, Plot.

- Simulate opens the Simulate task panel (:mod:`MultibodyWB.gui.simulate_panel`) of the selected
  mechanism (or the document's first): settings, Run in the background with progress and Cancel,
  the solver's messages, the stored runs, the topology figure and the transfer equation.
- Play opens the player (:mod:`MultibodyWB.gui.player`) on the selected stored run (a Result
  object), else the mechanism's latest.
- Plot shows the plot dock (:mod:`MultibodyWB.gui.plot_panel`) with the selected runs (else the
  latest) overlaid.
"""

from ..objects.base import type_of
from ..objects.mechanism import mechanism_of
from .base import ACTIONS, Command, message
from .selection import RULES, mechanism_for

RESULT = "Multibody::Result"


def _runs(selection):
    """(mechanism, [selected Result objects]) of a selection."""
    chosen = [o for o in selection.objects if type_of(o) == RESULT]
    if chosen:
        return mechanism_of(chosen[0]) or mechanism_for(selection), chosen
    return mechanism_for(selection), []


def _has_results(selection, command):
    from ..document import runs
    mechanism, chosen = _runs(selection)
    return bool(chosen) or (mechanism is not None and bool(runs.result_objects(mechanism)))


RULES["results"] = _has_results


def _simulate(command, selection):
    from ..gui import simulate_panel
    mechanism = mechanism_for(selection)
    return simulate_panel.open_panel(mechanism)


def _play(command, selection):
    from ..gui import player
    mechanism, chosen = _runs(selection)
    try:
        return player.open_player(mechanism, chosen[-1] if chosen else None)
    except Exception as exc:  # results that cannot be read or matched to the solids
        message(command.MENU_TEXT, f"{type(exc).__name__}: {exc}")
        return None


def _plot(command, selection):
    from ..document import runs
    from ..gui import plot_panel
    mechanism, chosen = _runs(selection)
    chosen = chosen or runs.result_objects(mechanism)[-1:]
    try:
        pairs = [(o.Label, runs.load(o)) for o in chosen]
    except Exception as exc:  # a result file that cannot be read
        message(command.MENU_TEXT, f"{type(exc).__name__}: {exc}")
        return None
    return plot_panel.show_plot_dock(pairs)


ACTIONS.update({"simulate": _simulate, "play": _play, "plot": _plot})


class Simulate(Command):
    NAME = "Simulate"
    ICON = "Simulate.svg"
    MENU_TEXT = "Simulate..."
    TOOL_TIP = ("Simulate the mechanism: settings, Run in the background with a progress bar "
                "and Cancel, the solver's messages; the results are stored in the document")
    NEEDS = "mechanism"
    ACTION = "simulate"


class Play(Command):
    NAME = "Play"
    ICON = "Play.svg"
    MENU_TEXT = "Play results..."
    TOOL_TIP = ("Play a stored run in the 3D view: play, pause, step, scrub, speed, loop, "
                "force arrows, traces, GIF/MP4 export (the selected run, else the latest)")
    NEEDS = "results"
    ACTION = "play"


class Plot(Command):
    NAME = "Plot"
    ICON = "Plot.svg"
    MENU_TEXT = "Plot results..."
    TOOL_TIP = ("Plot positions, velocities, accelerations, angles, reaction forces and "
                "energies of stored runs, overlaid; table of values; PNG and CSV export")
    NEEDS = "results"
    ACTION = "plot"


COMMANDS = (Simulate, Play, Plot)
