"""Plots of results (matplotlib, no screen needed): curves of any result columns over time.

FreeCAD-free, like the solver; used by the demo, the command line and (later) the workbench's
plot panel.
"""

from __future__ import annotations

import os


def _pyplot():
    import matplotlib
    if os.environ.get("DISPLAY") is None or matplotlib.get_backend().lower() == "agg":
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def plot_columns(results, columns, path, title=None, ylabel=None, scale=1.0, labels=None):
    """Plot ``columns`` of ``results`` against time into ``path`` (PNG, SVG or PDF).

    ``scale`` multiplies the values (e.g. 1e-3 for kN); ``labels`` name the curves (default:
    the column names with their units). Returns ``path``.
    """
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=100)
    t = results.time
    for k, name in enumerate(columns):
        label = labels[k] if labels else f"{name} [{results.unit(name)}]"
        ax.plot(t, results.column(name) * scale, label=label, linewidth=1.4)
    ax.set_xlabel("time [s]")
    if ylabel:
        ax.set_ylabel(ylabel)
    ax.set_title(title or results.meta.get("model", ""))
    ax.grid(True, alpha=0.35)
    ax.legend(loc="best", fontsize=9)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def plot_bearing_force(results, hinge, path, title=None):
    """Reaction force of ``hinge`` on its input body: components and magnitude, in kN."""
    import numpy as np
    plt = _pyplot()
    F = np.column_stack([results.column(f"{hinge}.F{c}") for c in "xyz"]) * 1e-3
    t = results.time
    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=100)
    ax.plot(t, np.linalg.norm(F, axis=1), color="black", linewidth=1.8, label="|F|")
    for k, c in enumerate("xyz"):
        if np.ptp(F[:, k]) > 1e-9 * (np.abs(F).max() + 1e-300):
            ax.plot(t, F[:, k], linewidth=1.1, label=f"F{c}")
    ax.set_xlabel("time [s]")
    ax.set_ylabel("force [kN]")
    ax.set_title(title or f"{hinge}: reaction force on its input body")
    ax.grid(True, alpha=0.35)
    ax.legend(loc="best", fontsize=9)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def plot_motion(results, body, axis, path, title=None):
    """Position, velocity and acceleration of ``body``'s base origin along ``axis`` (x, y, z)."""
    plt = _pyplot()
    t = results.time
    fig, axes = plt.subplots(3, 1, figsize=(8, 7), dpi=100, sharex=True)
    for ax, (name, unit, scale, ylabel) in zip(axes, (
            (f"{body}.{axis}", "mm", 1e3, "position [mm]"),
            (f"{body}.v{axis}", "m/s", 1.0, "velocity [m/s]"),
            (f"{body}.a{axis}", "m/s^2", 1.0, "acceleration [m/s^2]"))):
        ax.plot(t, results.column(name) * scale, linewidth=1.4)
        ax.set_ylabel(ylabel)
        ax.grid(True, alpha=0.35)
    axes[-1].set_xlabel("time [s]")
    axes[0].set_title(title or f"{body}: motion along {axis}")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def plot_study_before_after(before, after, path, labels=("first design", "optimised"),
                            title=None):
    """The hull's vertical acceleration and the suspension's travel of two quarter-car runs
    (:mod:`...examples.quarter_car`), one above the other. Returns ``path``."""
    plt = _pyplot()
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(8, 6.5), dpi=100, sharex=True)
    for res, label, style in ((before, labels[0], "--"), (after, labels[1], "-")):
        ax1.plot(res.time, res.column("Hull.az"), style, linewidth=1.4, label=label)
        ax2.plot(res.time, res.column("Suspension.z") * 1e3, style, linewidth=1.4, label=label)
    ax1.set_ylabel("hull acceleration [m/s²]")
    ax2.set_ylabel("suspension travel [mm]")
    ax2.set_xlabel("time [s]")
    for ax in (ax1, ax2):
        ax.grid(True, alpha=0.35)
        ax.legend(loc="best", fontsize=9)
    ax1.set_title(title or "before and after the study")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def plot_study_map(table, path, x=0, y=1, objective=0, title=None):
    """Every run of a two-parameter study (:class:`...solver.study.StudyTable`) in the plane of
    parameters ``x`` and ``y``, coloured by the objective; runs that miss a constraint hollow,
    failed runs as crosses, the best run starred. Returns ``path``."""
    import numpy as np
    plt = _pyplot()
    s = table.study
    fig, ax = plt.subplots(figsize=(7.5, 5.5), dpi=100)
    ok = [r for r in table.rows if r.status == "ok"]
    feas = [r for r in ok if r.feasible]
    infeas = [r for r in ok if not r.feasible]
    values = np.array([r.objectives[objective] for r in ok]) if ok else np.zeros(0)
    vmin, vmax = (float(values.min()), float(values.max())) if values.size else (0, 1)
    if feas:
        sc = ax.scatter([r.values[x] for r in feas], [r.values[y] for r in feas],
                        c=[r.objectives[objective] for r in feas], cmap="viridis", vmin=vmin,
                        vmax=vmax, s=36, label="meets the constraints")
        fig.colorbar(sc, ax=ax, label=s.objectives[objective])
    if infeas:
        ax.scatter([r.values[x] for r in infeas], [r.values[y] for r in infeas],
                   facecolors="none", edgecolors="0.45", s=36, label="misses a constraint")
    failed = [r for r in table.rows if r.status != "ok"]
    if failed:
        ax.scatter([r.values[x] for r in failed], [r.values[y] for r in failed], marker="x",
                   color="red", s=40, label="failed")
    best = table.best
    if best is not None:
        ax.scatter([best.values[x]], [best.values[y]], marker="*", s=260, color="orange",
                   edgecolors="black", zorder=5,
                   label=f"best: {best.objectives[objective]:.4g}")
    ax.set_xlabel(f"{s.parameters[x].path} [{table.units[x]}]")
    ax.set_ylabel(f"{s.parameters[y].path} [{table.units[y]}]")
    ax.set_title(title or f"{s.method} study: {len(table.rows)} runs")
    ax.grid(True, alpha=0.35)
    ax.legend(loc="best", fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path
