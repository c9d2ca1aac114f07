"""Progress of long commands: a rich bar with rate and ETA on a terminal, heartbeat lines otherwise.

:func:`track` is used by every long command: ``crs kb build``, ``crs build``, ``crs run`` (also
``--config``), ``crs score``, ``crs leaderboard``, ``crs simulate``, ``crs import-release``, ``crs hydrate``,
``catalog enrich``, ``catalog train`` and ``nli-eval``. On a terminal it shows
``label ━━━━ done/total · rate/s · elapsed · ETA`` (``unit="bytes"``: sizes and MB/s). When stderr is not a
terminal (a pipe, a log file, CI) it prints one plain line to stderr at most every ``interval`` seconds
(``GROUNDTRACE_HEARTBEAT_S``, default 30; ``0`` prints at every update) and once at the end:

``[heartbeat] crs run random · closed: 12/40 dialogues (30%) · 2.10/s · elapsed 0:00:06 · ETA 0:00:13``

With ``unit="bytes"`` the counts are written in MB (``1234.5/5341.9 MB (23%) · 45.12 MB/s``).
Rate = done since start / elapsed; ETA = (total − done) / rate (``?`` while the rate or the total is not
known). A background thread repeats the last line when no update arrives within ``interval`` (a slow LLM
call still shows that the job is alive). Once the count is complete the rate is the one at completion,
and the repeated lines end ``· finishing`` (a report or a KB is still being written). The label is
escaped text, never markup.
"""

from __future__ import annotations

import math
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Self, TextIO

HEARTBEAT_ENV = "GROUNDTRACE_HEARTBEAT_S"
DEFAULT_INTERVAL_S = 30.0


def heartbeat_interval() -> float:
    """Seconds between heartbeat lines: ``$GROUNDTRACE_HEARTBEAT_S`` (a number >= 0), else 30."""
    raw = os.environ.get(HEARTBEAT_ENV, "")
    try:
        value = float(raw)
    except ValueError:
        return DEFAULT_INTERVAL_S
    return value if value >= 0 and math.isfinite(value) else DEFAULT_INTERVAL_S  # NaN → default


def clock_text(seconds: float) -> str:
    """``H:MM:SS`` for a duration in seconds (negative → 0)."""
    whole = max(0, int(seconds))
    return f"{whole // 3600}:{whole % 3600 // 60:02d}:{whole % 60:02d}"


def heartbeat_line(
    label: str, unit: str, done: int, total: int | None, elapsed: float, rate_over: float | None = None
) -> str:
    """One heartbeat line (module docstring): counts, share, rate, elapsed and ETA; the rate is
    ``done / rate_over`` (default: ``elapsed``)."""
    span = elapsed if rate_over is None else rate_over
    rate = done / span if span > 0 and done > 0 else None
    if unit == "bytes":  # megabytes: a Yelp review file is ~5e9 bytes
        count = f"{done / 1e6:.1f}/{total / 1e6:.1f}" if total is not None else f"{done / 1e6:.1f}"
        unit = "MB"
        rate_text = f"{rate / 1e6:.2f} MB/s" if rate is not None else "? MB/s"
    else:
        count = f"{done}/{total}" if total is not None else f"{done}"
        rate_text = f"{rate:.2f}/s" if rate is not None else "?/s"
    share = f" ({100 * done / total:.0f}%)" if total else ""
    if total is not None and done >= total:
        eta = "0:00:00"
    elif rate is not None and total is not None:
        eta = clock_text((total - done) / rate)
    else:
        eta = "?"
    timing = f"{rate_text} · elapsed {clock_text(elapsed)} · ETA {eta}"
    return f"[heartbeat] {label}: {count} {unit}{share} · {timing}"


