"""Names for the compiled code in a ``perf`` profile: where a step's time goes, by kernel.

    perf record -F 5000 -o step.data /usr/bin/python3 benchmarks/perf_names.py loop 100000
    perf report -i step.data --stdio --sort sym --no-children | head -40

Runs ``steps`` RK4 steps of the crank-slider (``loop``; ``tree``: the same with its cut hinge
left out; another example with ``MODEL=four_bar`` in the environment) in one compiled call, after writing ``/tmp/perf-<pid>.map``: the address and size of
every function numba has loaded in this process (each kernel's own code and the copies of its
callees linked into it), which ``perf report`` reads to name the samples. ``NRT_incref`` and
``NRT_decref`` high in the list are reference counts left in the evaluation (docs/design.md,
"Adding a force law"). Prints the time per step. Not a test.
"""

from __future__ import annotations

import os
import sys
import time
import warnings

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from numba.core.registry import CPUDispatcher      # noqa: E402


def write_perf_map() -> int:
    """Write ``/tmp/perf-<pid>.map`` for every compiled function of every numba dispatcher
    found in the loaded modules; returns the number of entries. A function's size is the gap to
    the next address (the map's format wants one)."""
    addresses = {}
    seen = set()
    for module in list(sys.modules.values()):
        for value in list(getattr(module, "__dict__", {}).values()):
            if not isinstance(value, CPUDispatcher) or id(value) in seen:
                continue
            seen.add(id(value))
            for cres in value.overloads.values():
                lib = cres.library
                functions = list(lib._final_module.functions)
                if lib._shared_module is not None:      # a kernel loaded from numba's cache
                    functions += list(lib._shared_module.functions)
                for fn in functions:
                    try:
                        address = lib.get_pointer_to_function(fn.name)
                    except Exception:                   # noqa: BLE001 - declared, not defined
                        address = 0
                    if address:
                        addresses.setdefault(address, f"{value.__name__}:{fn.name[:150]}")
    ordered = sorted(addresses)
    with open(f"/tmp/perf-{os.getpid()}.map", "w") as out:
        for i, address in enumerate(ordered):
            size = ordered[i + 1] - address if i + 1 < len(ordered) else 4096
            out.write(f"{address:x} {min(size, 1 << 20):x} {addresses[address]}\n")
    return len(ordered)


def main():
    warnings.simplefilter("ignore")
    from bench_loop_rows import per_step, without_cuts
    from MultibodyWB.examples import build
    which = sys.argv[1] if len(sys.argv) > 1 else "loop"
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 100000
    name = os.environ.get("MODEL", "crank_slider")
    model = build(name) if which == "loop" else without_cuts(build(name))
    per_step(model, steps=100, repeats=1)               # compiles or loads the kernels
    print(f"perf map: {write_perf_map()} functions")
    t0 = time.perf_counter()
    per_step(model, steps=steps, repeats=1)
    print(f"{which}: {1e6 * (time.perf_counter() - t0) / steps:.2f} us per RK4 step")


if __name__ == "__main__":
    main()
