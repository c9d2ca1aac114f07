"""Reconcile findings into one Candidate per attribute: normalise, merge, prioritise, or abstain.

Inputs: the :class:`~groundtrace.catalog.scout.engine.Finding` objects for one SKU (from own evidence and
identity-matched pages), the findings taken from pages *rejected* by identity matching (kept only to
tell ``identity_mismatch`` from ``not_found``), and an engine's explicit abstentions.

Rules, per attribute:

1. **tiers** — a finding's tier is ``(SOURCE_PRIORITY[source], SOURCE_TYPE_RANK[source_type])``:
   catalog < syndicated < image < web, and inside web official < major retailer < retailer <
   aggregator < other. Only the best (lowest) tier that has findings decides; lower tiers can only add
   provenance to the same value (web fills gaps, never overrides the catalog). Inside that tier,
   explicit ``key: value`` fields outrank free-text mentions. Findings flagged as injection quotes are
   never used.
2. **values** are normalised with ``core.normalize.normalize_value`` and compared with
   ``values_equal`` (boolean synonyms, abbreviations, units; numbers within 2 % or 0.5 absolute).
3. single-valued: one Document of the deciding tier naming two different values → ``ambiguous``;
   two Documents of that tier disagreeing → ``conflict``; otherwise ``extracted``.
   multi-valued (allergens, labels): the union of the deciding tier's values, each with its evidence.
4. no usable finding: ``identity_mismatch`` when pages rejected by identity had one (the note names each
   page and why it was rejected: the differing product-line or variant words), else the engine's
   abstention status (e.g. ``not_applicable``) when it gave one, else ``not_found``. Non-extracted
   candidates have ``value=None`` and confidence 0.
5. **conflicts are shown, not buried**: a single-valued catalog value that a GTIN-matched source (the
   syndicated feed, keyed by GTIN, or a web page whose GTIN matched) contradicts in an explicit
   ``key: value`` field → ``conflict`` with ``value=None``, the evidence of *every* side (one quote per
   value, best first) and a note naming each value with its source, so the write policy routes it to
   REVIEW and the review page shows both. (Rule 3's equal-priority conflicts, e.g. the catalog title vs
   its description, stay evidence-less abstentions: BLOCK, as before.)

**Confidence** of an extracted value (documented formula, always in [0, 1])::

    s_d  = w(source, source_type) · q_d                for each Document d agreeing with the value
    s_g  = max_{d in g} s_d                             g: an independent source (see below)
    conf = (1 − Π_g (1 − s_g)) · Π_h (1 − ½ · s_h)      h: lower-tier sources naming another value
    conf = min(conf, 0.99)

``q_d`` is the best match quality in d (1.0 explicit field, 0.85 sentence naming the attribute, 0.75
vocabulary mention, 0.6 bare quantity; for LLM findings min(quote score, model confidence)). Weights
``w``: catalog 0.90, syndicated/hq 0.85, image 0.70, web official 0.75, major retailer 0.65,
retailer 0.55, aggregator 0.45, other 0.35. Multi-valued: the minimum over its values. A value whose
evidence carries ``quote_not_found`` gets confidence 0 and a note (the Judge fails it as HALLUCINATION).

**Independent sources** (:func:`source_group`): the merchant record is *one* source however many of its
fields repeat a value (title, description, brand and spec Documents), likewise the syndicated feed and
the package images; on the web each host is one source. Only independent sources combine by noisy-or.
Measured on WDC-PAVE (docs/catalog-scout.md): a value mentioned in both the title and the description
was right 76 % of the time against 84 % for a description mention alone, so counting the fields as
independent (0.675 → 0.894) wrote more wrong values at θ = 0.7 than it saved. Single-source scores are
unchanged: an explicit catalog field 0.90, a catalog sentence naming the attribute 0.765 (both written
at θ = 0.7), a bare mention 0.675 and a bare quantity 0.54 (blocked).
"""

from __future__ import annotations

from collections import defaultdict
from urllib.parse import urlsplit

from groundtrace.catalog.model import (
    SOURCE_PRIORITY,
    SOURCE_TYPE_RANK,
    AttributeSpec,
    Candidate,
    CandidateStatus,
    Evidence,
)
from groundtrace.catalog.scout.engine import FLAG_INJECTION, FLAG_QUOTE_NOT_FOUND, Abstention, Finding

SOURCE_WEIGHT: dict[str, float] = {
    "catalog": 0.90,
    "hq": 0.85,
    "image": 0.70,
    "official_web": 0.75,
    "official_doc": 0.75,
    "major_retailer": 0.65,
    "retailer": 0.55,
    "aggregator": 0.45,
    "other": 0.35,
}
CONFIDENCE_CAP = 0.99


