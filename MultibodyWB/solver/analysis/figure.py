"""The MSTMM topology figure of a model, drawn with Graphviz.

Symbols (the MSTMM convention, Rui et al.):

* a circle per body with its element number; the body's name small beside it (and as tooltip);
* an arrow per tree hinge, labelled with its number, in the transfer direction: from the hinge's
  tip-side (input) body to its root-side (output) body;
* every connection to the ground ends at its own small boundary node "0";
* a cut hinge: a red dashed arrow from its input part to its output part, labelled "<n> (cut)";
* an elastic closure (a bushing closing a loop, a force element): a grey dashed line with the
  hinge's name;
* island bodies (not connected to the ground): grey dashed circles with their names.

The title gives the model's name, its mobility (DOF), the Grubler-Kutzbach count and the number
of loops. The DOT text is deterministic: same model, same text.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional, Union

import graphviz

from .kinematics import Mobility, mobility as compute_mobility
from ..model.mechanism import MultibodySystem
from ..model.files import write_bytes, write_text
from .topology import BODY, Topology, analyse

FORMATS = ("dot", "gv", "svg", "png", "pdf")

_CUT = {"style": "dashed", "color": "red3", "fontcolor": "red3", "constraint": "false",
        "penwidth": "1.4"}
_ELASTIC = {"style": "dashed", "color": "gray55", "fontcolor": "gray40", "constraint": "false",
            "arrowhead": "none"}


def _plural(n, word):
    return f"{n} {word}{'' if n == 1 else 's'}"


def topology_graph(model: MultibodySystem, topology: Optional[Topology] = None,
                   mobility: Optional[Mobility] = None) -> graphviz.Digraph:
    """The topology figure of ``model`` as a Graphviz digraph.

    Parameters
    ----------
    model : MultibodySystem
    topology : Topology, optional
        ``analyse(model)`` when not given.
    mobility : Mobility, optional
        ``kinematics.mobility(model, topology)`` when not given (for the DOF in the title).

    Returns
    -------
    graphviz.Digraph
        Left to right: tips on the left, the boundary nodes "0" on the right.
    """
    topology = analyse(model) if topology is None else topology
    mob = compute_mobility(model, topology) if mobility is None else mobility
    title = (f"{model.name}\\nDOF {mob.dof} (Gruebler-Kutzbach {topology.dof_gruebler}), "
             f"{_plural(topology.n_loops, 'loop')}")
    if mob.redundant:
        title += f", {_plural(mob.redundant, 'redundant constraint')}"
    if topology.elastic_closures:
        title += f", {_plural(len(topology.elastic_closures), 'elastic closure')}"

    g = graphviz.Digraph(name="topology", comment=f"MSTMM topology figure of {model.name}")
    g.attr(rankdir="LR", label=title, labelloc="t", labeljust="c", fontname="Helvetica",
           fontsize="14", nodesep="0.5", ranksep="0.7", forcelabels="true")
    g.attr("node", fontname="Helvetica")
    g.attr("edge", fontname="Helvetica", fontsize="11", arrowsize="0.8")

    boundaries = 0

    def boundary() -> str:
        nonlocal boundaries
        boundaries += 1
        node = f"g{boundaries}"
        g.node(node, "0", shape="circle", width="0.28", height="0.28", fixedsize="true",
               fontsize="10", color="gray30", tooltip=f"boundary 0 ({topology.ground})")
        return node

    def part(name: str) -> str:
        if name == topology.ground or model.is_ground(name):
            return boundary()
        if name in topology.number:
            return f"b{topology.number[name]}"
        return f"i_{name}"

    for e in topology.elements:
        if e.kind == BODY:
            g.node(f"b{e.id}", str(e.id), shape="circle", width="0.45", height="0.45",
                   fixedsize="true", fontsize="14", xlabel=f"<<font point-size='9'>{_html(e.name)}"
                   "</font>>", tooltip=e.name)
    for name in topology.islands:
        g.node(f"i_{name}", name, shape="circle", style="dashed", color="gray55",
               fontcolor="gray40", fontsize="9", tooltip=f"{name} (not connected to the ground)")

    for e in topology.elements:
        if e.kind == BODY:
            continue
        h = model.hinge(e.name)
        tip = f"{e.name} ({h.type})"
        if e.cut:
            g.edge(part(e.input_part), part(e.output_part), f"{e.id} (cut)",
                   tooltip=f"{tip}, cut", **_CUT)
        else:
            extra = {"style": "bold", "color": "gray30"} if e.elastic else {}
            reversed_note = ", reversed" if e.reversed else ""
            g.edge(part(e.input_part), part(e.output_part), str(e.id),
                   tooltip=f"{tip}{reversed_note}", **extra)
    for name in topology.elastic_closures:
        h = model.hinge(name)
        g.edge(part(h.input.body), part(h.output.body), name,
               tooltip=f"{name} ({h.type}), elastic closure", **_ELASTIC)
    for name in topology.unused_hinges:
        h = model.hinge(name)
        if h.input.body == h.output.body:
            continue
        g.edge(part(h.input.body), part(h.output.body), name, style="dotted", color="gray55",
               fontcolor="gray40", tooltip=f"{name} ({h.type}), not connected to the ground")
    return g


def _html(text: str) -> str:
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;"))


def write_figure(model: MultibodySystem, path: Union[str, Path],
                 topology: Optional[Topology] = None,
                 mobility: Optional[Mobility] = None) -> Path:
    """Write the topology figure to ``path``; the extension picks the format.

    ``.dot``/``.gv``: the DOT source; ``.svg``, ``.png``, ``.pdf``: rendered with Graphviz's
    ``dot`` program (which must be installed). Returns the path written.
    """
    path = Path(path)
    fmt = path.suffix.lower().lstrip(".")
    if fmt not in FORMATS:
        raise ValueError(f"unknown figure format {path.suffix!r}: use one of "
                         + ", ".join("." + f for f in FORMATS))
    g = topology_graph(model, topology, mobility)
    if fmt == "png":
        g.attr(dpi="144")
    if fmt in ("dot", "gv"):
        write_text(path, g.source)
    else:
        write_bytes(path, g.pipe(format=fmt))
    return path
