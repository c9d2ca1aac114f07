"""Read UTF-8 text files line by line, so that one undecodable line costs that line and nothing more.

Opening a file in text mode (``open(path, encoding="utf-8")``) fails the whole read at the first byte that is
not UTF-8. The readers here read bytes and decode each line on its own:

* :func:`iter_lines` yields ``(line number, text, None)`` for a good line and ``(line number, None, message)``
  for a line that is not valid UTF-8; the message is :func:`utf8_error_message`'s
  ``not valid UTF-8: <reason> (byte 0xff at byte offset N of the line)``.
* :class:`CsvLines` feeds the good lines to :mod:`csv` (which needs text), collects the bad ones as
  ``(line number, message)`` and maps csv's line counts back to line numbers of the file;
  :func:`iter_csv` uses it to yield CSV records and problems, each with the file line it starts on.

Lines end at ``\\n``, ``\\r\\n`` or a lone ``\\r`` — the same lines Python's text mode gives — and keep their
line ending (so a quoted CSV field spanning lines keeps its newlines). A UTF-8 byte-order mark opening the
file is dropped. Line numbers are 1-based.
"""

from __future__ import annotations

import csv
import re
from bisect import bisect_left
from collections.abc import Iterator
from os import PathLike
from typing import Any, BinaryIO

BOM = b"\xef\xbb\xbf"
#: one line of a ``\n``-split chunk that holds a lone ``\r``: text up to and including its line ending
_SEGMENT = re.compile(rb"[^\r\n]*(?:\r\n?|\n)|[^\r\n]+")


def utf8_error_message(raw: bytes, exc: UnicodeDecodeError) -> str:
    """``not valid UTF-8: <reason> (byte 0xff at byte offset 0 of the line)`` for a line that failed to
    decode — one wording for every line reader."""
    return (
        f"not valid UTF-8: {exc.reason} (byte 0x{raw[exc.start]:02x} at byte offset {exc.start} of the line)"
    )


def _raw_lines(handle: BinaryIO) -> Iterator[bytes]:
    for chunk in handle:  # split at b"\n"; a lone b"\r" inside a chunk also ends a line
        body = chunk[:-2] if chunk.endswith(b"\r\n") else chunk[:-1] if chunk.endswith(b"\n") else chunk
        if b"\r" in body:
            yield from _SEGMENT.findall(chunk)
        else:
            yield chunk


def iter_lines(path: str | PathLike[str]) -> Iterator[tuple[int, str | None, str | None]]:
    """``(number, text, None)`` for each line of ``path`` that is valid UTF-8, ``(number, None, message)``
    for each one that is not; never raises for the file's content (a missing file raises ``OSError``).

    ``text`` keeps its line ending; a UTF-8 byte-order mark opening the file is dropped.
    """
    with open(path, "rb") as handle:
        for number, raw in enumerate(_raw_lines(handle), start=1):
            if number == 1 and raw.startswith(BOM):
                raw = raw[len(BOM) :]
            try:
                yield number, raw.decode("utf-8"), None
            except UnicodeDecodeError as exc:
                yield number, None, utf8_error_message(raw, exc)


class CsvLines:
    """The valid lines of a file, for ``csv.reader(CsvLines(path))``; invalid lines are dropped and kept in
    :attr:`errors` as ``(line number, message)``.

    csv counts the lines it was given (``reader.line_num``); :meth:`file_line` turns such a count into the
    line number in the file, and :meth:`dropped_within` tells whether a record read from given lines
    ``first..last`` had a line dropped from its middle (a quoted field spanning a bad line: the record is
    incomplete). Memory grows with the number of bad lines only.
    """

    def __init__(self, path: str | PathLike[str]) -> None:
        self.path = path
        self.errors: list[tuple[int, str]] = []
        self._given = 0
        self._drops: list[int] = []  # for each dropped line: how many lines had been given before it

    def __iter__(self) -> Iterator[str]:
        for number, text, error in iter_lines(self.path):
            if text is None:
                self._drops.append(self._given)
                self.errors.append((number, error or ""))
                continue
            self._given += 1
            yield text

    def take_errors(self) -> list[tuple[int, str]]:
        """The errors collected since the last call (in file order), removed from :attr:`errors`."""
        taken, self.errors = self.errors, []
        return taken

    def file_line(self, given: int) -> int:
        """File line number of the ``given``-th line handed out (1-based, as csv's ``line_num``)."""
        return given + bisect_left(self._drops, given)

    def dropped_within(self, first: int, last: int) -> bool:
        """Whether a bad line was dropped between given lines ``first`` and ``last`` (both 1-based)."""
        i = bisect_left(self._drops, first)
        return i < len(self._drops) and self._drops[i] < last


def iter_csv(
    path: str | PathLike[str], *, header: bool = True, **fmtparams: Any
) -> Iterator[tuple[int, list[str] | None, str | None]]:
    """``(line, row, None)`` per CSV record and ``(line, None, problem)`` per problem, in file order; ``line``
    is the file line a record starts on. ``fmtparams`` go to :func:`csv.reader`; blank lines are skipped.

    Problems: a line that is not valid UTF-8 (dropped; the records around it are read), and a record that
    had such a line in its middle (a quoted field spanning it: the record is incomplete and not yielded).
    With ``header``, the first record is the header: when a line before or in it is not valid UTF-8 the
    header is unknown, so after the problems nothing more is yielded (the caller sees no header row).
    """
    lines = CsvLines(path)
    reader = csv.reader(lines, **fmtparams)
    given = 0  # lines handed to csv before the current record
    first_bad: int | None = None  # the first bad line, while no header has been read
    in_header = header
    while True:
        row = next(reader, None)
        bad = lines.take_errors()  # bad lines met while csv read this record (before it, or inside it)
        if row is None:
            for number, message in bad:
                yield number, None, message
            return
        start, end = lines.file_line(given + 1), lines.file_line(reader.line_num)
        spans = lines.dropped_within(given + 1, reader.line_num)
        given = reader.line_num
        if in_header and bad and first_bad is None:
            first_bad = bad[0][0]
        if in_header and row and first_bad is not None:
            yield from ((number, None, message) for number, message in bad)
            yield (
                first_bad,
                None,
                "no header: a line before or in it is not valid UTF-8, so the file is not read",
            )
            return
        yield from ((number, None, message) for number, message in bad if number < start)
        if spans:
            yield (
                start,
                None,
                f"record on lines {start}-{end} has a line that is not valid UTF-8; record skipped",
            )
        elif row:
            in_header = False
            yield start, row, None
        yield from ((number, None, message) for number, message in bad if number > start)
