"""The shared YAML loader: safe (no aliases, duplicate keys, size and depth limits) with file:line errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, Field

from groundtrace.core.files.yaml_loader import (
    YamlError,
    load_yaml_model,
    parse_yaml,
    read_yaml,
)


class Rule(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    weight: float = Field(default=1.0, ge=0)


class Config(BaseModel):
    model_config = ConfigDict(extra="forbid")
    title: str
    threshold: float = 0.5
    rules: list[Rule] = []


def _file(tmp_path: Path, text: str | bytes) -> Path:
    path = tmp_path / "conf.yaml"
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


def test_valid_file_loads(tmp_path: Path) -> None:
    path = _file(tmp_path, "title: t\nrules:\n  - name: a\n  - {name: b, weight: 2}\n")
    assert load_yaml_model(path, Config) == Config(
        title="t", rules=[Rule(name="a"), Rule(name="b", weight=2)]
    )


def test_validation_errors_name_the_line_of_the_key(tmp_path: Path) -> None:
    path = _file(tmp_path, "title: t\nthreshold: high\nrules:\n  - name: a\n  - name: b\n    weight: -1\n")
    with pytest.raises(YamlError) as info:
        load_yaml_model(path, Config)
    assert [str(e) for e in info.value.errors] == [
        f"{path}:2: threshold: Input should be a valid number, unable to parse string as a number",
        f"{path}:6: rules.1.weight: Input should be greater than or equal to 0",
    ]


def test_unknown_key_suggests_the_known_one(tmp_path: Path) -> None:
    path = _file(tmp_path, "title: t\nrules:\n  - name: a\n    wieght: 2\nzzz: 1\n")
    with pytest.raises(YamlError) as info:
        load_yaml_model(path, Config)
    lines = str(info.value).splitlines()
    assert lines[0] == f"{path}:4: rules.0.wieght: unknown key (did you mean 'weight'?)"
    assert lines[1] == f"{path}:5: zzz: unknown key; known keys: title, threshold, rules"


def test_missing_field_points_at_its_mapping(tmp_path: Path) -> None:
    path = _file(tmp_path, "# comment\nthreshold: 0.2\n")
    with pytest.raises(YamlError, match=rf"^{path}:2: title: Field required$"):
        load_yaml_model(path, Config)


def test_error_limit_counts_the_rest(tmp_path: Path) -> None:
    path = _file(tmp_path, "a: 1\nb: 2\nc: 3\nd: 4\ntitle: t\n")
    with pytest.raises(YamlError) as info:
        load_yaml_model(path, Config, limit=2)
    assert len(info.value.errors) == 2 and info.value.errors[-1].message.endswith("(+2 more)")


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("a: &x [1, 2]\nb: *x\n", 1, "YAML anchor &x is not allowed"),
        ("a: 1\nb: *x\n", 2, "YAML alias *x is not allowed"),
        ("title: a\nthreshold: 1\ntitle: b\n", 3, "duplicate key 'title' (first at line 1)"),
        ("r:\n  - {k: 1, k: 2}\n", 2, "duplicate key 'k' (first at line 2)"),
        ("a: [1, 2\n", 2, "invalid YAML"),
        ("a: 1\n---\nb: 2\n", 2, "invalid YAML"),
        ("a: !!python/object:os.system {}\n", 1, "invalid YAML"),
    ],
)
def test_refused_yaml(text: str, line: int, message: str) -> None:
    with pytest.raises(YamlError) as info:
        parse_yaml(text, "f.yaml")
    (error,) = info.value.errors
    assert error.file == "f.yaml" and error.line == line and error.message.startswith(message)


def test_alias_bomb_is_refused_without_expanding() -> None:
    bomb = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n' + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [{','.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8)
    )
    with pytest.raises(YamlError, match="anchor &a is not allowed"):
        parse_yaml(bomb, "bomb.yaml")


def test_deep_nesting_is_an_error_not_recursion_error() -> None:
    with pytest.raises(YamlError, match="nested deeper than 64 levels"):
        parse_yaml("[" * 5000 + "]" * 5000, "deep.yaml")
    assert parse_yaml("[" * 10 + "]" * 10).data == [[[[[[[[[[]]]]]]]]]]


def test_file_limits(tmp_path: Path) -> None:
    big = _file(tmp_path, "a: " + "x" * 2000 + "\n")
    with pytest.raises(YamlError, match=r":1: file is \d+ bytes, over the 1000-byte limit"):
        read_yaml(big, max_bytes=1000)
    bad = _file(tmp_path, b"a: 1\nb: \xff\n")
    with pytest.raises(YamlError, match=r"conf.yaml:2: not valid UTF-8"):
        read_yaml(bad)
    with pytest.raises(YamlError, match="missing.yaml: file not found"):
        read_yaml(tmp_path / "missing.yaml")


def test_empty_and_non_mapping_documents(tmp_path: Path) -> None:
    empty = _file(tmp_path, "# nothing\n")
    assert load_yaml_model(empty, Rule, empty={"name": "n"}) == Rule(name="n")
    with pytest.raises(YamlError, match="expected a mapping, got an empty document"):
        load_yaml_model(empty, Rule)
    listed = _file(tmp_path, "- a\n")
    with pytest.raises(YamlError, match=r"conf.yaml:1: expected a mapping, got a list"):
        load_yaml_model(listed, Rule)


def test_line_of_paths() -> None:
    doc = parse_yaml("a:\n  b:\n    - x\n    - y\nc: 1\n")
    assert doc.line_of(("a", "b", 1)) == 4
    assert doc.line_of(("c",)) == 5
    assert doc.line_of(("a", "missing")) == 1
    assert doc.line_of(("a", "b", 9)) == 2


_keys = st.text(alphabet="abcdefgh", min_size=1, max_size=4)
_scalars = st.none() | st.booleans() | st.integers() | st.text(alphabet="xyz 0", max_size=5)
_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_keys, inner, max_size=3),
    max_leaves=15,
)


@settings(max_examples=60, deadline=None)
@given(_values)
def test_safe_dump_round_trips(value: object) -> None:
    import yaml

    assert parse_yaml(yaml.safe_dump(value)).data == value
