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
* ``quote``: every quoted snippet attached to a tag (``groundtrace.core.evidence.citations.parse_citations``)
  matches the cited review with ``quote_score >= 0.80`` (``groundtrace.core.evidence.quotes``);
  ``quote-span``: each ``quote_spans`` entry is in range, names the review its tag points to, and matches at
  >= 0.80; ``quote-uncovered`` (warning): a cited quote that no ``quote_spans`` entry covers cannot be
  redacted.
* ``gold``: gold POI and multi-reference POIs inside ``candidates``; ``open-pool``: 50–100 ids with the
  gold one included (a warning instead when the KB city × type has fewer than 50 POIs, or without a KB);
* ``recommendations`` (>= 3 unique recommended POIs), ``comparison`` (>= 1 system ``compare`` turn),
  ``refine`` (a ``reject_and_refine`` turn adds a constraint), ``has-rejection`` (flag agrees with turns).
* ``tier`` / ``features``: the tier recomputed from the measured features (``groundtrace.crs.dataset.tiers``)
  must equal ``difficulty``, and stored features must equal the measured ones (dataset lines always; an
  in-memory dialogue only once it stores tier features). ``multi-ref`` (with a KB): every candidate that
  satisfies a gold turn's active constraints is the gold POI or in ``multi_ref``.