def tier(ev: Evidence) -> tuple[int, int]:
    """Evidence priority: (source priority, web source-type rank); lower is better."""
    rank = SOURCE_TYPE_RANK[ev.source_type] if ev.source == "web" else 0
    return (SOURCE_PRIORITY[ev.source], rank)


def weight(ev: Evidence) -> float:
    return SOURCE_WEIGHT.get(ev.source_type, SOURCE_WEIGHT["other"])


def finding_quality(f: Finding) -> float:
    return f.quality if f.confidence is None else min(f.quality, f.confidence)


def _kind(spec: AttributeSpec) -> str:
    return spec.type


def canonical(value: str, spec: AttributeSpec) -> str:
    """The stored form of a value: ``core.normalize.normalize_value`` for enums, booleans and numbers
    with a template unit; strings and unit-less numbers keep their surface form (brand casing,
    "12 fl oz"), equality always goes through :func:`same_value`."""
    if spec.type == "string" or (spec.type == "number" and not spec.unit):
        return value.strip()
    # deferred: core.evidence.normalize loads pint/scipy (~0.2 s), not needed for strings
    from groundtrace.core.evidence.normalize import normalize_value

    out = normalize_value(value, spec.type, spec.unit, spec.allowed_values or None)
    return value if out is None else out


def same_value(a: str, b: str, spec: AttributeSpec) -> bool:
    """``core.normalize.values_equal`` (synonyms, abbreviations, units, 2 % / 0.5 numeric tolerance)."""
    if a == b:
        return True
    # deferred: core.evidence.normalize loads pint/scipy (~0.2 s)
    from groundtrace.core.evidence.normalize import values_equal

    return bool(values_equal(a, b, _kind(spec), spec.unit))


def _cluster(findings: list[Finding], spec: AttributeSpec) -> list[tuple[str, list[Finding]]]:
    """Group findings by equal value; a cluster is named by its first (best-tier) member's value."""
    clusters: list[tuple[str, list[Finding]]] = []
    for f in sorted(findings, key=lambda f: (tier(f.evidence), -finding_quality(f))):
        for value, members in clusters:
            if same_value(value, f.value, spec):
                members.append(f)
                break
        else:
            clusters.append((f.value, [f]))
    return clusters


def source_group(ev: Evidence) -> str:
    """The independent source a piece of evidence belongs to: ``catalog``, ``syndicated``, ``image``, or
    ``web:<host>`` (host of its URL, else of its ``source_ref``; the ref itself when neither is a URL)."""
    if ev.source != "web":
        return ev.source
    for ref in (ev.url, ev.source_ref):
        if ref:
            host = urlsplit(ref if "//" in ref else f"//{ref}").hostname
            if host and "." in host:
                return f"web:{host.removeprefix('www.')}"
    return f"web:{ev.source_ref}"


def _best_per_source(findings: list[Finding]) -> dict[str, float]:
    best: dict[str, float] = defaultdict(float)
    for f in findings:
        key = source_group(f.evidence)
        best[key] = max(best[key], weight(f.evidence) * finding_quality(f))
    return best


def noisy_or_confidence(agree: list[Finding], disagree: list[Finding]) -> float:
    """The module-docstring formula over agreeing / lower-tier disagreeing findings."""
    miss = 1.0
    for s in _best_per_source(agree).values():
        miss *= 1.0 - s
    conf = 1.0 - miss
    for s in _best_per_source(disagree).values():
        conf *= 1.0 - 0.5 * s
    return round(max(0.0, min(CONFIDENCE_CAP, conf)), 4)


def _abstain(sku_id: str, spec: AttributeSpec, status: CandidateStatus, engine: str, note: str) -> Candidate:
    return Candidate(
        sku_id=sku_id,
        attribute=spec.slug,
        value=None,
        evidence=[],
        confidence=0.0,
        status=status,
        engine=engine,
        note=note,
    )


