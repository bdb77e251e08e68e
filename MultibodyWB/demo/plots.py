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
