"""The demo: the built-in crank-slider engine, from model to files.

``python3 -m MultibodyWB.demo [OUT_DIR]`` writes the engine's neutral model, checks it as the
command line's ``check`` does, and draws its MSTMM topology figure; it prints where each file is.
It grows with the product (simulation, plots, animation).
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
    print("\nFiles written:", file=stream)
    for role, path in files.items():
        print(f"  {role:<16} {os.path.abspath(path)}", file=stream)
    return files


if __name__ == "__main__":
    run(sys.argv[1] if len(sys.argv) > 1 else "out")
