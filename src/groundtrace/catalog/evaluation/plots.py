"""The precision/coverage plot of an evaluation (SVG text, matplotlib Agg): left, precision and coverage
of gold values over the threshold θ (overall, extracted and written values) with the target precision;
right, precision against coverage per attribute (the attributes with the most gold values) and overall.

Attribute names are catalog data: shown through :func:`plot_label` (no mathtext, no legend-hiding
leading underscore); matplotlib's SVG writer escapes the text itself.
"""

from __future__ import annotations

import io

from groundtrace.catalog.evaluation.curves import CurvePoint, ThresholdReport

MAX_ATTRIBUTES = 6


def plot_label(text: str, limit: int = 40) -> str:
    """``text`` safe as a matplotlib label: ``$`` escaped (no mathtext), a leading ``_`` kept visible,
    control characters dropped, cut to ``limit`` characters."""
    text = "".join(ch for ch in text if ch.isprintable())[:limit]
    text = text.replace("\\", "\\\\").replace("$", r"\$")
    return " " + text if text.startswith("_") else text


def _xy(points: list[CurvePoint], x: str, y: str) -> tuple[list[float], list[float]]:
    xs, ys = [], []
    for p in points:
        vx = p.theta if x == "theta" else getattr(p, x)
        vy = getattr(p, y)
        if vx is not None and vy is not None:
            xs.append(vx)
            ys.append(vy)
    return xs, ys


def curves_svg(report: ThresholdReport, gold_counts: dict[str, int] | None = None) -> str:
    """The two-panel plot as SVG text (module docstring); ``gold_counts`` (attribute → pairs with a gold
    value) picks the attributes shown on the right, default: the longest curves."""
    import matplotlib.pyplot as plt  # deferred: matplotlib (~0.4 s), only the threshold plot needs it

    fig = curves_figure(report, gold_counts)
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)
    return buf.getvalue()


def curves_figure(report: ThresholdReport, gold_counts: dict[str, int] | None = None):  # type: ignore[no-untyped-def]
    """The matplotlib figure of :func:`curves_svg` (the caller closes it)."""
    import matplotlib  # deferred: ~0.4 s to import, and the Agg backend is chosen before pyplot loads

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # deferred with matplotlib (above), after the Agg backend is set

    plt.rcParams["svg.hashsalt"] = "groundtrace"  # stable ids in the SVG
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.4))
    for points, style, name in ((report.curve, "-", "extracted"), (report.curve_written, "--", "written")):
        for metric, color in (("precision", "#1f77b4"), ("coverage", "#d62728")):
            xs, ys = _xy(points, "theta", metric)
            if xs:
                left.step(
                    xs,
                    ys,
                    style,
                    where="post",
                    color=color,
                    label=f"{metric} ({name})",
                    linewidth=1.6 if name == "extracted" else 1.0,
                )
    left.axhline(report.target, color="#555", linewidth=0.8, linestyle=":")
    if report.overall.point is not None:
        left.axvline(report.overall.point.theta, color="#2ca02c", linewidth=0.8, linestyle=":")
    left.set_xlim(1.0, 0.0)  # θ falls from left to right: coverage grows along the axis
    left.set_ylim(0, 1.02)
    left.set_xlabel("threshold θ (candidate confidence)")
    left.set_title(f"overall; dotted: {report.target:.0%} precision and its θ", fontsize=10)
    left.legend(fontsize=8, loc="best", frameon=False)
    counts = gold_counts or {a: len(c) for a, c in report.per_attribute_curves.items()}
    shown = sorted(report.per_attribute_curves, key=lambda a: (-counts.get(a, 0), a))[:MAX_ATTRIBUTES]
    xs, ys = _xy(report.curve, "coverage", "precision")
    if xs:
        right.plot(xs, ys, color="black", linewidth=2, label="overall")
    for attribute in shown:
        xs, ys = _xy(report.per_attribute_curves[attribute], "coverage", "precision")
        if xs:
            right.plot(xs, ys, linewidth=1.2, marker=".", markersize=3, label=plot_label(attribute))
    right.axhline(report.target, color="#555", linewidth=0.8, linestyle=":")
    right.set_xlim(0, 1.0)
    right.set_ylim(0, 1.02)
    right.set_xlabel("coverage of gold values")
    right.set_ylabel("precision")
    right.set_title("precision vs coverage (lowering θ moves right)", fontsize=10)
    right.legend(fontsize=8, loc="lower left", frameon=False)
    for ax in (left, right):
        ax.spines[["top", "right"]].set_visible(False)
        ax.grid(alpha=0.3)
    return fig
