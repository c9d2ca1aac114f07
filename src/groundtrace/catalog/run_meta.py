"""The options a results file was written with, kept next to it, so a resume cannot mix configurations.

``catalog enrich --out RESULTS.jsonl`` writes ``RESULTS.jsonl.run.json`` holding :func:`run_fingerprint`:
the templates and write policy (sha256 of their content), the engine, judge and their LLM specs, the
evidence sources (paths / URLs as given) and the prompt limits. Options that do not change the output
(``--workers``, progress) are not part of it. Resuming into a file whose stored fingerprint differs raises
:class:`ResumeMismatchError` naming every differing option, before the file is touched. A results file
without a fingerprint (written before this existed) is resumed as before and gets one.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

FINGERPRINT_VERSION = 2  # 2: sources, search, engine and options by registry name


class ResumeMismatchError(ValueError):
    """``--out`` holds results written with other options."""


def meta_path(out_path: Path) -> Path:
    """``RESULTS.jsonl`` → ``RESULTS.jsonl.run.json``."""
    return out_path.with_name(out_path.name + ".run.json")


def _sha(data: Any) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode("utf-8")).hexdigest()[:16]


def run_fingerprint(config: Any, templates: Any, policy: Any) -> dict[str, Any]:
    """The output-relevant options of a run (``config``: ``EnrichConfig``; ``templates``: the loaded
    ``TemplateSet``; ``policy``: the loaded ``WritePolicy``)."""

    def path(p: Path | None) -> str | None:
        return None if p is None else str(Path(p).resolve())

    return {
        "version": FINGERPRINT_VERSION,
        "templates": _sha(
            sorted((t.model_dump(mode="json") for t in templates), key=lambda d: d["category"])
        ),
        "policy": _sha(policy.model_dump(mode="json")),
        "llm": config.llm,
        "sources": config.source_names(),
        "search": config.search,
        "engine": config.extractor_name(),  # the extractor; key kept so older results files resume
        "options": _sha(config.options) if config.options else None,
        "judge": config.judge,
        "vlm": config.vlm,
        "feed": path(config.feed),
        "corpus": path(config.corpus),
        "searxng": config.searxng,
        "images": path(config.images),
        "max_prompt_tokens": config.max_prompt_tokens,
        "max_queries": config.max_queries,
    }


def check_or_record(out_path: Path, fingerprint: dict[str, Any]) -> None:
    """Raise :class:`ResumeMismatchError` if ``out_path``'s stored fingerprint differs; else store it."""
    meta = meta_path(out_path)
    if meta.exists() and out_path.exists() and out_path.stat().st_size > 0:
        try:
            stored = json.loads(meta.read_text(encoding="utf-8"))
            if not isinstance(stored, dict):
                raise TypeError(f"expected a JSON object, got {type(stored).__name__}")
        except (OSError, ValueError, TypeError, RecursionError) as exc:
            reason = str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__
            raise ResumeMismatchError(
                f"{meta}:1: unreadable run options ({reason}); delete it to resume anyway"
            ) from None
        diffs = [
            f"{key}: {stored.get(key)!r} -> {fingerprint.get(key)!r}"
            for key in sorted(set(stored) | set(fingerprint))
            if stored.get(key) != fingerprint.get(key)
        ]
        if diffs:
            raise ResumeMismatchError(
                f"{out_path} holds results written with other options ({'; '.join(diffs)}); "
                f"resume with the same options, or write to another --out"
            )
        return
    meta.write_text(json.dumps(fingerprint, indent=2, sort_keys=True) + "\n", encoding="utf-8")
