"""Every TRACE-CRS dataset rule, once: a stable code, a short name, a message template, where it runs.

A :class:`Rule` is declared here and nowhere else. The checks that apply it live in
:mod:`groundtrace.crs.dataset.checks` (one module per concern) and report a :class:`Finding` that carries
the rule itself, so nobody ever reads a message to learn which rule fired. Two callers run the same checks:

* the builder's QC (:func:`groundtrace.crs.build.qc.check_dialogue`): rules whose ``builder`` severity is
  not None, and a dialogue fails QC on any finding of severity ``"error"``;
* ``groundtrace crs validate`` (:mod:`groundtrace.crs.dataset.validate`): every rule, at its ``severity``.

Codes never change meaning and are never reused: ``GT-`` + a family letter + a number. Families: ``F`` file
and line, ``S`` turn structure, ``D`` dialogue-level, ``R`` rejection, ``G`` pools and gold labels, ``T``
tags, ``K`` KB references, ``Q`` quotes and quote spans, ``P`` redacted releases. The table in
docs/crs-dataset.md lists them; ``tests/crs/dataset/test_rules.py`` checks that it matches :data:`RULES`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from groundtrace.core.evidence.quotes import GROUNDED_THRESHOLD

Severity = Literal["error", "warning"]

OPEN_POOL_MIN, OPEN_POOL_MAX = 50, 100
POOL_SIZE = 8
MIN_UNIQUE_RECOMMENDATIONS = 3


@dataclass(frozen=True)
class Rule:
    """One dataset rule. ``template`` is formatted with the finding's fields (``str.format``).

    ``severity``: what ``crs validate`` reports; ``builder``: what the builder's QC reports (None: QC does
    not run the rule, e.g. the tier, which is assigned after QC; or file-level rules). ``needs_kb``: the
    rule is only checked when a KB is given.
    """

    code: str
    name: str
    checks: str
    template: str
    severity: Severity = "error"
    builder: Severity | None = "error"
    needs_kb: bool = False

    def __str__(self) -> str:
        return f"{self.code} {self.name}"


@dataclass(frozen=True)
class Finding:
    """A rule that failed: at ``turn`` (a turn's ``index``; None for the dialogue or the line)."""

    rule: Rule
    turn: int | None
    message: str
    severity: Severity

    @property
    def code(self) -> str:
        return self.rule.code

    @property
    def name(self) -> str:
        return self.rule.name

    def __str__(self) -> str:
        where = "dialogue" if self.turn is None else f"turn {self.turn}"
        return f"{self.rule} ({where}): {self.message}"


_T = f"{GROUNDED_THRESHOLD:.2f}"

# -- F: file and line (crs validate only) ------------------------------------------------------------
JSON = Rule("GT-F001", "json", "the line parses as JSON", "invalid JSON: {error}", builder=None)
SCHEMA = Rule(
    "GT-F002",
    "schema",
    "the line conforms to the dataset JSON Schema (generated from Dialogue)",
    "{path}: {error}",
    builder=None,
)
MODEL = Rule(
    "GT-F003",
    "model",
    "a schema-valid line loads as a Dialogue",
    "not a valid Dialogue: {error}",
    builder=None,
)
DUPLICATE_ID = Rule(
    "GT-F004",
    "duplicate-id",
    "dialogue ids are unique over the dataset's files",
    "dialogue id also used at {first}",
    builder=None,
)
MANIFEST = Rule(
    "GT-F005",
    "manifest",
    "a dataset folder has a manifest.json",
    "no manifest.json in the dataset folder",
    severity="warning",
    builder=None,
)
OLD_FORMAT = Rule(
    "GT-F006",
    "old-format",
    "(notice) a file holds lines of an older dataset format, read by migrating them to the current one",
    "{n} line(s) in dataset format {version}: checked as migrated to {current}; rewrite the files with "
    "`groundtrace crs migrate`",
    severity="warning",
    builder=None,
)
HELD_OUT_PHRASING = Rule(
    "GT-F007",
    "held-out-phrasing",
    "no constraint phrase of the test split (normalised label) occurs in train or validation",
    "{n} of {total} distinct test constraint phrase(s) also occur in train/validation: {examples}",
    severity="warning",
    builder=None,
)

# -- S: turn structure ------------------------------------------------------------------------------
TURN_INDEX = Rule(
    "GT-S001",
    "turn-index",
    "turns are numbered 0..n-1 in order",
    "turn at position {pos} has index {index}",
)
ALTERNATION = Rule(
    "GT-S002",
    "alternation",
    "the dialogue has turns, strictly alternating user/system from a user turn",
    "{detail}",
)
ACT = Rule(
    "GT-S003",
    "act",
    "a user turn uses a user act, a system turn a system act",
    "{role} act {act!r} is not one of {allowed}",
)
ROLE_FIELDS = Rule(
    "GT-S004",
    "role-fields",
    "user turns carry no system fields, system turns no user fields",
    "a {role} turn carries {fields}",
)
LABEL_IN_TEXT = Rule(
    "GT-S005",
    "label-in-text",
    "every constraint a user turn adds has its label (the phrase as spoken) inside the turn text",
    "constraint {kind}={value}: label {label!r} is not in the turn text",
)

# -- D: dialogue level ------------------------------------------------------------------------------
RECOMMENDATIONS = Rule(
    "GT-D001",
    "recommendations",
    f">= {MIN_UNIQUE_RECOMMENDATIONS} distinct POIs recommended over recommend/compare turns",
    "{n} unique POIs recommended in recommend/compare turns (need >= {need})",
)
COMPARISON = Rule("GT-D002", "comparison", "at least one system compare turn", "no system compare turn")
HAS_REJECTION = Rule(
    "GT-D003",
    "has-rejection",
    "has_rejection agrees with the presence of a reject_and_refine turn",
    "has_rejection is {flag} but the dialogue has {n} reject_and_refine turn(s)",
)
TIER = Rule(
    "GT-D004",
    "tier",
    "difficulty equals the tier recomputed from the measured features",
    "difficulty is {stored} but the measured features give {expected} ({points} points: {basis})",
    builder=None,
)
FEATURES = Rule(
    "GT-D005",
    "features",
    "tier features are stored and equal the measured ones",
    "{detail}",
    builder=None,
)

# -- R: rejection -----------------------------------------------------------------------------------
REFINE = Rule(
    "GT-R001",
    "refine",
    "a reject_and_refine turn adds a constraint",
    "reject_and_refine turn adds no constraint",
)
REJECT_NOTHING = Rule(
    "GT-R002",
    "reject-nothing",
    "a reject_and_refine turn rejects a POI",
    "reject_and_refine turn rejects no POI",
)
REJECTED_SATISFIES = Rule(
    "GT-R003",
    "rejected-satisfies",
    "a rejected POI violates the constraints its rejection adds",
    "rejected {poi} already satisfies the refinement",
    needs_kb=True,
)
REJECTED_RECOMMENDED = Rule(
    "GT-R004",
    "rejected-recommended",
    "the recommendation after a rejection is not a rejected POI",
    "recommends rejected POI {poi}",
)

# -- G: pools and gold labels -----------------------------------------------------------------------
POOL_SIZE_RULE = Rule(
    "GT-G001",
    "pool-size",
    "the closed pool has pool_size candidates (manifest config.plan, default 8)",
    "{n} candidates, expected {expected}",
)
POOL_DUPLICATES = Rule(
    "GT-G002", "pool-duplicates", "candidates are distinct", "candidates contain duplicate ids: {ids}"
)
GOLD_MISSING = Rule(
    "GT-G003", "gold-missing", "every recommend/compare turn has a gold label", "{act} turn without gold"
)
GOLD_NOT_MAIN = Rule(
    "GT-G004",
    "gold-not-main",
    "the gold POI is the turn's first recommended POI",
    "gold {poi} is not the main recommendation {main}",
)
GOLD_NOT_CANDIDATE = Rule(
    "GT-G005",
    "gold-not-candidate",
    "the gold POI is among the candidates",
    "gold POI {poi} is not among the candidates",
)
GOLD_VIOLATES = Rule(
    "GT-G006",
    "gold-violates",
    "the gold POI satisfies every active constraint",
    "gold POI {poi} violates an active constraint: {why}",
    needs_kb=True,
)
MULTI_REF_OUTSIDE = Rule(
    "GT-G007",
    "multi-ref-outside",
    "multi-reference POIs are among the candidates",
    "multi_ref POIs not among the candidates: {ids}",
)
MULTI_REF_VIOLATES = Rule(
    "GT-G008",
    "multi-ref-violates",
    "multi-reference POIs satisfy every active constraint",
    "multi_ref POI {poi} violates an active constraint: {why}",
    needs_kb=True,
)
MULTI_REF_MISSING = Rule(
    "GT-G009",
    "multi-ref-missing",
    "every candidate satisfying the active constraints is the gold POI or in multi_ref",
    "candidates {ids} satisfy the active constraints but are not in multi_ref "
    "(n_satisfying and the tier depend on it)",
    needs_kb=True,
)
OPEN_POOL_GOLD = Rule(
    "GT-G010", "open-pool-gold", "the gold POI is in the open pool", "gold POI {poi} is not in the open pool"
)
OPEN_POOL_DUPLICATES = Rule(
    "GT-G011", "open-pool-duplicates", "open-pool ids are distinct", "open_pool contains duplicate ids"
)
OPEN_POOL_SIZE = Rule(
    "GT-G012",
    "open-pool-size",
    f"open pool of [min({OPEN_POOL_MIN}, POIs of the KB), {OPEN_POOL_MAX}] POIs "
    "(a warning when the KB is small or there is no KB)",
    "open_pool has {n} POIs ({why})",
)
OPEN_POOL_POI = Rule(
    "GT-G013",
    "open-pool-poi",
    "open-pool POIs are of the dialogue's city and type (unless it has fewer than "
    f"{OPEN_POOL_MIN}: then the pool is widened with other cities' or types' POIs)",
    "open_pool POI {poi} is a {poi_type} in {city}, not a {want_type} in {want_city}",
    needs_kb=True,
)

ITINERARY_LEGS = Rule(
    "GT-G014",
    "itinerary-legs",
    "an itinerary's legs start at turn 0 with the dialogue's poi_type, candidates and anchor, then begin at "
    "later user request turns in order, each with another POI type than the leg before",
    "legs: {detail}",
)

# -- T: tags ----------------------------------------------------------------------------------------
TAG_UNKNOWN = Rule(
    "GT-T001",
    "tag-unknown",
    "every [Rn] of a text and of cited_tags is defined in review_refs",
    "{what} [{tag}] is not defined in review_refs",
)
CITED_TAGS = Rule(
    "GT-T002",
    "cited-tags",
    "cited_tags equals the distinct [Rn] tags of the text, in order of first use",
    "cited_tags {listed} != the text's tags {used}",
)
MISSING_CITATION = Rule(
    "GT-T003",
    "missing-citation",
    "a recommend/compare/explain turn cites a review",
    "{act} turn cites no review",
)
TAG_WRONG_POI = Rule(
    "GT-T004",
    "tag-wrong-poi",
    "a tag cites a review of a POI the turn recommends",
    "[{tag}] is a review of {poi}, not of {allowed} (a tag must cite a review of a POI the turn recommends)",
)

# -- K: KB references ---------------------------------------------------------------------------------
KB_POI = Rule(
    "GT-K001", "kb-poi", "every POI id is in the KB", "{what} {poi} is not in the KB", needs_kb=True
)
KB_REVIEW = Rule(
    "GT-K002", "kb-review", "every review id is in the KB", "{what} {review} is not in the KB", needs_kb=True
)
REF_POI = Rule(
    "GT-K003",
    "ref-poi",
    "a review_refs entry names a review of that POI",
    "{tag}: review {review} is a review of {actual}, not of {poi}",
    needs_kb=True,
)
KB_HASH = Rule(
    "GT-K004",
    "kb-hash",
    "the dialogue was built on the KB it is checked against",
    "dialogue was built on KB {built}…, validating against {given}…",
    severity="warning",
    builder=None,
    needs_kb=True,
)

# -- Q: quotes and quote spans --------------------------------------------------------------------------
QUOTE_SPAN_RANGE = Rule(
    "GT-Q001",
    "quote-span-range",
    "a quote span lies inside its turn text and inside its review",
    "{what} span {start}-{end} outside {where} (length {length})",
)
QUOTE_SPAN_REF = Rule(
    "GT-Q002",
    "quote-span-ref",
    "a quote span's tag is a tag of the turn's text and points to the span's review",
    "quote span of {tag}: {detail}",
)
QUOTE_NOT_IN_REVIEW = Rule(
    "GT-Q003",
    "quote-not-in-review",
    f"a cited quote matches each review its tags point to with quote_score >= {_T}",
    "quote {quote!r} matches cited review(s) {tags} only at {scores} (< " + _T + ")",
    needs_kb=True,
)
QUOTE_SPAN_MISMATCH = Rule(
    "GT-Q004",
    "quote-span-mismatch",
    f"a quote span's turn text matches its review slice with quote_score >= {_T}",
    "span text {quote!r} matches review {review}[{start}:{end}] only at {score:.2f}",
    needs_kb=True,
)
QUOTE_SPAN_VERBATIM = Rule(
    "GT-Q005",
    "quote-span-verbatim",
    "a quote span's turn text is its review slice verbatim (the builder quotes verbatim; "
    "the release format allows near-verbatim spans)",
    "span {start}-{end} of [{tag}] is not its review slice verbatim",
    severity="warning",
    needs_kb=True,
)
QUOTE_UNCOVERED = Rule(
    "GT-Q006",
    "quote-uncovered",
    "every cited quote is covered by a quote_spans entry (else a redacted release keeps its text)",
    "quote {quote!r} has no quote_spans entry: a redacted release would keep its text",
    severity="warning",
    builder=None,
)

EVIDENCE_STANCE = Rule(
    "GT-Q007",
    "evidence-stance",
    "in recommend/compare/explain turns a quoted negative review sentence follows a warning cue and a "
    "positive one does not (the KB's stored sentence stance)",
    "{quote!r} [{tag}] is {detail}",
    needs_kb=True,
)

# -- P: redacted releases -------------------------------------------------------------------------------
REDACTED = Rule(
    "GT-P001",
    "redacted",
    "(notice) a file holds redacted dialogues: quote checks are skipped until `crs hydrate`",
    "{n} dialogue(s) are redacted ({detail}): quote checks skipped, run `groundtrace crs hydrate` first to "
    "check them; {checked}",
    severity="warning",
    builder=None,
)
PLACEHOLDER = Rule(
    "GT-P002",
    "placeholder",
    "a ⟦Q:…⟧ placeholder parses, names a review a tag of the turn points to, and lies inside it",
    "{detail}",
    builder=None,
)
PLACEHOLDER_MISSING = Rule(
    "GT-P003",
    "placeholder-missing",
    "each quote span of a redacted turn has its placeholder",
    "quote span of {tag} ({review} {start}-{end}) has no placeholder in the redacted text",
    builder=None,
)

#: every rule, in declaration order (the order of the docs table and of ``build_report.json`` counts)
RULES: tuple[Rule, ...] = tuple(v for v in dict(globals()).values() if isinstance(v, Rule))
BY_CODE: dict[str, Rule] = {r.code: r for r in RULES}
BY_NAME: dict[str, Rule] = {r.name: r for r in RULES}


def rule(code_or_name: str) -> Rule:
    """The rule with this code (``GT-Q003``) or name (``quote-not-in-review``); KeyError names both forms."""
    found = BY_CODE.get(code_or_name) or BY_NAME.get(code_or_name)
    if found is None:
        raise KeyError(f"no dataset rule {code_or_name!r} (codes GT-F001…, names as in docs/crs-dataset.md)")
    return found


@dataclass(frozen=True)
class PoolLimits:
    """The builder's pool knobs the rules use (``manifest.json`` ``config.plan`` when present)."""

    pool_size: int = POOL_SIZE
    open_min: int = OPEN_POOL_MIN
    open_max: int = OPEN_POOL_MAX
