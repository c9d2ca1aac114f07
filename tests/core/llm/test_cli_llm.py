"""``groundtrace llm ask`` / ``llm usage`` end-to-end against a local WireServer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from groundtrace.cli import app
from groundtrace.core.llm.local import local_model_available
from groundtrace.core.llm.wire_server import Reply, scripted

runner = CliRunner()
LOCAL_AVAILABLE, LOCAL_WHY = local_model_available()
SCHEMA = {
    "title": "Pick",
    "type": "object",
    "properties": {"colour": {"type": "string"}},
    "required": ["colour"],
}


def _schema_file(tmp_path: Path) -> Path:
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(SCHEMA))
    return path


def test_ask_plain_text(serve, tmp_path: Path) -> None:
    server = serve(scripted(Reply(content="Blue [R1] <b>", prompt_tokens=5, completion_tokens=3)))
    result = runner.invoke(
        app,
        [
            "llm",
            "ask",
            "Name a colour",
            "--llm",
            f"{server.base_url}#tiny",
            "--cache-path",
            str(tmp_path / "c.sqlite"),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "Blue [R1] <b>" in result.stdout
    assert server.requests[0]["messages"] == [{"role": "user", "content": "Name a colour"}]


def test_ask_with_schema_json_output_and_cache(serve, tmp_path: Path) -> None:
    server = serve(scripted('{"colour": "red"}'))
    args = [
        "llm",
        "ask",
        "Pick",
        "--llm",
        f"{server.base_url}#tiny",
        "--json-schema",
        str(_schema_file(tmp_path)),
        "--cache-path",
        str(tmp_path / "c.sqlite"),
        "--json",
        "--system",
        "Be brief.",
    ]
    first = runner.invoke(app, args)
    assert first.exit_code == 0, first.output
    out = json.loads(first.stdout)
    assert out["parsed"] == {"colour": "red"} and out["cached"] is False and out["usage"]["calls"] == 1
    assert server.requests[0]["response_format"]["json_schema"]["name"] == "Pick"
    assert server.requests[0]["messages"][0] == {"role": "system", "content": "Be brief."}
    second = runner.invoke(app, args)
    assert json.loads(second.stdout)["cached"] is True and len(server.requests) == 1

    usage = runner.invoke(app, ["llm", "usage", "--cache-path", str(tmp_path / "c.sqlite"), "--json"])
    assert usage.exit_code == 0, usage.output
    stats = json.loads(usage.stdout)
    assert stats["entries"] == 1 and stats["hits"] == 1 and stats["by_model"]["tiny"]["entries"] == 1
    text = runner.invoke(app, ["llm", "usage", "--cache-path", str(tmp_path / "c.sqlite")])
    assert "entries: 1  hits: 1" in text.stdout and "tiny: 1 entries" in text.stdout


def test_ask_reports_schema_malformed(serve, tmp_path: Path) -> None:
    serve_ = serve(scripted('{"shade": 3}'))
    result = runner.invoke(
        app,
        [
            "llm",
            "ask",
            "Pick",
            "--llm",
            f"{serve_.base_url}#tiny",
            "--json-schema",
            str(_schema_file(tmp_path)),
            "--no-cache",
        ],
    )
    assert result.exit_code == 1
    assert "SCHEMA_MALFORMED" in result.stderr and '{"shade": 3}' in result.stderr
    assert len(serve_.requests) == 3  # first answer + 2 re-asks


def test_ask_without_configuration_exits_2() -> None:
    result = runner.invoke(app, ["llm", "ask", "hello", "--no-cache"])
    assert result.exit_code == 2 and "no LLM configured" in result.stderr


def test_unknown_spec_exits_2_with_suggestion() -> None:
    result = runner.invoke(app, ["llm", "ask", "hi", "--llm", "opneai", "--no-cache"])
    assert result.exit_code == 2 and "Did you mean 'openai'" in result.stderr


def test_bad_schema_file_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{\n  "type": "object",\n  oops\n}')
    result = runner.invoke(
        app, ["llm", "ask", "x", "--llm", "http://127.0.0.1:9/v1#m", "--json-schema", str(path)]
    )
    assert result.exit_code == 2 and "bad.json:3: not valid JSON" in result.stderr


def test_usage_on_empty_cache_does_not_create_it(tmp_path: Path) -> None:
    path = tmp_path / "none.sqlite"
    result = runner.invoke(app, ["llm", "usage", "--cache-path", str(path)])
    assert result.exit_code == 0 and "entries: 0" in result.stdout and not path.exists()


def test_llm_commands_have_help() -> None:
    for path, expected in (
        ([], "LLM client: ask a configured model"),
        (["ask"], "Send one prompt to an LLM"),
        (["usage"], "Print the response cache's statistics"),
    ):
        result = runner.invoke(app, ["llm", *path, "--help"])
        assert result.exit_code == 0, result.output
        assert expected in " ".join(result.stdout.split())
    assert "--json-schema" in runner.invoke(app, ["llm", "ask", "--help"]).stdout


@pytest.mark.slow  # real model: the bundled SmolLM2
@pytest.mark.model
@pytest.mark.skipif(not LOCAL_AVAILABLE, reason=f"bundled local model unavailable: {LOCAL_WHY}")
def test_ask_llm_local_gives_a_schema_valid_answer_end_to_end(tmp_path: Path) -> None:
    """``--llm local`` selects the bundled SmolLM2 through the factory; the answer validates."""
    import jsonschema

    args = [
        "llm",
        "ask",
        "Name one colour.",
        "--llm",
        "local",
        "--json-schema",
        str(_schema_file(tmp_path)),
        "--max-tokens",
        "48",
        "--cache-path",
        str(tmp_path / "c.sqlite"),
        "--json",
    ]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["model"] == "smollm2-135m-instruct" and not out["cached"]
    jsonschema.validate(out["parsed"], SCHEMA)
    assert out["parsed"]["colour"].strip()
    assert out["usage"]["completion_tokens"] > 0 and out["usage"]["cost_usd"] == 0.0


def test_schema_file_that_is_not_a_json_schema_exits_2_with_file_and_line(tmp_path: Path) -> None:
    """Valid JSON but not a valid JSON Schema: one error line naming file, line and place; exit 2."""
    path = tmp_path / "bad.json"
    path.write_text('{\n  "title": "x",\n  "properties": {\n    "a": {"type": "objekt"}\n  }\n}\n')
    result = runner.invoke(
        app, ["llm", "ask", "x", "--llm", "http://127.0.0.1:9/v1#m", "--json-schema", str(path)]
    )
    assert result.exit_code == 2, result.output
    assert "bad.json:4: invalid JSON Schema at /properties/a/type" in result.stderr
    assert "'objekt'" in result.stderr and "Traceback" not in result.output


def test_openai_without_key_or_base_url_is_a_configuration_error() -> None:
    result = runner.invoke(app, ["llm", "ask", "hi", "--llm", "openai:gpt-4o-mini", "--no-cache"])
    assert result.exit_code == 2, result.output
    assert "no API key for the OpenAI endpoint" in result.stderr


def test_unpriced_model_cost_is_unknown_not_free(serve, tmp_path: Path) -> None:
    server = serve(scripted(Reply(content="Blue", prompt_tokens=5, completion_tokens=3)))
    args = ["llm", "ask", "Name a colour", "--llm", f"{server.base_url}#tiny", "--no-cache"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "cost unknown (model not in the price table)" in result.stderr and "$0.0" not in result.stderr
    as_json = runner.invoke(app, [*args, "--json"])
    assert json.loads(as_json.stdout)["cost_known"] is False


def test_priced_model_shows_its_cost(serve, tmp_path: Path) -> None:
    prices = tmp_path / "prices.yaml"
    prices.write_text('prices:\n  - pattern: "tiny*"\n    input: 2.0\n    output: 8.0\n')
    server = serve(scripted(Reply(content="Blue", prompt_tokens=500, completion_tokens=250)))
    args = ["llm", "ask", "Name a colour", "--llm", f"{server.base_url}#tiny", "--no-cache"]
    result = runner.invoke(app, args, env={"GROUNDTRACE_LLM_PRICES": str(prices)})
    assert result.exit_code == 0, result.output
    # 500 * 2 / 1e6 + 250 * 8 / 1e6 = 0.003
    assert "$0.003000" in result.stderr and "cost unknown" not in result.stderr


@pytest.mark.parametrize(
    ("content", "expected", "absent"),
    [
        (
            [{"type": "image_url", "image_url": {"url": "data:image/png;base64,!!"}}],
            "content.list.0.image_url.image_url.url",
            "valid string",
        ),
        ([{"type": "audio", "data": "x"}], "'audio'", "valid string"),
        ([], "at least 1 item", "valid string"),
        (5, "content must be a string or a non-empty list of content parts", "valid list"),
    ],
)
def test_bad_content_reports_only_the_branch_it_is(content: object, expected: str, absent: str) -> None:
    """A list is reported as a bad part list, not also as "Input should be a valid string"
    (base.ChatMessage)."""
    from groundtrace.core.llm.engine import normalise_messages

    with pytest.raises(ValueError, match="messages\\[0\\] is not a chat message") as info:
        normalise_messages([{"role": "user", "content": content}])
    text = str(info.value)
    assert "1 validation error" in text and expected in text and absent not in text


def test_missing_local_model_file_is_a_configuration_error(tmp_path: Path) -> None:
    """``local:PATH`` to no GGUF (or no xllamacpp): LocalModelUnavailable, found at the first call, exits
    2."""
    missing = tmp_path / "none.gguf"
    result = runner.invoke(app, ["llm", "ask", "hi", "--llm", f"local:{missing}", "--no-cache"])
    assert result.exit_code == 2, result.output
    assert "GGUF model file not found" in result.stderr or "xllamacpp" in result.stderr
