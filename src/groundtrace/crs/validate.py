"""Check a TRACE-CRS dataset file or folder against the JSON Schema and (optionally) the KB.

:func:`validate_path` returns every :class:`Problem` found, each with its location (file:line, dialogue
id, turn index) — it never stops at the first one. Errors make ``groundtrace crs validate`` exit 1;
warnings do not.

Checks (code → what)
--------------------
* ``json`` / ``schema`` / ``model``: the line parses, conforms to the JSON Schema generated from
  :class:`~groundtrace.crs.schema.Dialogue`, and loads as one. ``duplicate-id``: dialogue ids are unique.
* ``turn-index``, ``alternation``, ``act``: turns are numbered 0..n-1, strictly alternate user/system
  starting with the user, and use a user act / system act of the schema.
* ``tag-unknown`` (a ``[Rn]`` in a text missing from ``review_refs``), ``tag-not-listed`` (missing from the
  turn's ``cited_tags``), ``tag-unused`` (warning: listed but absent from the text).
* ``kb-poi``, ``kb-review``, ``ref-poi``: with a KB, candidate/recommended/gold ids and review ids exist and
  each ``review_refs`` entry names a review *of that POI*.
* ``quote``: every quoted snippet attached to a tag (``groundtrace.core.citations.parse_citations``)
  matches the cited review with ``quote_score >= 0.80`` (``groundtrace.core.quotes``); ``quote-span``:
  each ``quote_spans`` entry is in range, names the review its tag points to, and matches at >= 0.80;
  ``quote-uncovered`` (warning): a cited quote that no ``quote_spans`` entry covers cannot be redacted.
* ``gold``: gold POI and multi-reference POIs inside ``candidates``; ``open-pool``: 50–100 ids with the
  gold one included (a warning instead when the KB city × type has fewer than 50 POIs, or without a KB);
* ``recommendations`` (>= 3 unique recommended POIs), ``comparison`` (>= 1 system ``compare`` turn),
  ``refine`` (a ``reject_and_refine`` turn adds a constraint), ``has-rejection`` (flag agrees with turns).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import BaseModel, ValidationError

from groundtrace.crs.dataset_io import dataset_files, dialogue_json_schema
from groundtrace.crs.kb import KnowledgeBase
from groundtrace.crs.schema import Dialogue, SystemAct, Turn, UserAct

QUOTE_THRESHOLD = 0.80
OPEN_POOL_MIN, OPEN_POOL_MAX = 50, 100
MIN_UNIQUE_RECOMMENDATIONS = 3

USER_ACTS = frozenset(get_args(UserAct))
SYSTEM_ACTS = frozenset(get_args(SystemAct))


class Problem(BaseModel):
    """One finding, with its location; ``line``/``dialogue_id``/``turn`` are None when not applicable."""

    severity: Literal["error", "warning"]
    code: str
    file: str
    line: int | None = None
    dialogue_id: str | None = None
    turn: int | None = None
    message: str

    def location(self) -> str:
        loc = self.file if self.line is None else f"{self.file}:{self.line}"
        if self.dialogue_id is not None:
            loc += f" [{self.dialogue_id}]"
        if self.turn is not None:
            loc += f" turn {self.turn}"
        return loc

    def __str__(self) -> str:
        return f"{self.location()}: {self.severity} {self.code}: {self.message}"


@lru_cache(maxsize=1)
def _schema_validator() -> Any:
    from jsonschema import Draft202012Validator

    return Draft202012Validator(dialogue_json_schema())


def text_tags(text: str) -> list[str]:
    """Distinct ``Rn`` tags written in ``text`` (``[Rn]``, ``[Rn, Rm]``...), in order of first use."""
    from groundtrace.core.citations import find_tags

    return list(dict.fromkeys(tag.label for tag in find_tags(text)))


def quoted_snippets(text: str) -> list[tuple[str, list[str], int, int]]:
    """``(snippet, tags, start, end)`` for every quoted snippet of a claim that carries ``[Rn]`` tags."""
    from groundtrace.core.citations import parse_citations

    out: list[tuple[str, list[str], int, int]] = []
    for claim in parse_citations(text):
        labels = list(dict.fromkeys(tag.label for tag in claim.tags))
        if labels:
            out.extend((quote.text, labels, quote.start, quote.end) for quote in claim.quotes)
    return out


class _Checker:
    def __init__(self, dialogue: Dialogue, kb: KnowledgeBase | None, file: str, line: int) -> None:
        self.d, self.kb, self.file, self.line = dialogue, kb, file, line
        self.problems: list[Problem] = []

    def add(
        self,
        code: str,
        message: str,
        turn: int | None = None,
        severity: Literal["error", "warning"] = "error",
    ) -> None:
        self.problems.append(
            Problem(
                severity=severity,
                code=code,
                file=self.file,
                line=self.line,
                dialogue_id=self.d.dialogue_id,
                turn=turn,
                message=message,
            )
        )

    def run(self) -> list[Problem]:
        self.structure()
        for turn in self.d.turns:
            self.tags(turn)
            if self.kb is not None:
                self.quotes(turn)
            if turn.gold is not None:
                self.gold(turn)
        self.dialogue_level()
        if self.kb is not None:
            self.kb_refs()
        return self.problems

    # -- structure -------------------------------------------------------------------------------
    def structure(self) -> None:
        if not self.d.turns:
            self.add("alternation", "dialogue has no turns")
        for pos, turn in enumerate(self.d.turns):
            if turn.index != pos:
                self.add("turn-index", f"turn at position {pos} has index {turn.index}", turn.index)
            expected = "user" if pos % 2 == 0 else "system"
            if turn.role != expected:
                self.add(
                    "alternation",
                    f"expected a {expected} turn at position {pos} (strict alternation starting with the user), got {turn.role}",
                    turn.index,
                )
            acts = USER_ACTS if turn.role == "user" else SYSTEM_ACTS
            if turn.act not in acts:
                self.add("act", f"{turn.role} act {turn.act!r} is not one of {sorted(acts)}", turn.index)
            if turn.role == "user" and (turn.recommended or turn.cited_tags or turn.quote_spans or turn.gold):
                self.add(
                    "act",
                    "a user turn carries system fields (recommended/cited_tags/quote_spans/gold)",
                    turn.index,
                )
            if turn.role == "system" and (turn.constraints_added or turn.rejected):
                self.add("act", "a system turn carries user fields (constraints_added/rejected)", turn.index)

    # -- tags and quotes -------------------------------------------------------------------------
    def tags(self, turn: Turn) -> None:
        used = text_tags(turn.text)
        for tag in used:
            if tag not in self.d.review_refs:
                self.add(
                    "tag-unknown", f"[{tag}] is used in the text but not defined in review_refs", turn.index
                )
            if tag not in turn.cited_tags:
                self.add(
                    "tag-not-listed", f"[{tag}] is used in the text but missing from cited_tags", turn.index
                )
        for tag in turn.cited_tags:
            if tag not in self.d.review_refs:
                self.add("tag-unknown", f"cited tag {tag} is not defined in review_refs", turn.index)
            if tag not in used:
                self.add("tag-unused", f"cited tag {tag} does not appear in the text", turn.index, "warning")

    def _review_text(self, tag: str) -> str | None:
        ref = self.d.review_refs.get(tag)
        if ref is None or self.kb is None or ref.review_id not in self.kb.reviews:
            return None
        return self.kb.reviews[ref.review_id].text

    def quotes(self, turn: Turn) -> None:
        from groundtrace.core.quotes import quote_score

        spans = [(s.start, s.end) for s in turn.quote_spans]
        for snippet, tags, q_start, q_end in quoted_snippets(turn.text):
            if not any(a < q_end and q_start < b for a, b in spans):
                self.add(
                    "quote-uncovered",
                    f"quote {_short(snippet)!r} has no quote_spans entry: a redacted release would keep its text",
                    turn.index,
                    "warning",
                )
            texts = [(t, self._review_text(t)) for t in tags]
            known = [(t, txt) for t, txt in texts if txt is not None]
            if not known:
                continue  # unknown tags / reviews are reported by the tag and KB checks
            _, best = max(((t, quote_score(snippet, txt)) for t, txt in known), key=lambda x: x[1])
            if best < QUOTE_THRESHOLD:
                self.add(
                    "quote",
                    f"quote {_short(snippet)!r} matches its cited review(s) {', '.join(t for t, _ in known)} only at {best:.2f} (< {QUOTE_THRESHOLD})",
                    turn.index,
                )
        for span in turn.quote_spans:
            ref = self.d.review_refs.get(span.tag)
            if span.tag not in turn.cited_tags:
                self.add("quote-span", f"quote span tag {span.tag} is not among cited_tags", turn.index)
            if ref is not None and ref.review_id != span.review_id:
                self.add(
                    "quote-span",
                    f"quote span of {span.tag} names review {span.review_id} but {span.tag} points to {ref.review_id}",
                    turn.index,
                )
            if not 0 <= span.start < span.end <= len(turn.text):
                self.add(
                    "quote-span",
                    f"span {span.start}-{span.end} outside the turn text (length {len(turn.text)})",
                    turn.index,
                )
                continue
            review = self.kb.reviews.get(span.review_id) if self.kb else None
            if review is None:
                self.add("kb-review", f"quote span review {span.review_id} is not in the KB", turn.index)
                continue
            if not 0 <= span.review_start <= span.review_end <= len(review.text):
                self.add(
                    "quote-span",
                    f"review span {span.review_start}-{span.review_end} outside review {span.review_id} (length {len(review.text)})",
                    turn.index,
                )
                continue
            score = quote_score(
                turn.text[span.start : span.end], review.text[span.review_start : span.review_end]
            )
            if score < QUOTE_THRESHOLD:
                self.add(
                    "quote-span",
                    f"span text {_short(turn.text[span.start : span.end])!r} matches review {span.review_id}[{span.review_start}:{span.review_end}] only at {score:.2f}",
                    turn.index,
                )

    # -- gold labels -------------------------------------------------------------------------------
    def gold(self, turn: Turn) -> None:
        gold = turn.gold
        assert gold is not None
        candidates = set(self.d.candidates)
        if gold.gold_poi not in candidates:
            self.add("gold", f"gold POI {gold.gold_poi} is not among the candidates", turn.index)
        outside = [p for p in gold.multi_ref if p not in candidates]
        if outside:
            self.add("gold", f"multi_ref POIs not among the candidates: {outside}", turn.index)
        pool = gold.open_pool
        if len(set(pool)) != len(pool):
            self.add("open-pool", "open_pool contains duplicate ids", turn.index)
        if gold.gold_poi not in pool:
            self.add("open-pool", f"gold POI {gold.gold_poi} is not in the open pool", turn.index)
        n = len(set(pool))
        if n > OPEN_POOL_MAX:
            self.add("open-pool", f"open_pool has {n} POIs (> {OPEN_POOL_MAX})", turn.index)
        elif n < OPEN_POOL_MIN:
            available = len(self.kb.pois_in(self.d.city, self.d.poi_type)) if self.kb is not None else None
            if available is None:
                self.add(
                    "open-pool",
                    f"open_pool has {n} POIs (< {OPEN_POOL_MIN}); no KB to tell whether the city is small",
                    turn.index,
                    "warning",
                )
            elif available < OPEN_POOL_MIN:
                self.add(
                    "open-pool",
                    f"open_pool has {n} POIs: the KB has only {available} {self.d.poi_type} POIs in {self.d.city}",
                    turn.index,
                    "warning",
                )
            else:
                self.add(
                    "open-pool",
                    f"open_pool has {n} POIs (< {OPEN_POOL_MIN}) although the KB has {available} in {self.d.city}",
                    turn.index,
                )
        if self.kb is not None:
            for pid in pool:
                poi = self.kb.pois.get(pid)
                if poi is None:
                    self.add("kb-poi", f"open_pool POI {pid} is not in the KB", turn.index)
                elif poi.city != self.d.city or poi.poi_type != self.d.poi_type:
                    self.add(
                        "open-pool",
                        f"open_pool POI {pid} is a {poi.poi_type} in {poi.city}, not a {self.d.poi_type} in {self.d.city}",
                        turn.index,
                    )
            if gold.gold_poi not in self.kb.pois:
                self.add("kb-poi", f"gold POI {gold.gold_poi} is not in the KB", turn.index)

    # -- dialogue-level rules ----------------------------------------------------------------------
    def dialogue_level(self) -> None:
        system = [t for t in self.d.turns if t.role == "system"]
        unique = {pid for t in system for pid in t.recommended}
        if len(unique) < MIN_UNIQUE_RECOMMENDATIONS:
            self.add(
                "recommendations",
                f"{len(unique)} unique recommended POIs (need >= {MIN_UNIQUE_RECOMMENDATIONS})",
            )
        if not any(t.act == "compare" for t in system):
            self.add("comparison", "no system compare turn (need >= 1)")
        rejections = [t for t in self.d.turns if t.role == "user" and t.act == "reject_and_refine"]
        for t in rejections:
            if not t.constraints_added:
                self.add("refine", "reject_and_refine turn adds no constraint", t.index)
        if self.d.has_rejection != bool(rejections):
            self.add(
                "has-rejection",
                f"has_rejection is {self.d.has_rejection} but the dialogue has {len(rejections)} reject_and_refine turn(s)",
            )
        if len(set(self.d.candidates)) != len(self.d.candidates):
            self.add("gold", "candidates contain duplicate ids")

    def kb_refs(self) -> None:
        kb = self.kb
        assert kb is not None
        for pid in self.d.candidates:
            if pid not in kb.pois:
                self.add("kb-poi", f"candidate {pid} is not in the KB")
        for t in self.d.turns:
            for pid in [*t.recommended, *t.rejected]:
                if pid not in kb.pois:
                    self.add("kb-poi", f"POI {pid} is not in the KB", t.index)
        for tag, ref in self.d.review_refs.items():
            if ref.poi_id not in kb.pois:
                self.add("kb-poi", f"{tag} points to POI {ref.poi_id}, which is not in the KB")
            review = kb.reviews.get(ref.review_id)
            if review is None:
                self.add("kb-review", f"{tag} points to review {ref.review_id}, which is not in the KB")
            elif review.poi_id != ref.poi_id:
                self.add(
                    "ref-poi",
                    f"{tag}: review {ref.review_id} is a review of {review.poi_id}, not of {ref.poi_id}",
                )
        if self.d.kb_hash and self.d.kb_hash != kb.content_hash:
            self.add(
                "kb-hash",
                f"dialogue was built on KB {self.d.kb_hash[:12]}…, validating against {kb.content_hash[:12]}…",
                severity="warning",
            )


def _short(text: str, n: int = 60) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def check_dialogue(
    dialogue: Dialogue, kb: KnowledgeBase | None = None, *, file: str = "<memory>", line: int = 0
) -> list[Problem]:
    """Every content problem of one (schema-valid) dialogue."""
    return _Checker(dialogue, kb, file, line).run()


def _schema_problems(obj: Any, file: str, line: int, did: str | None) -> Iterator[Problem]:
    for err in sorted(_schema_validator().iter_errors(obj), key=lambda e: list(map(str, e.absolute_path))):
        path = list(err.absolute_path)
        turn = path[1] if len(path) > 1 and path[0] == "turns" and isinstance(path[1], int) else None
        where = "/".join(map(str, path)) or "<root>"
        yield Problem(
            severity="error",
            code="schema",
            file=file,
            line=line,
            dialogue_id=did,
            turn=turn,
            message=f"{where}: {err.message}",
        )


def validate_file(
    path: Path, kb: KnowledgeBase | None = None, seen_ids: dict[str, str] | None = None
) -> list[Problem]:
    """Every problem of one JSONL dataset file (see module docstring)."""
    problems: list[Problem] = []
    seen = seen_ids if seen_ids is not None else {}
    file = str(path)
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            dialogue = strict_parse(raw)
            if dialogue is not None:  # fast path: strict acceptance implies the JSON Schema accepts it
                did = dialogue.dialogue_id
                _check_loaded(dialogue, kb, file, number, did, seen, problems)
                continue
            try:
                obj = json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                problems.append(
                    Problem(
                        severity="error", code="json", file=file, line=number, message=f"invalid JSON: {exc}"
                    )
                )
                continue
            did = (
                obj.get("dialogue_id")
                if isinstance(obj, dict) and isinstance(obj.get("dialogue_id"), str)
                else None
            )
            schema_errors = list(_schema_problems(obj, file, number, did))
            if schema_errors:
                problems.extend(schema_errors)
                continue
            try:
                dialogue = Dialogue.model_validate(obj)
            except ValidationError as exc:
                problems.append(
                    Problem(
                        severity="error",
                        code="model",
                        file=file,
                        line=number,
                        dialogue_id=did,
                        message=str(exc).splitlines()[0],
                    )
                )
                continue
            _check_loaded(dialogue, kb, file, number, did, seen, problems)
    return problems


def strict_parse(raw: bytes) -> Dialogue | None:
    """The dialogue when pydantic accepts ``raw`` in *strict* mode, else None (then the caller runs the
    JSON Schema, which explains what is wrong).

    Strict acceptance implies the JSON Schema (generated from the same models) accepts the line — no
    type coercion, extra keys forbidden, the same enums and bounds; ``tests/crs/test_validate.py``
    checks this implication on mutated dialogues. It is ~300× cheaper than ``jsonschema`` on a line.
    """
    try:
        return Dialogue.model_validate_json(raw, strict=True)
    except ValueError:  # pydantic's ValidationError is a ValueError
        return None


def _check_loaded(
    dialogue: Dialogue,
    kb: KnowledgeBase | None,
    file: str,
    number: int,
    did: str | None,
    seen: dict[str, str],
    problems: list[Problem],
) -> None:
    if dialogue.dialogue_id in seen:
        problems.append(
            Problem(
                severity="error",
                code="duplicate-id",
                file=file,
                line=number,
                dialogue_id=did,
                message=f"dialogue id also used at {seen[dialogue.dialogue_id]}",
            )
        )
    else:
        seen[dialogue.dialogue_id] = f"{file}:{number}"
    problems.extend(check_dialogue(dialogue, kb, file=file, line=number))


def validate_path(path: Path | str, kb: KnowledgeBase | None = None) -> list[Problem]:
    """Every problem of a dataset file or folder (split files; a missing manifest is a warning)."""
    path = Path(path)
    problems: list[Problem] = []
    seen: dict[str, str] = {}
    if path.is_dir() and not (path / "manifest.json").is_file():
        problems.append(
            Problem(
                severity="warning",
                code="manifest",
                file=str(path),
                message="no manifest.json in the dataset folder",
            )
        )
    for file in dataset_files(path):
        problems.extend(validate_file(file, kb, seen))
    return problems