* With a KB, the builder's QC (:func:`groundtrace.crs.build.qc.check_dialogue`, pool knobs from
  ``manifest.json`` ``config.plan``) runs too; an issue a rule above already reports is not repeated,
  the rest become ``pool`` (candidate pool size), ``gold`` (gold violates an active constraint — named —,
  is not the turn's main recommendation, a recommendation turn without gold, a multi-reference POI that
  violates a constraint), ``rejection`` (rejects nothing, rejected POI already satisfies the refinement,
  a rejected POI recommended again), ``tag-wrong-poi`` (a tag citing a review of a POI the turn does not
  recommend), ``missing-citation``, ``cited-tags`` (must equal the text's tags in order), ``open-pool``,
  ``quote`` (each tag of a quote must match it) and ``quote-span`` as a *warning* for a near-verbatim span
  (the release format allows them; the builder quotes verbatim).
* Redacted releases (``crs export --redact``): a folder with ``redaction.json``, or a dialogue whose
  ``⟦Q:…⟧`` placeholders stand for its quote spans (:func:`is_redacted`), is checked without quote
  scoring; one ``redacted`` warning per file says to run ``crs hydrate`` first. Still checked:
  ``placeholder`` (parses, names a review a tag of the turn points to, lies inside it), each quote span
  has its placeholder and lies inside its review, and all id/tag/gold/QC rules.

A line the schema rejects gets only ``duplicate-id`` (when its ``dialogue_id`` is a string) and, with a
KB, the id checks ``kb-poi`` / ``kb-review`` / ``ref-poi`` on whatever ids the raw JSON holds
(:func:`raw_reference_problems`); every other rule needs a schema-valid line.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import BaseModel, ValidationError

from groundtrace.crs.dataset.files import dataset_files, dialogue_json_schema
from groundtrace.crs.kb.knowledge_base import KnowledgeBase
from groundtrace.crs.schema import Constraint, Dialogue, QuoteSpan, SystemAct, Turn, UserAct

QUOTE_THRESHOLD = 0.80
OPEN_POOL_MIN, OPEN_POOL_MAX = 50, 100
MIN_UNIQUE_RECOMMENDATIONS = 3

#: QC reasons whose every case a rule of this module already reports (turn-index/alternation, act,
#: comparison, tag-unknown/kb-review): not repeated.
_QC_COVERED = frozenset({"alternation", "unknown_act", "no_comparison", "bad_tag"})
_PLACEHOLDER_MARK = "⟦Q:"
_TIER_FEATURES = frozenset({"n_constraints", "has_rejection", "n_satisfying", "n_turns", "tier_points"})

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
    from groundtrace.core.evidence.citations import find_tags

    return list(dict.fromkeys(tag.label for tag in find_tags(text)))


def quoted_snippets(text: str) -> list[tuple[str, list[str], int, int]]:
    """``(snippet, tags, start, end)`` for every quoted snippet of a claim that carries ``[Rn]`` tags."""
    from groundtrace.core.evidence.citations import parse_citations

    out: list[tuple[str, list[str], int, int]] = []
    for claim in parse_citations(text):
        labels = list(dict.fromkeys(tag.label for tag in claim.tags))
        if labels:
            out.extend((quote.text, labels, quote.start, quote.end) for quote in claim.quotes)
    return out


@dataclass(frozen=True)
class PoolLimits:
    """The builder's pool knobs the QC rules use (``manifest.json`` ``config.plan`` when present)."""

    pool_size: int = 8
    open_min: int = OPEN_POOL_MIN
    open_max: int = OPEN_POOL_MAX


class _Checker:
    def __init__(
        self,
        dialogue: Dialogue,
        kb: KnowledgeBase | None,
        file: str,
        line: int,
        limits: PoolLimits,
        redacted: bool,
        tiered: bool | None = None,
    ) -> None:
        self.d, self.kb, self.file, self.line = dialogue, kb, file, line
        self.limits = limits
        self.tiered = bool(_TIER_FEATURES & dialogue.features.keys()) if tiered is None else tiered
        self.redacted = redacted or is_redacted(dialogue)
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
            if self.redacted:
                self.placeholders(turn)
            elif self.kb is not None:
                self.quotes(turn)
            if turn.gold is not None:
                self.gold(turn)
        self.dialogue_level()
        self.tier()
        if self.kb is not None:
            self.kb_refs()
            self.builder_qc()
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
                    f"expected a {expected} turn at position {pos} (strict alternation starting with the "
                    f"user), got {turn.role}",
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
        from groundtrace.core.evidence.quotes import quote_score

        spans = [(s.start, s.end) for s in turn.quote_spans]
        for snippet, tags, q_start, q_end in quoted_snippets(turn.text):
            if not any(a < q_end and q_start < b for a, b in spans):
                self.add(
                    "quote-uncovered",
                    f"quote {_short(snippet)!r} has no quote_spans entry: a redacted release "
                    "would keep its text",
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
                    f"quote {_short(snippet)!r} matches its cited review(s) {', '.join(t for t, _ in known)} "
                    f"only at {best:.2f} (< {QUOTE_THRESHOLD})",
                    turn.index,
                )
        for span in turn.quote_spans:
            self._span_ref(turn, span)
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
                    f"review span {span.review_start}-{span.review_end} outside review {span.review_id} "
                    f"(length {len(review.text)})",
                    turn.index,
                )
                continue
            score = quote_score(
                turn.text[span.start : span.end], review.text[span.review_start : span.review_end]
            )
            if score < QUOTE_THRESHOLD:
                self.add(
                    "quote-span",
                    f"span text {_short(turn.text[span.start : span.end])!r} matches review "
                    f"{span.review_id}[{span.review_start}:{span.review_end}] only at {score:.2f}",
                    turn.index,
                )

    def _span_ref(self, turn: Turn, span: QuoteSpan) -> None:
        ref = self.d.review_refs.get(span.tag)
        if span.tag not in turn.cited_tags:
            self.add("quote-span", f"quote span tag {span.tag} is not among cited_tags", turn.index)
        if ref is not None and ref.review_id != span.review_id:
            self.add(
                "quote-span",
                f"quote span of {span.tag} names review {span.review_id} but {span.tag} points to "
                f"{ref.review_id}",
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
                    f"open_pool has {n} POIs: the KB has only {available} {self.d.poi_type} POIs "
                    f"in {self.d.city}",
                    turn.index,
                    "warning",
                )
            else:
                self.add(
                    "open-pool",
                    f"open_pool has {n} POIs (< {OPEN_POOL_MIN}) although the KB has {available} "
                    f"in {self.d.city}",
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
                        f"open_pool POI {pid} is a {poi.poi_type} in {poi.city}, not a {self.d.poi_type} "
                        f"in {self.d.city}",
                        turn.index,
                    )
            if gold.gold_poi not in self.kb.pois:
                self.add("kb-poi", f"gold POI {gold.gold_poi} is not in the KB", turn.index)
            from groundtrace.crs.kb.constraints import satisfies_all

            listed = {gold.gold_poi, *gold.multi_ref}
            missing = [
                pid
                for pid in dict.fromkeys(self.d.candidates)
                if pid not in listed
                and pid in self.kb.pois
                and satisfies_all(self.kb.poi(pid), gold.active_constraints, self.d.anchor)
            ]
            if missing:
                self.add(
                    "multi-ref",
                    f"candidates {missing} satisfy the active constraints but are not in multi_ref "
                    "(n_satisfying and the tier depend on it)",
                    turn.index,
                )

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
                f"has_rejection is {self.d.has_rejection} but the dialogue has {len(rejections)} "
                "reject_and_refine turn(s)",
            )
        if len(set(self.d.candidates)) != len(self.d.candidates):
            self.add("gold", "candidates contain duplicate ids")

    # -- redacted releases ---------------------------------------------------------------------------
    def placeholders(self, turn: Turn) -> None:
        """Ids and offsets of a redacted turn: its quotes are placeholders, so they are not scored."""
        from groundtrace.crs.dataset.release import Placeholder, RedactionError, split_redacted

        try:
            found = [p for p in split_redacted(turn.text) if isinstance(p, Placeholder)]
        except RedactionError as exc:
            self.add("placeholder", str(exc), turn.index)
            found = []
        tags = dict.fromkeys([*text_tags(turn.text), *turn.cited_tags])
        cited = {self.d.review_refs[t].review_id for t in tags if t in self.d.review_refs}
        for ph in found:
            where = f"placeholder of review {ph.review_id} ({ph.start}-{ph.end})"
            if ph.start > ph.end:
                self.add("placeholder", f"{where}: start after end", turn.index)
            if ph.review_id not in cited:
                self.add("placeholder", f"{where}: no tag of this turn points to that review", turn.index)
            review = self.kb.reviews.get(ph.review_id) if self.kb is not None else None
            if self.kb is not None and review is None:
                self.add("kb-review", f"{where}: the review is not in the KB", turn.index)
            elif review is not None and ph.end > len(review.text):
                self.add(
                    "placeholder", f"{where}: outside the review (length {len(review.text)})", turn.index
                )
        keys = {(p.review_id, p.start, p.end) for p in found}
        for span in turn.quote_spans:
            self._span_ref(turn, span)
            if (span.review_id, span.review_start, span.review_end) not in keys:
                self.add(
                    "quote-span",
                    f"quote span of {span.tag} ({span.review_id} {span.review_start}-{span.review_end}) has "
                    "no placeholder in the redacted text",
                    turn.index,
                )
            review = self.kb.reviews.get(span.review_id) if self.kb is not None else None
            if self.kb is not None and review is None:
                self.add("kb-review", f"quote span review {span.review_id} is not in the KB", turn.index)
            elif review is not None and not 0 <= span.review_start <= span.review_end <= len(review.text):
                self.add(
                    "quote-span",
                    f"review span {span.review_start}-{span.review_end} outside review {span.review_id} "
                    f"(length {len(review.text)})",
                    turn.index,
                )

    # -- difficulty tier ---------------------------------------------------------------------------
    def tier(self) -> None:
        """Recompute the features and the tier (``groundtrace.crs.dataset.tiers``) from the gold labels."""
        from groundtrace.crs.dataset.tiers import dialogue_features, tier_for, tier_points

        recs = self.d.recommendation_turns()
        if not self.tiered or not recs or recs[-1].gold is None:
            return  # not tiered yet, or no gold recommendation turn (reported by the gold rules)
        if not _TIER_FEATURES & self.d.features.keys():
            self.add(
                "features", "no tier features stored: the difficulty tier is not documented by its features"
            )
        measured = dialogue_features(self.d, self.kb)
        points = tier_points(measured)
        expected = tier_for(points)
        if self.d.difficulty != expected:
            basis = ", ".join(
                f"{k}={measured[k]:g}" for k in ("n_constraints", "has_rejection", "n_satisfying", "n_turns")
            )
            self.add(
                "tier",
                f"difficulty is {self.d.difficulty} but the measured features give {expected} ({points} "
                f"points: {basis})",
            )
        for key, value in [*measured.items(), ("tier_points", float(points))]:
            stored = self.d.features.get(key)
            if stored is not None and stored != value:
                self.add("features", f"features.{key} is {stored:g} but the dialogue measures {value:g}")

    # -- the builder's QC (groundtrace.crs.build.qc), without repeating what the rules above report ----------
    def builder_qc(self) -> None:
        from groundtrace.crs.build.qc import check_dialogue as qc_check

        assert self.kb is not None
        lim = self.limits
        issues = qc_check(
            self.d, self.kb, pool_size=lim.pool_size, open_min=lim.open_min, open_max=lim.open_max
        )
        for issue in issues:
            turn = self.d.turns[issue.turn] if 0 <= issue.turn < len(self.d.turns) else None
            mapped = self._qc_problem(issue.reason, turn, issue.detail)
            if mapped is not None:
                code, message, severity = mapped
                self.add(code, message, None if turn is None else turn.index, severity)

    def _reported(self, code: str, turn: Turn | None) -> bool:
        index = None if turn is None else turn.index
        return any(p.code == code and p.turn == index and p.severity == "error" for p in self.problems)

    def _violated(self, pid: str, constraints: list[Constraint]) -> str:
        from groundtrace.crs.kb.constraints import satisfies

        assert self.kb is not None
        bad = [c for c in constraints if not satisfies(self.kb.poi(pid), c, self.d.anchor)]
        return "; ".join(f"{c.kind}={c.value!r} ({c.label!r})" for c in bad)

    def _qc_problem(
        self, reason: str, turn: Turn | None, detail: str
    ) -> tuple[str, str, Literal["error", "warning"]] | None:
        """A QC issue as ``(code, message, severity)``; None when a rule above already reports it."""
        if reason in _QC_COVERED:
            return None
        if reason == "few_recommendations":
            if self._reported("recommendations", None):
                return None
            return (
                "recommendations",
                f"{detail} in recommend/compare turns (need >= {MIN_UNIQUE_RECOMMENDATIONS})",
                "error",
            )
        if reason == "rejection":
            if turn is None:
                return None  # has-rejection
            if detail.startswith("reject_and_refine must"):
                if turn.rejected:
                    return None  # the missing constraint is reported as refine
                return "rejection", "reject_and_refine turn rejects no POI", "error"
            if "already satisfies" in detail and not turn.constraints_added:
                return None  # an empty refinement is satisfied vacuously: reported as refine
            return "rejection", detail, "error"
        if reason == "pool":
            if len(self.d.candidates) == self.limits.pool_size:
                return None  # duplicates: reported as gold
            return "pool", detail, "error"
        if reason == "gold" and turn is not None and turn.gold is not None:
            gold = turn.gold
            if detail.endswith("not a candidate"):
                return None  # gold / kb-poi
            if detail.startswith("multi-reference"):
                pid = detail.split()[1]
                if pid not in self.d.candidates or pid not in self.kb.pois:  # type: ignore[union-attr]
                    return None  # gold / kb-poi
                why = self._violated(pid, gold.active_constraints)
                return "gold", f"multi_ref POI {pid} violates an active constraint: {why}", "error"
            if "violates" in detail:
                why = self._violated(gold.gold_poi, gold.active_constraints)
                return "gold", f"gold POI {gold.gold_poi} violates an active constraint: {why}", "error"
            return "gold", detail, "error"
        if reason == "open_pool":
            return None if self._reported("open-pool", turn) else ("open-pool", detail, "error")
        if reason == "tag_wrong_poi" and turn is not None:
            ref = self.d.review_refs.get(detail[1 : detail.find("]")])
            if ref is not None and ref.poi_id in turn.recommended:
                return None  # the review belongs to another POI than the ref says: ref-poi
            return (
                "tag-wrong-poi",
                f"{detail} (a tag must cite a review of a POI the turn recommends)",
                "error",
            )
        if reason == "cited_tags":
            if self._reported("tag-not-listed", turn):
                return None
            return "cited-tags", f"{detail} (the builder requires them equal, in order)", "error"
        if reason == "quote_mismatch":
            return None if self.redacted or self._reported("quote", turn) else ("quote", detail, "error")
        if reason == "span_mismatch":
            # the release format allows near-verbatim spans (edit scripts); >= 0.80 is checked above
            if self.redacted or self._reported("quote-span", turn) or self._reported("kb-review", turn):
                return None
            return (
                "quote-span",
                f"{detail}: not verbatim (the builder's QC requires verbatim spans)",
                "warning",
            )
        return reason.replace("_", "-"), detail, "error"

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
                f"dialogue was built on KB {self.d.kb_hash[:12]}…, validating against "
                f"{kb.content_hash[:12]}…",
                severity="warning",
            )


