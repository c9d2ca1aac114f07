"""``groundtrace llm``: ask the configured LLM one question, show the response cache's statistics."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from groundtrace.cli.apps import app
from groundtrace.cli.console import print_error
from groundtrace.core.llm.factory import LLM_OPTION_HELP

llm_app = typer.Typer(
    help="LLM client: ask a configured model (local or OpenAI-compatible), inspect the response cache.",
    no_args_is_help=True,
)
app.add_typer(llm_app, name="llm")

_CACHE_HELP = (
    "SQLite response cache (default: $GROUNDTRACE_CACHE_DIR/llm.sqlite or ~/.cache/groundtrace/llm.sqlite)."
)


@llm_app.command("ask")
def ask(
    prompt: Annotated[str, typer.Argument(help="The user message to send.")],
    llm: Annotated[str | None, typer.Option("--llm", help=LLM_OPTION_HELP, envvar="GROUNDTRACE_LLM")] = None,
    json_schema: Annotated[
        Path | None,
        typer.Option(
            "--json-schema",
            exists=True,
            dir_okay=False,
            help="JSON Schema file: the answer must be one JSON object valid against it "
            "(re-asked, then refused).",
        ),
    ] = None,
    system: Annotated[str | None, typer.Option("--system", help="Optional system message.")] = None,
    max_tokens: Annotated[
        int | None, typer.Option("--max-tokens", min=1, help="Limit on answer tokens.")
    ] = None,
    temperature: Annotated[
        float, typer.Option("--temperature", min=0.0, help="Sampling temperature (0 = greedy).")
    ] = 0.0,
    seed: Annotated[
        int | None, typer.Option("--seed", help="Sampling seed (makes temperature > 0 cacheable).")
    ] = None,
    cache_path: Annotated[Path | None, typer.Option("--cache-path", help=_CACHE_HELP)] = None,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Neither read nor write the response cache.")
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print text, parsed object, usage and cache flag as JSON.")
    ] = False,
) -> None:
    """Send one prompt to an LLM and print its answer (validated JSON when --json-schema is given)."""
    from groundtrace.core.llm.base import LLMError, SchemaMalformedError
    from groundtrace.core.llm.factory import make_llm

    schema = _load_schema(json_schema) if json_schema is not None else None
    messages = ([{"role": "system", "content": system}] if system else []) + [
        {"role": "user", "content": prompt}
    ]
    try:
        # Building the client only reads configuration (spec, model, key, base URL): its failures are
        # configuration errors (exit 2), unlike failures of the call itself (exit 1).
        client = make_llm(llm, cache_path=cache_path, no_cache=no_cache)
    except (LLMError, ImportError) as exc:
        print_error(exc)
        raise typer.Exit(2) from exc
    try:
        completion = client.complete(
            messages, schema, temperature=temperature, max_tokens=max_tokens, seed=seed
        )
    except SchemaMalformedError as exc:
        print_error(f"SCHEMA_MALFORMED: {exc}")
        typer.echo(f"last answer: {exc.raw_text}", err=True)
        raise typer.Exit(1) from exc
    except ImportError as exc:  # e.g. LocalModelUnavailable: xllamacpp or the GGUF file is missing
        print_error(exc)
        raise typer.Exit(2) from exc
    except LLMError as exc:
        print_error(exc)
        raise typer.Exit(1) from exc
    usage = completion.usage
    ledger = getattr(client, "ledger", None)
    cost_known = ledger is None or completion.model not in ledger.unpriced_models
    if as_json:
        out = {
            "model": completion.model,
            "text": completion.text,
            "parsed": completion.parsed,
            "cached": completion.cached,
            "finish_reason": completion.finish_reason,
            "usage": usage.model_dump(),
            "cost_known": cost_known,
        }
        typer.echo(json.dumps(out, ensure_ascii=False, indent=2))
        return
    typer.echo(
        json.dumps(completion.parsed, ensure_ascii=False, indent=2) if schema is not None else completion.text
    )
    cost = f"${usage.cost_usd:.6f}" if cost_known else "cost unknown (model not in the price table)"
    typer.echo(
        f"[{completion.model}] {'cache hit' if completion.cached else f'{usage.calls} call(s)'}, "
        f"{usage.prompt_tokens}+{usage.completion_tokens} tokens, {usage.retries} retries, "
        f"{usage.reasks} re-asks, {cost}",
        err=True,
    )


def _load_schema(path: Path) -> dict[str, Any]:
    """The JSON Schema in ``path``, checked against its metaschema; a bad file is a usage error (exit 2)."""
    import jsonschema

    text = path.read_text(encoding="utf-8")
    try:
        schema = json.loads(text)
    except json.JSONDecodeError as exc:
        print_error(f"{path}:{exc.lineno}: not valid JSON: {exc.msg}")
        raise typer.Exit(2) from exc
    if not isinstance(schema, dict):
        print_error(f"{path}:1: a JSON Schema must be an object")
        raise typer.Exit(2)
    validator = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        validator.check_schema(schema)
    except jsonschema.SchemaError as exc:
        where = "/" + "/".join(str(p) for p in exc.path)
        line = _json_line(text, list(exc.path))
        print_error(f"{path}{f':{line}' if line else ''}: invalid JSON Schema at {where}: {exc.message}")
        raise typer.Exit(2) from exc
    return schema


def _json_line(text: str, path: list[Any]) -> int | None:
    """1-based line of the key or item at ``path`` (keys and indices) in the JSON ``text``; ``None`` if
    unknown. JSON is read as YAML (``core.files.yaml_loader``) only to get node positions."""
    from groundtrace.core.files.yaml_loader import YamlError, parse_yaml

    try:
        return parse_yaml(text).line_of(path)
    except YamlError:
        return None


@llm_app.command("usage")
def usage(
    cache_path: Annotated[Path | None, typer.Option("--cache-path", help=_CACHE_HELP)] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the statistics as JSON.")] = False,
) -> None:
    """Print the response cache's statistics: entries, hits and tokens saved, per model."""
    from groundtrace.core.llm.cache import ResponseCache, default_cache_path

    path = cache_path or default_cache_path()
    if not path.exists():
        stats = {
            "path": str(path),
            "size_bytes": 0,
            "entries": 0,
            "hits": 0,
            "prompt_tokens_saved": 0,
            "completion_tokens_saved": 0,
            "by_model": {},
        }
    else:
        with ResponseCache(path) as cache:
            stats = cache.stats()
    if as_json:
        typer.echo(json.dumps(stats, indent=2, sort_keys=True))
        return
    typer.echo(f"cache: {stats['path']} ({stats['size_bytes']} bytes)")
    typer.echo(
        f"entries: {stats['entries']}  hits: {stats['hits']}  tokens saved: "
        f"{stats['prompt_tokens_saved']} prompt + {stats['completion_tokens_saved']} completion"
    )
    for model, row in stats["by_model"].items():
        typer.echo(
            f"  {model}: {row['entries']} entries, {row['hits']} hits, "
            f"{row['prompt_tokens_saved']}+{row['completion_tokens_saved']} tokens saved"
        )
