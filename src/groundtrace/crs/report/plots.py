"""Radar and bar plots of the axis scores (``leaderboard.axis_scores``), PNG and SVG, matplotlib Agg."""

from __future__ import annotations

import math
from pathlib import Path

from groundtrace.crs.report.leaderboard import AXIS_NAMES, Report


def _series(report: Report) -> list[tuple[str, list[float]]]:
    return [(f"{r.label} · {r.setting}", [r.axes.get(a) or 0.0 for a in AXIS_NAMES]) for r in report.rows]


def plot_axes(report: Report, out: Path) -> list[Path]:
    """Write ``axes_radar.{png,svg}`` and ``axes_bar.{png,svg}`` into ``out``; returns the paths."""
    import matplotlib  # deferred: ~1 s to import, and the Agg backend is chosen before pyplot loads

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # deferred with matplotlib (above), after the backend is set

    plt.rcParams["svg.hashsalt"] = "groundtrace"  # stable ids in the SVG
    series = _series(report)
    written: list[Path] = []

    angles = [2 * math.pi * i / len(AXIS_NAMES) for i in range(len(AXIS_NAMES))]
    fig = plt.figure(figsize=(6.5, 7))
    ax = fig.add_subplot(projection="polar")
    ax.set_theta_offset(math.pi / 2)  # first axis at the top, clockwise
    ax.set_theta_direction(-1)
    for name, values in series:
        ax.plot(
            [*angles, angles[0]], [*values, values[0]], label=name, linewidth=1.8, marker="o", markersize=4
        )
        ax.fill([*angles, angles[0]], [*values, values[0]], alpha=0.1)
    ax.set_xticks(angles)
    ax.set_xticklabels(list(AXIS_NAMES), fontsize=11)
    ax.tick_params(axis="x", pad=14)  # axis names clear of the outer ring
    ax.set_ylim(0, 1)
    ax.set_yticks([0.25, 0.5, 0.75, 1.0])
    ax.set_yticklabels(["0.25", "0.5", "0.75", "1"], fontsize=8, color="#555")
    ax.set_rlabel_position(45)  # radial labels between two axes, away from the axis names
    ax.set_title("TRACE-CRS axes (1 = best)", pad=24)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.08), ncol=min(3, max(1, len(series))), fontsize=9,
              frameon=False)  # fmt: skip
    for ext in ("png", "svg"):
        path = out / f"axes_radar.{ext}"
        fig.savefig(path, bbox_inches="tight", dpi=120, metadata={"Date": None} if ext == "svg" else None)
        written.append(path)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(8, 4.5))
    width = 0.8 / max(1, len(series))
    for k, (name, values) in enumerate(series):
        bars = ax.bar([i + k * width for i in range(len(AXIS_NAMES))], values, width=width, label=name)
        if len(series) <= 4:  # value labels stay legible for a few systems only
            ax.bar_label(bars, labels=[f"{v:.2f}" for v in values], fontsize=7, padding=2)
    ax.set_xticks([i + width * (len(series) - 1) / 2 for i in range(len(AXIS_NAMES))])
    ax.set_xticklabels(list(AXIS_NAMES))
    ax.set_ylim(0, 1.08)
    ax.set_yticks([0, 0.2, 0.4, 0.6, 0.8, 1.0])
    ax.set_ylabel("axis score (1 = best)")
    ax.spines[["top", "right"]].set_visible(False)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=min(3, max(1, len(series))), fontsize=9,
              frameon=False)  # fmt: skip
    for ext in ("png", "svg"):
        path = out / f"axes_bar.{ext}"
        fig.savefig(path, bbox_inches="tight", dpi=120, metadata={"Date": None} if ext == "svg" else None)
        written.append(path)
    plt.close(fig)
    return written