def _short(text: str, n: int = 60) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def is_redacted(dialogue: Dialogue) -> bool:
    """Whether ``dialogue`` comes from a redacted release (``groundtrace crs export --redact``): a turn text
    parses as redacted text (``groundtrace.crs.dataset.release.split_redacted``) and one of its placeholders
    ``⟦Q:<review>:<start>-<end>⟧`` stands for one of the turn's ``quote_spans``. Placeholder-like text
    alone (an unredacted text may contain ``⟦``) does not count.
    """
    from groundtrace.crs.dataset.release import Placeholder, RedactionError, split_redacted

    for turn in dialogue.turns:
        if _PLACEHOLDER_MARK not in turn.text or not turn.quote_spans:
            continue
        try:
            parts = split_redacted(turn.text)
        except RedactionError:
            continue
        spans = {(s.review_id, s.review_start, s.review_end) for s in turn.quote_spans}
        if any(isinstance(p, Placeholder) and (p.review_id, p.start, p.end) in spans for p in parts):
            return True
    return False


def check_dialogue(
    dialogue: Dialogue,
    kb: KnowledgeBase | None = None,
    *,
    file: str = "<memory>",
    line: int = 0,
    limits: PoolLimits | None = None,
    redacted: bool = False,
    tiered: bool | None = None,
) -> list[Problem]:
    """Every content problem of one (schema-valid) dialogue.

    ``redacted`` forces the release mode (otherwise chosen by :func:`is_redacted`). ``tiered``: check the
    difficulty tier and the stored features against the measured ones; by default only when the dialogue
    stores tier features (an in-memory dialogue straight from a realiser has not been tiered yet). Dataset
    files are always tier-checked.
    """
    return _Checker(dialogue, kb, file, line, limits or PoolLimits(), redacted, tiered).run()


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


