"""textio: line-by-line UTF-8 reading where one bad line costs that line only (plain and CSV)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groundtrace.core.files.text import CsvLines, iter_csv, iter_lines, utf8_error_message

BAD = "not valid UTF-8: invalid start byte (byte 0xff at byte offset 0 of the line)"


def _write(tmp_path: Path, data: bytes, name: str = "f.txt") -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def test_bad_line_is_reported_and_the_others_read(tmp_path: Path) -> None:
    path = _write(tmp_path, b'{"a": 1}\n\xff\xfe{"b": 2}\n{"c": "\xc3\xa9"}\n')
    assert list(iter_lines(path)) == [(1, '{"a": 1}\n', None), (2, None, BAD), (3, '{"c": "é"}\n', None)]


def test_message_names_byte_and_offset() -> None:
    raw = b"caf\xc3"  # a truncated two-byte sequence at offset 3
    with pytest.raises(UnicodeDecodeError) as info:
        raw.decode("utf-8")
    assert utf8_error_message(raw, info.value) == (
        "not valid UTF-8: unexpected end of data (byte 0xc3 at byte offset 3 of the line)"
    )


def test_bom_dropped_only_at_start_and_line_endings_kept(tmp_path: Path) -> None:
    path = _write(tmp_path, b"\xef\xbb\xbfa\r\nb\rc\n\xef\xbb\xbfd")
    # \r\n, a lone \r and \n all end a line (as in Python's text mode); a BOM later in the file is text
    assert [text for _, text, _ in iter_lines(path)] == ["a\r\n", "b\r", "c\n", "\ufeffd"]


# -- property: any bytes are read without raising; every valid line round-trips ------------------------------
@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_any_bytes_never_raise_and_valid_files_round_trip(data: bytes) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "f"
        path.write_bytes(data)
        rows = list(iter_lines(path))
    assert [n for n, _, _ in rows] == list(range(1, len(rows) + 1))
    assert all((text is None) != (error is None) for _, text, error in rows)
    assert all(error.startswith("not valid UTF-8: ") for _, _, error in rows if error is not None)
    body = data[3:] if data.startswith(b"\xef\xbb\xbf") else data
    try:
        decoded = body.decode("utf-8")
    except UnicodeDecodeError:
        return
    assert "".join(text or "" for _, text, _ in rows) == decoded


_LINE = st.one_of(
    st.text(alphabet=st.characters(blacklist_characters="\r\n", blacklist_categories=("Cs",)), max_size=20),
    st.binary(max_size=20).filter(lambda b: b"\r" not in b and b"\n" not in b),
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(_LINE, max_size=10))
def test_each_line_is_read_or_reported_on_its_own(tmp_path: Path, lines: list[str | bytes]) -> None:
    raws = [line.encode("utf-8") if isinstance(line, str) else line for line in lines]
    if raws and raws[0].startswith(b"\xef\xbb\xbf"):
        raws[0] = b"x" + raws[0]
    path = _write(tmp_path, b"".join(raw + b"\n" for raw in raws))
    rows = list(iter_lines(path))
    assert len(rows) == len(raws)
    for (number, text, error), raw in zip(rows, raws, strict=True):
        try:
            expected = raw.decode("utf-8") + "\n"
        except UnicodeDecodeError:
            assert text is None and error is not None and error.startswith("not valid UTF-8")
        else:
            assert (text, error) == (expected, None), number


# -- CSV -----------------------------------------------------------------------------------------------------
def test_csv_bad_line_dropped_records_keep_their_file_line(tmp_path: Path) -> None:
    path = _write(tmp_path, b'id,note\n1,"two\nlines"\n\xff,x\n2,plain\n\n3,"\xc3\xa9"\n', "f.csv")
    assert list(iter_csv(path)) == [
        (1, ["id", "note"], None),
        (2, ["1", "two\nlines"], None),
        (4, None, BAD),
        (5, ["2", "plain"], None),
        (7, ["3", "é"], None),
    ]


def test_csv_record_with_a_bad_line_inside_a_quoted_field_is_skipped(tmp_path: Path) -> None:
    path = _write(tmp_path, b'id,note\n1,"start\n\xff middle\nend"\n2,next\n', "f.csv")
    assert list(iter_csv(path)) == [
        (1, ["id", "note"], None),
        (2, None, "record on lines 2-4 has a line that is not valid UTF-8; record skipped"),
        (3, None, BAD),
        (5, ["2", "next"], None),
    ]


def test_csv_bad_header_stops_with_a_clear_problem(tmp_path: Path) -> None:
    path = _write(tmp_path, b"\xff,id\n1,a\n", "f.csv")
    assert list(iter_csv(path)) == [
        (1, None, BAD),
        (1, None, "no header: a line before or in it is not valid UTF-8, so the file is not read"),
    ]
    assert list(iter_csv(path, header=False)) == [(1, None, BAD), (2, ["1", "a"], None)]


def test_csv_lines_map_counts_back_to_file_lines(tmp_path: Path) -> None:
    lines = CsvLines(_write(tmp_path, b"a\n\xff\n\xfe\nb\nc\n\xff\nd\n"))
    assert list(lines) == ["a\n", "b\n", "c\n", "d\n"]
    assert [lines.file_line(k) for k in (1, 2, 3, 4)] == [1, 4, 5, 7]
    assert [n for n, _ in lines.take_errors()] == [2, 3, 6] and lines.errors == []
    assert lines.dropped_within(1, 2) and not lines.dropped_within(2, 3) and lines.dropped_within(3, 4)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.booleans(), st.text(alphabet="abc,", max_size=6)), max_size=8))
def test_csv_good_records_keep_line_numbers_whatever_is_dropped(
    tmp_path: Path, lines: list[tuple[bool, str]]
) -> None:
    raws = [(b"\xff" if bad else b"") + text.encode() for bad, text in lines]
    path = _write(tmp_path, b"".join(raw + b"\n" for raw in raws), "f.csv")
    got = list(iter_csv(path, header=False))
    expected = [
        (n, text.split(","), None) if not bad else (n, None, BAD)
        for n, (bad, text) in enumerate(lines, start=1)
        if bad or text
    ]
    assert got == expected