class Heartbeat:
    """Heartbeat lines to ``stream`` (module docstring); ``clock`` is injectable for tests."""

    def __init__(
        self,
        label: str,
        unit: str,
        total: int | None,
        stream: TextIO,
        interval: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.label, self.unit, self.total = label, unit, total
        self.stream, self.interval, self.clock = stream, interval, clock
        self.done = 0
        self.start = clock()
        self.counted_at: float | None = None  # when done first reached the total
        self.last_print: float | None = None
        self.printed_done: int | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def update(self, done: int | None = None, total: int | None = None, advance: int = 0) -> None:
        """Set (``done``) or advance the count, maybe the total; print when ``interval`` has passed."""
        with self._lock:
            if total is not None:
                self.total = total
            self.done = done if done is not None else self.done + advance
            now = self.clock()
            if self.total is not None and self.done >= self.total and self.counted_at is None:
                self.counted_at = now
            if self.last_print is None or now - self.last_print >= self.interval:
                self._emit(now)

    def _emit(self, now: float, repeat: bool = False) -> None:
        """Print the line. Once the count is complete the rate stays the one at completion, and a line the
        background thread repeats while the command still works (a report, a KB) ends ``· finishing``."""
        self.last_print, self.printed_done = now, self.done
        counted = self.counted_at
        rate_over = None if counted is None else counted - self.start
        line = heartbeat_line(self.label, self.unit, self.done, self.total, now - self.start, rate_over)
        if repeat and counted is not None:
            line += " · finishing"
        print(line, file=self.stream, flush=True)

    def _beat(self) -> None:
        while not self._stop.wait(self.interval):
            with self._lock:
                now = self.clock()
                if self.last_print is None or now - self.last_print >= self.interval:
                    self._emit(now, repeat=True)

    def __enter__(self) -> Self:
        if self.interval > 0:
            self._thread = threading.Thread(target=self._beat, name="heartbeat", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        with self._lock:
            if self.printed_done != self.done:  # the final count, unless the last line already says it
                self._emit(self.clock())


def throttled(update: Callable[..., None], steps: int = 1000) -> Callable[[int, int], None]:
    """``progress(done, total)`` forwarding to ``update(done=, total=)`` only at the start, about every
    ``total / steps`` items and at the end (a per-turn callback stays cheap on a terminal bar)."""
    last = [-1]

    def progress(done: int, total: int) -> None:
        step = max(1, total // steps)
        if done in (0, total) or done - last[0] >= step:
            last[0] = done
            update(done=done, total=total)

    return progress


class _Bar:
    """The terminal display: a rich progress bar with rate and ETA."""

    def __init__(self, progress: Any, task: Any) -> None:
        self.progress, self.task = progress, task

    def update(self, done: int | None = None, total: int | None = None, advance: int = 0) -> None:
        kwargs: dict[str, Any] = {"total": total} if total is not None else {}
        if done is not None:
            kwargs["completed"] = done
        else:
            kwargs["advance"] = advance
        self.progress.update(self.task, **kwargs)
        speed = self.progress.tasks[0].speed
        self.progress.update(self.task, rate=f"{speed:.2f}/s" if speed else "")


class _Silent:
    def update(self, done: int | None = None, total: int | None = None, advance: int = 0) -> None:
        return None


@contextmanager
def track(
    label: str,
    *,
    total: int | None = None,
    unit: str = "items",
    disable: bool = False,
    stream: TextIO | None = None,
    terminal: bool | None = None,
) -> Iterator[Heartbeat | _Bar | _Silent]:
    """Yield an object with ``update(done=None, total=None, advance=0)`` (module docstring).

    ``stream`` defaults to stderr; ``terminal`` (default: ``stream.isatty()``) chooses the bar or the
    heartbeat lines; ``disable`` shows nothing.
    """
    out = stream if stream is not None else sys.stderr
    if disable:
        yield _Silent()
        return
    is_terminal = terminal if terminal is not None else bool(getattr(out, "isatty", lambda: False)())
    if not is_terminal:
        with Heartbeat(label, unit, total, out, heartbeat_interval()) as beat:
            yield beat
        return
    from rich.console import Console
    from rich.markup import escape
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )

    counts: tuple[Any, ...] = (
        (DownloadColumn(), TransferSpeedColumn())
        if unit == "bytes"
        else (MofNCompleteColumn(), TextColumn(escape(unit)), TextColumn("{task.fields[rate]}"))
    )
    with Progress(
        TextColumn(escape(label)),
        BarColumn(),
        *counts,
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=Console(file=out),
        transient=True,
    ) as progress:
        yield _Bar(progress, progress.add_task(label, total=total, rate=""))