def raw_reference_problems(
    obj: Any, kb: KnowledgeBase, file: str, line: int, did: str | None
) -> list[Problem]:
    """The KB-reference checks (``kb-poi``, ``kb-review``, ``ref-poi``) on the raw JSON of a line the schema
    rejects: every id that is a string where the schema puts one is looked up; the rest is skipped."""
    out: list[Problem] = []
    if not isinstance(obj, dict):
        return out

    def add(code: str, message: str, turn: int | None = None) -> None:
        out.append(
            Problem(
                severity="error", code=code, file=file, line=line, dialogue_id=did, turn=turn, message=message
            )
        )

    def ids(value: Any) -> list[str]:
        return [x for x in value if isinstance(x, str)] if isinstance(value, list) else []

    for pid in ids(obj.get("candidates")):
        if pid not in kb.pois:
            add("kb-poi", f"candidate {pid} is not in the KB")
    turns = obj.get("turns")
    for pos, t in enumerate(turns if isinstance(turns, list) else []):
        if not isinstance(t, dict):
            continue
        index = t.get("index")
        turn = index if isinstance(index, int) and not isinstance(index, bool) else pos
        for pid in [*ids(t.get("recommended")), *ids(t.get("rejected"))]:
            if pid not in kb.pois:
                add("kb-poi", f"POI {pid} is not in the KB", turn)
        gold = t.get("gold")
        if isinstance(gold, dict):
            if isinstance(gold.get("gold_poi"), str) and gold["gold_poi"] not in kb.pois:
                add("kb-poi", f"gold POI {gold['gold_poi']} is not in the KB", turn)
            for pid in ids(gold.get("multi_ref")):
                if pid not in kb.pois:
                    add("kb-poi", f"multi_ref POI {pid} is not in the KB", turn)
            for pid in ids(gold.get("open_pool")):
                if pid not in kb.pois:
                    add("kb-poi", f"open_pool POI {pid} is not in the KB", turn)
        spans = t.get("quote_spans")
        for span in spans if isinstance(spans, list) else []:
            rid = span.get("review_id") if isinstance(span, dict) else None
            if isinstance(rid, str) and rid not in kb.reviews:
                add("kb-review", f"quote span review {span['review_id']} is not in the KB", turn)
    refs = obj.get("review_refs")
    for tag, ref in refs.items() if isinstance(refs, dict) else []:
        if not isinstance(ref, dict):
            continue
        poi_id, review_id = ref.get("poi_id"), ref.get("review_id")
        if isinstance(poi_id, str) and poi_id not in kb.pois:
            add("kb-poi", f"{tag} points to POI {poi_id}, which is not in the KB")
        if isinstance(review_id, str):
            review = kb.reviews.get(review_id)
            if review is None:
                add("kb-review", f"{tag} points to review {review_id}, which is not in the KB")
            elif isinstance(poi_id, str) and review.poi_id != poi_id:
                add("ref-poi", f"{tag}: review {review_id} is a review of {review.poi_id}, not of {poi_id}")
    return out