def _without_usable_findings(
    sku_id: str,
    spec: AttributeSpec,
    rejected: list[Finding] | None,
    abstention: Abstention | None,
    engine: str,
    notes: list[str],
    reasons: dict[str, str] | None = None,
) -> Candidate:
    """The abstention when no finding is usable: identity mismatch (only rejected pages had evidence; each
    page with the reason it was rejected), the engine's own abstention, else not found."""
    if rejected:
        refs = sorted({f.evidence.source_ref for f in rejected})
        shown = [f"{ref} ({reasons[ref]})" if reasons and reasons.get(ref) else ref for ref in refs[:5]]
        notes.append("only evidence came from pages rejected by identity matching: " + ", ".join(shown))
        return _abstain(sku_id, spec, CandidateStatus.IDENTITY_MISMATCH, engine, "; ".join(notes))
    if abstention is not None and abstention.status != CandidateStatus.EXTRACTED:
        notes.append(abstention.note)
        return _abstain(sku_id, spec, abstention.status, engine, "; ".join(n for n in notes if n))
    notes.append("no evidence")
    return _abstain(sku_id, spec, CandidateStatus.NOT_FOUND, engine, "; ".join(notes))


def _flag_unlocated_quote(flags: set[str], notes: list[str], conf: float) -> float:
    """Confidence 0 (and a note) when a finding's quote was not found in its stored source text."""
    if FLAG_QUOTE_NOT_FOUND in flags:
        notes.append(f"flag:{FLAG_QUOTE_NOT_FOUND}: a quote is not in its stored source text")
        return 0.0
    return conf


def _multi_valued(
    sku_id: str,
    spec: AttributeSpec,
    usable: list[Finding],
    clusters: list[tuple[str, list[Finding]]],
    engine: str,
    notes: list[str],
) -> Candidate:
    """Every top-tier value (allowed-value order), evidence of all agreeing findings, confidence = the
    lowest per-value noisy-OR."""
    values: list[str] = []
    evidence: list[Evidence] = []
    confidences: list[float] = []
    flags: set[str] = set()
    for value, _members in clusters:
        agree = [f for f in usable if same_value(value, f.value, spec)]
        values.append(canonical(value, spec))
        confidences.append(noisy_or_confidence(agree, []))
        for f in sorted(agree, key=lambda f: tier(f.evidence)):
            flags.update(f.flags)
            if f.evidence not in evidence:
                evidence.append(f.evidence)
    order = {v: i for i, v in enumerate(spec.allowed_values)}
    values = sorted(dict.fromkeys(values), key=lambda v: (order.get(v, len(order)), v))
    conf = _flag_unlocated_quote(flags, notes, min(confidences))
    return Candidate(
        sku_id=sku_id,
        attribute=spec.slug,
        value=values,
        evidence=evidence,
        confidence=conf,
        status=CandidateStatus.EXTRACTED,
        engine=engine,
        note="; ".join(notes),
    )


def _disagreement(
    spec: AttributeSpec, top: list[Finding], clusters: list[tuple[str, list[Finding]]]
) -> tuple[CandidateStatus, str] | None:
    """AMBIGUOUS when one document names several values, CONFLICT when equal-priority sources differ, with
    the note saying where; None when the top tier agrees on one value."""
    by_doc: dict[str, list[Finding]] = defaultdict(list)
    for f in top:
        by_doc[f.evidence.source_ref].append(f)
    for ref, doc_findings in by_doc.items():
        doc_clusters = _cluster(doc_findings, spec)
        if len(doc_clusters) > 1:
            shown = ", ".join(repr(v) for v, _ in doc_clusters[:4])
            return CandidateStatus.AMBIGUOUS, f"ambiguous: {ref} names several values ({shown})"
    if len(clusters) > 1:
        shown = "; ".join(
            f"{members[0].evidence.source_ref} says {value!r}" for value, members in clusters[:4]
        )
        return CandidateStatus.CONFLICT, f"conflict between sources of equal priority: {shown}"
    return None


def _gtin_matched(f: Finding, gtin_refs: set[str] | frozenset[str]) -> bool:
    """Evidence from a source tied to the SKU by its GTIN: the syndicated feed (keyed by GTIN) or a page
    whose GTIN matched the SKU's."""
    return f.evidence.source == "syndicated" or f.evidence.source_ref in gtin_refs


def _conflict(
    sku_id: str,
    spec: AttributeSpec,
    clusters: list[tuple[str, list[Finding]]],
    engine: str,
    notes: list[str],
) -> Candidate:
    """A ``conflict`` abstention that shows every side: the best quote of each value as evidence."""
    evidence: list[Evidence] = []
    for _value, members in clusters[:4]:
        best = min(members, key=lambda f: (tier(f.evidence), -finding_quality(f)))
        if best.evidence not in evidence:
            evidence.append(best.evidence)
    return Candidate(
        sku_id=sku_id,
        attribute=spec.slug,
        value=None,
        evidence=evidence,
        confidence=0.0,
        status=CandidateStatus.CONFLICT,
        engine=engine,
        note="; ".join(notes),
    )


