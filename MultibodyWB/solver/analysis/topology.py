"""Topology of a multibody system in the MSTMM sense: spanning tree, cut hinges, uniform numbering.

:func:`analyse` turns a :class:`~.model.MultibodySystem` into a :class:`Topology`: which hinges form
the spanning tree from the ground, which are cut to open the closed loops, the transfer direction of
every tree hinge, and the uniform numbering of bodies and hinges that the MSTMM topology figure
shows and the transfer-matrix solver follows.

Conventions
-----------
Boundary
    The ground is the boundary of the system and has the number 0. Every tree hinge attached to the
    ground has ``output == 0``: it is a *root* of the system (there is one root per ground
    connection, so a system may have several).
Transfer direction
    From the tips to the ground. Every tree hinge has a tip-side (input) part and a root-side
    (output) part. When the tree needs the hinge the other way round than the hinge's own
    ``input``/``output`` markers say, the hinge is *reversed* (the solver inverts its relative pose;
    its coordinates keep the hinge's own definition).
Numbering
    Bodies, tree hinges and cut hinges are numbered 1..N uniformly. Every tree element's number is
    smaller than the number of the element at its output (tips get the small numbers, the root
    hinges at the boundary the large ones). The numbers come from a post-order walk of the tree:
    the root hinges in model order, at every body its input hinges in model order, so a chain gets
    consecutive numbers (body 1, hinge 2, body 3, hinge 4 ... towards the ground). A cut hinge is
    numbered just before the first of its two bodies, so it is smaller than both of them.
    Elastic closures (bushings that close a loop) are force elements, not tree elements, and get
    no number.
Tips and inputs
    A tip body has no inputs (``inputs == ()``; the seed's data structure writes this "input = 0":
    the free end, m = q = 0). Cut hinges do not count as inputs: they are listed on their bodies
    in ``cut_hinges`` (each becomes a pair of boundaries with unknown loads in the solver).
Choice of the tree
    The non-elastic hinges are taken first, as a maximum spanning forest weighted by the number of
    constraint equations (Kruskal: more constraints first, then model order). The non-elastic
    hinges left over close loops and are cut: so the hinge cut in each loop is the one with the
    fewest constraints (spherical 3 before universal 4 before revolute 5 ...), among equals the one
    latest in the model, and the sum of the cut constraints is as small as it can be. Elastic
    hinges (``HINGE_TYPES[...].elastic``) then connect, in model order, only what the non-elastic
    hinges cannot reach (an elastic hinge to the ground is a good tree edge: a six-coordinate
    joint with springs); the elastic hinges left over are *elastic closures*. The tree is then
    oriented and ordered by a breadth-first search from the ground.
Islands
    Bodies that no chain of hinges connects to the ground are listed in ``islands`` and left out
    of the numbering; hinges among them are listed in ``unused_hinges``, as are hinges that connect
    a part to itself.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping, Optional, Union

from ..elements.hinges import HINGE_TYPES
from ..model.mechanism import MultibodySystem

BODY = "body"
HINGE = "hinge"

_GROUND = 0   # graph node of the ground (boundary 0); bodies are nodes 1..n in model order


@dataclass(frozen=True)
class Element:
    """One element of the uniform numbering: a body or a (tree or cut) hinge.

    Attributes
    ----------
    id : int
        The element's number, 1..N.
    kind : str
        ``'body'`` or ``'hinge'``.
    name : str
        The body's or hinge's name in the model.
    inputs : tuple of int
        Numbers of the tree elements connected to the element's input end(s), ascending. A body
        has one input per tree hinge carrying bodies further out (none for a tip, several for a
        branch body); a tree hinge has exactly one (its tip-side body); a cut hinge has none.
    output : int or None
        Number of the element at the output end: the hinge towards the ground for a body, the
        root-side body for a tree hinge, 0 for a hinge attached to the ground (a root), None for a
        cut hinge (not part of the tree).
    input_part, output_part : str
        Hinges only: names of the tip-side and root-side parts (a body or the ground) in the
        transfer direction. For a cut hinge, the hinge's own input and output parts.
    reversed : bool
        Hinges only: True when the transfer direction is opposite to the hinge's own
        ``input``/``output`` markers.
    cut : bool
        Hinges only: True for a cut hinge.
    elastic : bool
        Hinges only: True for an elastic hinge (bushing) in the tree.
    cut_hinges : tuple of int
        Bodies only: numbers of the cut hinges attached to the body.
    """

    id: int
    kind: str
    name: str
    inputs: tuple[int, ...]
    output: Optional[int]
    input_part: str = ""
    output_part: str = ""
    reversed: bool = False
    cut: bool = False
    elastic: bool = False
    cut_hinges: tuple[int, ...] = ()


@dataclass(frozen=True)
class Loop:
    """A closed kinematic loop, opened by one cut hinge.

    Attributes
    ----------
    cut_hinge : str
        Name of the cut hinge.
    path : tuple of str
        The loop through the tree, from the cut hinge's input part to its output part: part,
        hinge, part, ..., part. The ground's name appears where the loop passes through (or ends
        at) the ground, the boundary.
    numbers : tuple of int
        The element numbers of ``path``, 0 for the ground.
    through_ground : bool
        True when the loop passes through or ends at the ground (e.g. a crank-slider:
        ground-crank-rod-piston-ground).
    """

    cut_hinge: str
    path: tuple[str, ...]
    numbers: tuple[int, ...]
    through_ground: bool

    @property
    def bodies(self) -> tuple[str, ...]:
        """The parts on the loop (bodies and possibly the ground), in path order."""
        return self.path[0::2]

    @property
    def hinges(self) -> tuple[str, ...]:
        """The tree hinges on the loop, in path order (the cut hinge is not among them)."""
        return self.path[1::2]


@dataclass(frozen=True)
class Topology:
    """The MSTMM topology of a model (see the module docstring for the conventions).

    Attributes
    ----------
    model_name : str
        The model's name.
    ground : str or None
        Name of the ground (the boundary, number 0); None when the model has no ground.
    elements : tuple of Element
        All numbered elements, ``elements[i].id == i + 1``.
    number : Mapping[str, int]
        Element number by body or hinge name (tree and cut hinges); the ground's name maps to 0.
    bodies : tuple of str
        The bodies connected to the ground, in breadth-first order from the ground (every body
        after the body at its output): the order for forward kinematics.
    parent_hinge : Mapping[str, str]
        For every connected body, the tree hinge at its output (towards the ground).
    tree_hinges : tuple of str
        Hinges of the spanning tree, in element-number order (tips first).
    cut_hinges : tuple of str
        Non-elastic hinges that close loops, in element-number order.
    elastic_closures : tuple of str
        Elastic hinges (bushings) between two connected parts that are not tree edges: force
        elements, not loop closures. In model order.
    reversed_hinges : tuple of str
        Tree hinges whose transfer direction is opposite to their own input/output markers.
    roots : tuple of str
        Tree hinges whose output is the boundary 0 (attached to the ground).
    tips : tuple of str
        Connected bodies with no inputs (free ends), in element-number order.
    branch_bodies : tuple of str
        Bodies with more than one input, in element-number order.
    loops : tuple of Loop
        One loop per cut hinge, in the order of ``cut_hinges``.
    islands : tuple of str
        Bodies not connected to the ground through hinges, in model order.
    unused_hinges : tuple of str
        Hinges in none of the lists above: among island bodies, or from a part to itself.
    dof_gruebler : int
        Grubler-Kutzbach (spatial): 6 * number of bodies - constraints of all non-elastic hinges
        - one per coupler.
    tree_coordinates : int
        Sum of the tree hinges' coordinates.
    loop_constraints : int
        Sum of the cut hinges' constraints, plus one per coupler (a constraint between tree
        coordinates, its row in :func:`.kinematics.loop_jacobian`). Without islands,
        ``dof_gruebler == tree_coordinates - loop_constraints``; the real mobility, from the rank of
        the loop-closure Jacobian, is :func:`.kinematics.mobility`.
    """

    model_name: str
    ground: Optional[str]
    elements: tuple[Element, ...]
    number: Mapping[str, int]
    bodies: tuple[str, ...]
    parent_hinge: Mapping[str, str]
    tree_hinges: tuple[str, ...]
    cut_hinges: tuple[str, ...]
    elastic_closures: tuple[str, ...]
    reversed_hinges: tuple[str, ...]
    roots: tuple[str, ...]
    tips: tuple[str, ...]
    branch_bodies: tuple[str, ...]
    loops: tuple[Loop, ...]
    islands: tuple[str, ...]
    unused_hinges: tuple[str, ...]
    dof_gruebler: int
    tree_coordinates: int
    loop_constraints: int

    def element(self, key: Union[int, str]) -> Element:
        """The element with this number (1..N) or name."""
        if isinstance(key, str):
            key = self.number[key]
        if not 1 <= key <= len(self.elements):
            raise KeyError(key)
        return self.elements[key - 1]

    @property
    def n_loops(self) -> int:
        """Number of closed kinematic loops (= number of cut hinges)."""
        return len(self.loops)

    def table(self) -> str:
        """The MSTMM data structure as text: ID, kind, name, inputs, output (0 = boundary)."""
        rows = [f"{'ID':>4}  {'kind':<5}  {'name':<20}  {'inputs':<14}  output"]
        for e in self.elements:
            ins = ",".join(str(i) for i in e.inputs) or "-"
            out = "cut" if e.output is None else str(e.output)
            extra = " (reversed)" if e.reversed else ""
            rows.append(f"{e.id:>4}  {e.kind:<5}  {e.name:<20}  {ins:<14}  {out}{extra}")
        return "\n".join(rows)


def _hinge_type(h):
    kind = HINGE_TYPES.get(h.type)
    if kind is None:
        raise ValueError(f"Hinge {h.name!r}: unknown type {h.type!r} (validate the model first)")
    return kind


class _UnionFind:
    def __init__(self, n):
        self.up = list(range(n))

    def find(self, i):
        while self.up[i] != i:
            self.up[i] = self.up[self.up[i]]
            i = self.up[i]
        return i

    def union(self, i, j) -> bool:
        a, b = self.find(i), self.find(j)
        if a == b:
            return False
        self.up[max(a, b)] = min(a, b)
        return True


def analyse(model: MultibodySystem) -> Topology:
    """The topology of ``model``: spanning tree, cut hinges, numbering, loops, DOF counts.

    Parameters
    ----------
    model : MultibodySystem
        A model whose references resolve (see ``validation``). Islands, missing hinges and a
        missing ground are described, not refused.

    Returns
    -------
    Topology

    Raises
    ------
    ValueError
        When a hinge has an unknown type or names a part the model does not have.
    """
    ground_names = [g.name for g in model.grounds]
    ground = ground_names[0] if ground_names else None
    node = {name: _GROUND for name in ground_names}
    for i, b in enumerate(model.bodies):
        node[b.name] = i + 1
    name_of = {i + 1: b.name for i, b in enumerate(model.bodies)}
    name_of[_GROUND] = ground

    hinges = list(model.hinges)
    kinds = [_hinge_type(h) for h in hinges]
    ends = []
    for h in hinges:
        for ref in (h.input, h.output):
            if ref.body not in node:
                raise ValueError(f"Hinge {h.name!r}: no part called {ref.body!r} "
                                 "(validate the model first)")
        ends.append((node[h.input.body], node[h.output.body]))

    # -- choice of the tree (Kruskal), see the module docstring --------------------------------
    uf = _UnionFind(len(model.bodies) + 1)
    is_tree = [False] * len(hinges)
    candidates = [i for i, h in enumerate(hinges) if ends[i][0] != ends[i][1]]
    rigid = sorted((i for i in candidates if not kinds[i].elastic),
                   key=lambda i: (-kinds[i].constraints, i))
    elastic = [i for i in candidates if kinds[i].elastic]
    for i in rigid + elastic:
        is_tree[i] = uf.union(*ends[i])

    # -- orientation and order: breadth-first search from the ground ---------------------------
    adjacency: dict[int, list[int]] = {}
    for i in range(len(hinges)):
        if is_tree[i]:
            for n in ends[i]:
                adjacency.setdefault(n, []).append(i)
    parent_edge: dict[int, int] = {}        # body node -> tree hinge index towards the ground
    children: dict[int, list[int]] = {}     # node -> tree hinge indices at its input, model order
    depth = {_GROUND: 0}
    bfs: list[int] = []
    queue = deque([_GROUND]) if ground is not None else deque()
    while queue:
        n = queue.popleft()
        for i in adjacency.get(n, []):
            a, b = ends[i]
            other = b if a == n else a
            if other in depth:
                continue
            depth[other] = depth[n] + 1
            parent_edge[other] = i
            children.setdefault(n, []).append(i)
            bfs.append(other)
            queue.append(other)
    reached = set(depth)

    def child_of(i):
        a, b = ends[i]
        return a if parent_edge.get(a) == i else b

    def parent_of(i):
        a, b = ends[i]
        return b if parent_edge.get(a) == i else a

    tree_edges = set(parent_edge.values())     # a set: a chain of n hinges is not O(n^2)
    tree = [i for i in range(len(hinges)) if is_tree[i] and i in tree_edges]
    in_tree = set(tree)
    both_reached = [all(n in reached for n in ends[i]) for i in range(len(hinges))]
    cut = [i for i in range(len(hinges)) if not is_tree[i] and not kinds[i].elastic
           and ends[i][0] != ends[i][1] and both_reached[i]]
    closures = [i for i in range(len(hinges)) if not is_tree[i] and kinds[i].elastic
                and ends[i][0] != ends[i][1] and both_reached[i]]
    unused = [i for i in range(len(hinges))
              if i not in in_tree and i not in cut and i not in closures]

    # -- numbering: post-order walk, iterative (long chains) -----------------------------------
    cut_at: dict[int, list[int]] = {}
    for i in cut:
        for n in ends[i]:
            if n != _GROUND:
                cut_at.setdefault(n, []).append(i)
    hinge_number: dict[int, int] = {}
    body_number: dict[int, int] = {}
    counter = 0
    # stack items: ("body", node, expanded) or ("hinge", index, expanded)
    stack = [(HINGE, i, False) for i in reversed(children.get(_GROUND, []))]
    while stack:
        kind, key, expanded = stack.pop()
        if kind == HINGE:
            if expanded:
                counter += 1
                hinge_number[key] = counter
            else:
                stack.append((HINGE, key, True))
                stack.append((BODY, child_of(key), False))
        else:
            if expanded:
                for i in cut_at.get(key, []):
                    if i not in hinge_number:
                        counter += 1
                        hinge_number[i] = counter
                counter += 1
                body_number[key] = counter
            else:
                stack.append((BODY, key, True))
                for i in reversed(children.get(key, [])):
                    stack.append((HINGE, i, False))

    number: dict[str, int] = {}
    if ground is not None:
        for g in ground_names:
            number[g] = 0
    for n, k in body_number.items():
        number[name_of[n]] = k
    for i, k in hinge_number.items():
        number[hinges[i].name] = k

    def part_number(n):
        return 0 if n == _GROUND else body_number[n]

    records: dict[int, Element] = {}
    for n, k in body_number.items():
        records[k] = Element(
            id=k, kind=BODY, name=name_of[n],
            inputs=tuple(sorted(hinge_number[i] for i in children.get(n, []))),
            output=hinge_number[parent_edge[n]],
            cut_hinges=tuple(sorted(hinge_number[i] for i in cut_at.get(n, []))))
    for i in tree:
        c, p = child_of(i), parent_of(i)
        k = hinge_number[i]
        records[k] = Element(
            id=k, kind=HINGE, name=hinges[i].name, inputs=(body_number[c],),
            output=part_number(p), input_part=name_of[c], output_part=name_of[p],
            reversed=(ends[i][0] != c), elastic=kinds[i].elastic)
    for i in cut:
        k = hinge_number[i]
        records[k] = Element(
            id=k, kind=HINGE, name=hinges[i].name, inputs=(), output=None,
            input_part=hinges[i].input.body, output_part=hinges[i].output.body, cut=True)
    elements = tuple(records[k] for k in sorted(records))

    # -- loops ------------------------------------------------------------------------------
    def up(n):
        """Nodes and hinges from node n to the ground: [n, h, n', h', ..., GROUND]."""
        chain = [(BODY, n)]
        while n != _GROUND:
            i = parent_edge[n]
            n = parent_of(i)
            chain += [(HINGE, i), (BODY, n)]
        return chain

    def label(item):
        kind, key = item
        if kind == HINGE:
            return hinges[key].name, hinge_number[key]
        return name_of[key], part_number(key)

    loops = []
    for i in sorted(cut, key=lambda i: hinge_number[i]):
        a_chain, b_chain = up(ends[i][0]), up(ends[i][1])
        a_at = {key: j for j, (kind, key) in enumerate(a_chain) if kind == BODY}
        ib, common = next((j, key) for j, (kind, key) in enumerate(b_chain)
                          if kind == BODY and key in a_at)       # a set: linear in the loop
        ia = a_at[common]
        path = a_chain[:ia + 1] + b_chain[:ib][::-1]
        labels = [label(item) for item in path]
        loops.append(Loop(cut_hinge=hinges[i].name, path=tuple(x for x, _ in labels),
                          numbers=tuple(k for _, k in labels),
                          through_ground=(common == _GROUND)))

    by_number = sorted(records.values(), key=lambda e: e.id)
    return Topology(
        model_name=model.name,
        ground=ground,
        elements=elements,
        number=MappingProxyType(number),
        bodies=tuple(name_of[n] for n in bfs),
        parent_hinge=MappingProxyType({name_of[n]: hinges[parent_edge[n]].name for n in bfs}),
        tree_hinges=tuple(hinges[i].name for i in sorted(tree, key=lambda i: hinge_number[i])),
        cut_hinges=tuple(l.cut_hinge for l in loops),
        elastic_closures=tuple(hinges[i].name for i in closures),
        reversed_hinges=tuple(e.name for e in by_number if e.kind == HINGE and e.reversed),
        roots=tuple(e.name for e in by_number if e.kind == HINGE and e.output == 0),
        tips=tuple(e.name for e in by_number if e.kind == BODY and not e.inputs),
        branch_bodies=tuple(e.name for e in by_number if e.kind == BODY and len(e.inputs) > 1),
        loops=tuple(loops),
        islands=tuple(b.name for b in model.bodies if node[b.name] not in reached),
        unused_hinges=tuple(hinges[i].name for i in unused),
        dof_gruebler=(6 * len(model.bodies) - sum(k.constraints for k in kinds if not k.elastic)
                      - len(getattr(model, "couplers", ()))),
        tree_coordinates=sum(kinds[i].dof for i in tree),
        loop_constraints=(sum(kinds[i].constraints for i in cut)
                          + len(getattr(model, "couplers", ()))),
    )