def validate_file(
    path: Path,
    kb: KnowledgeBase | None = None,
    seen_ids: dict[str, str] | None = None,
    *,
    limits: PoolLimits | None = None,
    release: bool = False,
) -> list[Problem]:
    """Every problem of one JSONL dataset file (see module docstring); ``release``: the file sits next to a
    ``redaction.json``."""
    problems: list[Problem] = []
    seen = seen_ids if seen_ids is not None else {}
    limits = limits or PoolLimits()
    file = str(path)
    redacted = 0
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            dialogue = strict_parse(raw)
            if dialogue is not None:  # fast path: strict acceptance implies the JSON Schema accepts it
                redacted += _check_loaded(dialogue, kb, file, number, seen, problems, limits, release)
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
            if not schema_errors:
                try:
                    dialogue = Dialogue.model_validate(obj)
                except ValidationError as exc:
                    schema_errors = [
                        Problem(
                            severity="error",
                            code="model",
                            file=file,
                            line=number,
                            dialogue_id=did,
                            message=str(exc).splitlines()[0],
                        )
                    ]
                else:
                    redacted += _check_loaded(dialogue, kb, file, number, seen, problems, limits, release)
                    continue
            problems.extend(schema_errors)
            # what still makes sense on the raw JSON: duplicate ids and the KB references
            if did is not None:
                _check_duplicate(did, file, number, seen, problems)
            if kb is not None:
                problems.extend(raw_reference_problems(obj, kb, file, number, did))
    if redacted:
        problems.append(
            Problem(
                severity="warning",
                code="redacted",
                file=file,
                message=f"{redacted} dialogue(s) are redacted (quotes replaced by ⟦Q:…⟧ placeholders"
                + (", release folder with redaction.json" if release else "")
                + "): quote checks skipped, run `groundtrace crs hydrate` first to check them; ids, tags, "
                + (
                    "placeholders and span offsets were checked against the KB"
                    if kb is not None
                    else "placeholders and spans were checked"
                ),
            )
        )
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