def _side(f: Finding) -> str:
    if f.evidence.source == "catalog":
        return "the catalog record"
    if f.evidence.source == "syndicated":
        return "the GTIN-matched syndicated feed"
    return f"the GTIN-matched {f.evidence.source_type} page"


def reconcile_attribute(
    sku_id: str,
    spec: AttributeSpec,
    findings: list[Finding],
    rejected: list[Finding] | None = None,
    abstention: Abstention | None = None,
    engine: str = "",
    *,
    rejected_reasons: dict[str, str] | None = None,
    gtin_matched: set[str] | frozenset[str] = frozenset(),
) -> Candidate:
    """One Candidate for ``spec`` from its findings (rules in the module docstring). ``rejected_reasons``:
    source_ref → why identity matching rejected that page; ``gtin_matched``: source_refs of web pages
    whose GTIN matched the SKU's (the syndicated feed always counts as GTIN-matched)."""
    notes: list[str] = []
    injected = [f for f in findings if FLAG_INJECTION in f.flags]
    if injected:
        notes.append(f"ignored {len(injected)} finding(s) quoting instruction-like text (prompt injection)")
    usable = [f for f in findings if FLAG_INJECTION not in f.flags]
    if not usable:
        return _without_usable_findings(sku_id, spec, rejected, abstention, engine, notes, rejected_reasons)

    best = min(tier(f.evidence) for f in usable)
    top = [f for f in usable if tier(f.evidence) == best]
    if any(f.explicit for f in top):
        top = [f for f in top if f.explicit]
    clusters = _cluster(top, spec)
    if spec.multi_valued:
        return _multi_valued(sku_id, spec, usable, clusters, engine, notes)
    problem = _disagreement(spec, top, clusters)
    if problem is not None:
        status, note = problem
        notes.append(note)
        return _abstain(sku_id, spec, status, engine, "; ".join(notes))

    value = clusters[0][0]
    agree = [f for f in usable if same_value(value, f.value, spec)]
    disagree = [f for f in usable if f not in agree]
    contradicting = [
        f
        for f in disagree
        if f.explicit and _gtin_matched(f, gtin_matched) and agree and agree[0].evidence.source == "catalog"
    ]
    if contradicting:
        sides = [(value, agree), *_cluster(contradicting, spec)]
        notes.append(
            "conflict: "
            + "; ".join(
                f"{_side(members[0])} says {v!r} ({members[0].evidence.source_ref})"
                for v, members in sides[:4]
            )
        )
        return _conflict(sku_id, spec, sides, engine, notes)
    if disagree:
        refs = sorted({f.evidence.source_ref for f in disagree})
        notes.append("other sources name another value (not used): " + ", ".join(refs[:5]))
    flags = {flag for f in agree for flag in f.flags}
    conf = _flag_unlocated_quote(flags, notes, noisy_or_confidence(agree, disagree))
    evidence: list[Evidence] = []
    for f in sorted(agree, key=lambda f: (tier(f.evidence), -finding_quality(f))):
        if f.evidence not in evidence:
            evidence.append(f.evidence)
    return Candidate(
        sku_id=sku_id,
        attribute=spec.slug,
        value=canonical(value, spec),
        evidence=evidence,
        confidence=conf,
        status=CandidateStatus.EXTRACTED,
        engine=engine,
        note="; ".join(notes),
    )


def reconcile(
    sku_id: str,
    attributes: list[AttributeSpec],
    findings: list[Finding],
    rejected: list[Finding] | None = None,
    abstentions: dict[str, Abstention] | None = None,
    engine: str = "",
    *,
    rejected_reasons: dict[str, str] | None = None,
    gtin_matched: set[str] | frozenset[str] = frozenset(),
) -> dict[str, Candidate]:
    """``{slug: Candidate}`` for every attribute of the template (order kept); keyword options as
    :func:`reconcile_attribute`."""
    by_attr: dict[str, list[Finding]] = defaultdict(list)
    for f in findings:
        by_attr[f.attribute].append(f)
    rejected_by: dict[str, list[Finding]] = defaultdict(list)
    for f in rejected or []:
        rejected_by[f.attribute].append(f)
    abstentions = abstentions or {}
    return {
        spec.slug: reconcile_attribute(
            sku_id,
            spec,
            by_attr.get(spec.slug, []),
            rejected_by.get(spec.slug),
            abstentions.get(spec.slug),
            engine,
            rejected_reasons=rejected_reasons,
            gtin_matched=gtin_matched,
        )
        for spec in attributes
    }
