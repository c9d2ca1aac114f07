"""Radar and bar plots of the axis scores (``leaderboard.axis_scores``), PNG and SVG, matplotlib Agg."""

from __future__ import annotations

import math
from pathlib import Path

from groundtrace.crs.report.leaderboard import AXIS_NAMES, Report


def _series(report: Report) -> list[tuple[str, list[float]]]:
    return [(f"{r.label} · {r.setting}", [r.axes.get(a) or 0.0 for a in AXIS_NAMES]) for r in report.rows]


def plot_axes(report: Report, out: Path) -> list[Path]:
    """Write ``axes_radar.{png,svg}`` and ``axes_bar.{png,svg}`` into ``out``; returns the paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams["svg.hashsalt"] = "groundtrace"  # stable ids in the SVG
    series = _series(report)
    written: list[Path] = []

    angles = [2 * math.pi * i / len(AXIS_NAMES) for i in range(len(AXIS_NAMES))]
    fig = plt.figure(figsize=(6, 6))
    ax = fig.add_subplot(projection="polar")
    for name, values in series:
        ax.plot([*angles, angles[0]], [*values, values[0]], label=name, linewidth=1.5)
        ax.fill([*angles, angles[0]], [*values, values[0]], alpha=0.1)
    ax.set_xticks(angles)
    ax.set_xticklabels(list(AXIS_NAMES))
    ax.set_ylim(0, 1)
    ax.set_title("TRACE-CRS axes (1 = best)")
    ax.legend(loc="upper right", bbox_to_anchor=(1.35, 1.1), fontsize=8)
    for ext in ("png", "svg"):
        path = out / f"axes_radar.{ext}"
        fig.savefig(path, bbox_inches="tight", dpi=120, metadata={"Date": None} if ext == "svg" else None)
        written.append(path)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(7, 4))
    width = 0.8 / max(1, len(series))
    for k, (name, values) in enumerate(series):
        ax.bar([i + k * width for i in range(len(AXIS_NAMES))], values, width=width, label=name)
    ax.set_xticks([i + width * (len(series) - 1) / 2 for i in range(len(AXIS_NAMES))])
    ax.set_xticklabels(list(AXIS_NAMES))
    ax.set_ylim(0, 1)
    ax.set_ylabel("axis score (1 = best)")
    ax.legend(fontsize=8)
    for ext in ("png", "svg"):
        path = out / f"axes_bar.{ext}"
        fig.savefig(path, bbox_inches="tight", dpi=120, metadata={"Date": None} if ext == "svg" else None)
        written.append(path)
    plt.close(fig)
    return written
