"""The demo: the built-in crank-slider engine, from model to files.

``python3 -m MultibodyWB.demo [OUT_DIR]`` writes the engine's neutral model, checks it as the
command line's ``check`` does, and draws its MSTMM topology figure; then it simulates two tree
examples with the MSTMM solver (the double pendulum and the branched tree), prints their
summaries and writes their results as CSV; then it simulates the engine (a closed loop) over two
revolutions at 3000 rpm with its gas force and plots the crankshaft bearing force and the
piston's motion (PNG). It prints where each file is.
"""

from __future__ import annotations

import os
import sys


def run(out_dir: str = "out", stream=None) -> dict:
    """Run the demo into ``out_dir``; return the written files by role."""
    from .examples import build
    from .solver import xmlio
    from .solver.cli import summary
    from .solver.figure import write_figure

    stream = stream or sys.stdout
    os.makedirs(out_dir, exist_ok=True)
    files = {}
    model = build("crank_slider")
    files["model"] = os.path.join(out_dir, "crank_slider.mbs.xml")
    xmlio.write(model, files["model"])
    model = xmlio.read(files["model"])          # what a user's file goes through
    print(summary(model), file=stream)
    for ext in ("svg", "png", "dot"):
        files[f"topology ({ext})"] = write_figure(
            model, os.path.join(out_dir, f"crank_slider_topology.{ext}"))
    from .solver.simulate import simulate
    for name in ("double_pendulum", "branched_tree"):
        model = build(name)
        files[f"{name} model"] = os.path.join(out_dir, f"{name}.mbs.xml")
        xmlio.write(model, files[f"{name} model"])
        results = simulate(model)
        print("\n" + results.summary(), file=stream)
        files[f"{name} results"] = os.path.join(out_dir, f"{name}.csv")
        results.to_csv(files[f"{name} results"])
    from .plotting import plot_bearing_force, plot_motion
    engine = build("crank_slider")
    results = simulate(engine)
    print("\n" + results.summary(), file=stream)
    files["engine results"] = os.path.join(out_dir, "crank_slider.csv")
    results.to_csv(files["engine results"])
    files["bearing force plot"] = plot_bearing_force(
        results, "MainBearing", os.path.join(out_dir, "crank_slider_bearing_force.png"),
        title="Crankshaft main bearing force, 3000 rpm, gas force on the piston")
    files["piston motion plot"] = plot_motion(
        results, "Piston", "z", os.path.join(out_dir, "crank_slider_piston.png"),
        title="Piston position, velocity and acceleration")
    print("\nFiles written:", file=stream)
    for role, path in files.items():
        print(f"  {role:<24} {os.path.abspath(path)}", file=stream)
    return files


if __name__ == "__main__":
    run(sys.argv[1] if len(sys.argv) > 1 else "out")