def _check_duplicate(did: str, file: str, number: int, seen: dict[str, str], problems: list[Problem]) -> None:
    if did in seen:
        problems.append(
            Problem(
                severity="error",
                code="duplicate-id",
                file=file,
                line=number,
                dialogue_id=did,
                message=f"dialogue id also used at {seen[did]}",
            )
        )
    else:
        seen[did] = f"{file}:{number}"


def _check_loaded(
    dialogue: Dialogue,
    kb: KnowledgeBase | None,
    file: str,
    number: int,
    seen: dict[str, str],
    problems: list[Problem],
    limits: PoolLimits,
    release: bool,
) -> bool:
    """Run the dialogue checks; True when it was checked as a redacted release line."""
    _check_duplicate(dialogue.dialogue_id, file, number, seen, problems)
    redacted = release or is_redacted(dialogue)
    problems.extend(
        check_dialogue(dialogue, kb, file=file, line=number, limits=limits, redacted=redacted, tiered=True)
    )
    return redacted


def pool_limits(folder: Path) -> PoolLimits:
    """The pool knobs of ``manifest.json`` ``config.plan`` (defaults where absent or unreadable)."""
    try:
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
        plan = manifest["config"]["plan"]
        return PoolLimits(int(plan["pool_size"]), int(plan["open_min"]), int(plan["open_max"]))
    except (OSError, ValueError, KeyError, TypeError):
        return PoolLimits()


def validate_path(path: Path | str, kb: KnowledgeBase | None = None) -> list[Problem]:
    """Every problem of a dataset file or folder (split files; a missing manifest is a warning)."""
    from groundtrace.crs.dataset.release import SIDECAR

    path = Path(path)
    problems: list[Problem] = []
    seen: dict[str, str] = {}
    folder = path if path.is_dir() else path.parent
    if path.is_dir() and not (path / "manifest.json").is_file():
        problems.append(
            Problem(
                severity="warning",
                code="manifest",
                file=str(path),
                message="no manifest.json in the dataset folder",
            )
        )
    limits = pool_limits(folder)
    release = (folder / SIDECAR).is_file()
    for file in dataset_files(path):
        problems.extend(validate_file(file, kb, seen, limits=limits, release=release))
    return problems
