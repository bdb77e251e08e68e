"""The Study panel's figures and the labels of its table: the panel's plot of the first objective
against each parameter (:func:`draw_panel_figure`), the plot dock's figure with the parallel
coordinates of every variant (:func:`draw_dock_figure`), and the column titles with their units,
the numbers and the parameters' display scales the table and the plots share. Drawn on a
Matplotlib figure given; no Qt (the panel, :mod:`.task_study`, owns the canvases)."""

from __future__ import annotations

import math

from ..document import study as dstudy


def _titled(name, label):
    """A column's title with its unit: ``rms(Crank.rz_drive) [N·m]``."""
    return f"{name} [{label}]" if label else name


def _number(value):
    return f"{value:.6g}"


def _scales(kept):
    scales = []
    for k, unit in enumerate(kept.units):
        sample = next((r.values[k] for r in kept.rows if math.isfinite(r.values[k])), 1.0)
        scales.append(dstudy.display_scale(unit, sample))
    return scales


def draw_panel_figure(figure, kept, scales):
    """The panel's plot of a stored table: the first objective against each parameter (ok runs;
    the best one marked). ``scales``: the parameters' (factor, unit label), :func:`_scales`."""
    fig = figure
    fig.clear()
    n = len(kept.paths)
    if not kept.objectives or not n:
        return
    axes = [fig.add_subplot(1, n, k + 1) for k in range(n)]
    ok = [r for r in kept.rows if r.status == dstudy.OK]
    fy, ylabel = dstudy.objective_scales(kept)[0]
    for k, (ax, path, (f, label)) in enumerate(zip(axes, kept.paths, scales)):
        xs = [r.values[k] * f for r in ok]
        ys = [r.objectives[0] * fy for r in ok]
        ax.plot(xs, ys, "o", color="#3465a4", markersize=4, label="variants")
        best = [r for r in ok if r.index == kept.best]
        if best:
            ax.plot([best[0].values[k] * f], [best[0].objectives[0] * fy], "o",
                    color="#73d216", markersize=8, markeredgecolor="black", label="best")
        ax.set_xlabel(_titled(path, label), fontsize=8)
        if k == 0:
            ax.set_ylabel(_titled(kept.objectives[0], ylabel), fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(True, alpha=0.3)
    fig.tight_layout()


def draw_dock_figure(figure, kept):
    """The dock's plots of a stored table: on the left the first objective against each
    parameter (one axes each, the best marked), on the right the parallel coordinates: every
    variant that ran a line across the parameters and objectives (each axis from its least to
    its largest value), coloured by the first objective; variants missing a constraint dashed,
    the best in black."""
    import numpy as np
    try:
        from matplotlib import colormaps
        cmap = colormaps["viridis"]
    except ImportError:                   # matplotlib < 3.5
        from matplotlib import cm
        cmap = cm.get_cmap("viridis")
    scales = _scales(kept)
    objs = dstudy.objective_scales(kept)
    fy = objs[0][0] if objs else 1.0
    ok = [r for r in kept.rows if r.status == dstudy.OK]
    n = len(kept.paths)
    grid = figure.add_gridspec(1, n + 2)
    for k, (path, (f, label)) in enumerate(zip(kept.paths, scales)):
        ax = figure.add_subplot(grid[0, k])
        ax.plot([r.values[k] * f for r in ok], [r.objectives[0] * fy for r in ok], "o",
                color="#3465a4", markersize=4)
        for r in ok:
            if r.index == kept.best:
                ax.plot([r.values[k] * f], [r.objectives[0] * fy], "o", color="#73d216",
                        markersize=8, markeredgecolor="black")
        ax.set_xlabel(_titled(path, label), fontsize=8)
        if k == 0 and objs:
            ax.set_ylabel(_titled(kept.objectives[0], objs[0][1]), fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(True, alpha=0.3)
    ax = figure.add_subplot(grid[0, n:])
    names = [_titled(p, label) for p, (_, label) in zip(kept.paths, scales)]
    names += [_titled(o, label) for o, (_, label) in zip(kept.objectives, objs)]
    if not ok:
        ax.text(0.5, 0.5, "no variant ran", ha="center", transform=ax.transAxes)
        figure.tight_layout()
        return
    data = np.array([[v * f for v, (f, _) in zip(r.values, scales)]
                     + [v * f for v, (f, _) in zip(r.objectives, objs)]
                     for r in ok], dtype=float).reshape(len(ok), len(names))
    lo, hi = np.nanmin(data, axis=0), np.nanmax(data, axis=0)
    span = np.where(hi > lo, hi - lo, 1.0)
    scaled = (data - lo) / span
    scaled[:, ~(hi > lo)] = 0.5
    first = data[:, n] if kept.objectives else np.zeros(len(ok))
    f0, f1 = np.nanmin(first), np.nanmax(first)
    xs = np.arange(len(names))
    for r, y, v in zip(ok, scaled, first):
        best = r.index == kept.best
        colour = "black" if best else cmap((v - f0) / (f1 - f0) if f1 > f0 else 0.5)
        ax.plot(xs, y, "-" if r.feasible else "--", color=colour, linewidth=2.5 if best else 1,
                alpha=1.0 if best else 0.8)
    for x in xs:
        ax.axvline(x, color="#555753", linewidth=0.8)
    ax.set_xticks(xs)
    ax.set_xticklabels([name if len(name) <= 28 else name[:26] + "..." for name in names],
                       fontsize=7)
    ax.set_yticks([0, 1])
    ax.set_yticklabels(["least", "largest"], fontsize=7)
    for x in xs:
        ax.annotate(f"{lo[x]:.4g}", (x, 0), xytext=(2, -10), textcoords="offset points",
                    fontsize=6)
        ax.annotate(f"{hi[x]:.4g}", (x, 1), xytext=(2, 3), textcoords="offset points",
                    fontsize=6)
    ax.set_title("every variant (dashed: a constraint missed; black: the best)", fontsize=8,
                 pad=12)
    ax.set_ylim(-0.12, 1.12)
    figure.tight_layout()
