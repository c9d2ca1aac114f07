"""When a finished run counts as failed: too many failed turns, or nothing produced (``crs run``/``score``).

Contract: with ``n`` the recommendation turns of the selected dialogues and ``f`` the unscorable ones
(an errored turn — the system raised, timed out, answered invalidly or over a size limit — or a turn
without a prediction), :func:`run_problem` returns a one-line reason when

* ``n == 0`` — the selection holds no recommendation turn (nothing to run or score);
* ``f == n`` — no turn produced a scorable answer (whatever the threshold);
* ``f / n > max_failed_share`` — more turns failed than allowed (default :data:`DEFAULT_MAX_FAILED_SHARE`
  = 0.05, the CLI's ``--max-failed-share``);

and ``None`` otherwise. The CLI prints the reason through ``print_error`` and exits 1 (a run-time failure);
``scores.json`` and ``run.json`` are written either way, so the failed turns can be inspected and retried
(``crs run --retry-errors``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

DEFAULT_MAX_FAILED_SHARE = 0.05


def check_share(value: float) -> float:
    """``value`` when it is a share in [0, 1]; ``ValueError`` otherwise (NaN included)."""
    if not (isinstance(value, int | float) and math.isfinite(value) and 0.0 <= value <= 1.0):
        raise ValueError(f"the failed-turn share must be a number in [0, 1], got {value!r}")
    return float(value)


def run_problem(info: Mapping[str, Any], max_failed_share: float = DEFAULT_MAX_FAILED_SHARE) -> str | None:
    """The reason the run in ``info`` (a ``run.json`` dict with ``counts``) failed, or ``None``."""
    limit = check_share(max_failed_share)
    counts = info.get("counts", {})
    n = int(counts.get("turns", 0))
    failed = int(counts.get("unscorable_turns", 0))
    if n == 0:
        return "the run produced nothing: the selected dialogues have no recommendation turn"
    first = next(iter(info.get("errors") or []), None)
    example = (
        f"; first error: {first['dialogue_id']}/{first['turn_index']}: {first['error']}"
        if isinstance(first, Mapping) and {"dialogue_id", "turn_index", "error"} <= set(first)
        else ""
    )
    if failed == n:
        return f"the run produced nothing: all {n} turns failed{example}"
    if failed / n > limit:
        return f"{failed} of {n} turns failed ({failed / n:.1%} > --max-failed-share {limit:g}){example}"
    return None
