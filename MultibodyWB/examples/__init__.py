"""Example mechanisms written as code that builds the neutral model.

Each module has ``build(**options) -> MultibodySystem``; tests, the command line
(``python3 -m MultibodyWB.solver example NAME``) and the demo reuse them. No FreeCAD import here.
"""

from __future__ import annotations

import importlib

#: name -> (module, one-line description)
EXAMPLES = {
    "seed_box": ("seed_box", "the MSTMMSim seed's 15 x 10 x 10 mm steel box on a spherical hinge"),
    "double_pendulum": ("double_pendulum", "two steel links on revolute hinges, released at 60 deg"),
    "branched_tree": ("branched_tree", "a hub carrying three chains: every tree case at once"),
    "four_bar": ("four_bar", "planar crank-rocker four-bar of four revolute hinges (redundant in 3D)"),
    "crank_slider": ("crank_slider", "single-cylinder engine: frame, crank, connecting rod, piston"),
    "seed004": ("seed004", "seed 004's spatial arm, pendulum and sprung slider (R, R, P)"),
    "chain": ("chain", "n-link chain of revolute hinges with alternating axes (benchmark)"),
    "gear_train": ("gear_train", "motor-driven pinion, idler and braked output gear, z = 12, 36, 24"),
    "cam_valve": ("cam_valve", "eccentric cam lifting a sprung flat-faced valve (contact, stops)"),
    "bouncing_balls": ("bouncing_balls", "four rubber balls thrown into a box of ground planes"),
    "tumbling_solids": ("tumbling_solids", "an egg, a cone and a hexagonal prism tumbling down a "
                                           "tilted plate (convex contact shapes)"),
    "andrews_squeezer": ("andrews_squeezer", "Andrews' squeezing mechanism: seven bodies, three "
                                             "loops, motor torque and spring (benchmark)"),
    "quarter_car": ("quarter_car", "quarter car crossing a bump: hull, suspension, wheel, tyre "
                                   "(design study of the demo)"),
    "track": ("track", "a track of 20 pinned shoes round a driven sprocket and a tensioned "
                       "idler (cylinder - box contacts)"),
    "tracked_vehicle": ("tracked_vehicle", "a half tank on flat ground: a 600 kg hull on three "
                                           "torsion-arm road wheels, a track of 36 shoes"),
    "flyball_governor": ("flyball_governor", "IFToMM benchmark A05: Watt's governor with stiff "
                                             "spring-dampers for couplers (benchmark)"),
}


def build(name: str, **options):
    """Build the example ``name`` (a key of :data:`EXAMPLES`) with its options."""
    if name not in EXAMPLES:
        raise KeyError(f"no example '{name}'; choose one of {', '.join(EXAMPLES)}")
    module = importlib.import_module(f"{__name__}.{EXAMPLES[name][0]}")
    return module.build(**options)
