"""Grounding metrics (8): GS, CD, PC, CGS, NLI entailment, citation validity, citation rate, hallucination.

Definitions used by several of them (see :mod:`.context` and :mod:`._evidence`):

* *tag group* — one ``[R1]`` / ``[R1, R3]`` occurrence; *tag* — one id inside a group;
* *claim* — the stretch of a sentence that a tag group closes (``core.citations.parse_citations``);
* *quoted citation* — every quote (``"..."``, ``“...”``, ``'...'``, ``‘...’``, ``„...“``, ``«...»``)
  inside a claim that carries tags, cited by all of that claim's tags: in ``I like "a" and "b" [R1].``
  both quotes are cited by R1 (not only the one right before the tag);
* *counted* citation, *backed* and *bare* tag group, *unresolved* tag — the anti-gaming rules of
  :mod:`.support` (a tag counts only with a verbatim quote of the review it resolves to);
* *mention* — a match of one of the 41 attribute-lexicon terms (:mod:`.lexicon`);
* *recommended set* — the first 3 ranked ids that are KB POIs.
"""

from __future__ import annotations

from bisect import bisect_left

from groundtrace.crs.metrics.base import Metric, MetricFamily, register
from groundtrace.crs.metrics.context import RunState, TurnContext
from groundtrace.crs.metrics.text_claims import name_spans

PC_WINDOW_CHARS = 80
CD_SATURATION = 0.05
NLI_THRESHOLD = 0.5


# -- kernels (plain functions of one turn) -------------------------------------------------------
def gs_value(ctx: TurnContext) -> float:
    return ctx.memoised("gs", _gs_compute)


def _gs_compute(ctx: TurnContext) -> float:
    g = ctx.grounding
    if g.over_limit:
        return 0.0
    if not g.attempts:
        return 1.0
    return len(g.counted) / g.attempts


def citation_regions(ctx: TurnContext) -> list[tuple[int, int]]:
    """Character regions whose tokens are citation tokens: counted quotes' inner text and backed groups."""
    g = ctx.grounding
    regions = [(c.start, c.end) for c in g.counted]
    regions += [(b.start, b.end) for b in g.backed_groups]
    regions.sort()
    merged: list[tuple[int, int]] = []
    for s, e in regions:
        if merged and s <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], e))
        else:
            merged.append((s, e))
    return merged


def cd_value(ctx: TurnContext) -> float:
    return ctx.memoised("cd", _cd_compute)


def _cd_compute(ctx: TurnContext) -> float:
    spans = ctx.token_spans
    if not spans or ctx.over_limit:
        return 0.0
    regions = citation_regions(ctx)
    if not regions:
        return 0.0
    return tokens_inside(spans, regions) / len(spans)


def tokens_inside(spans: list[tuple[int, int]], regions: list[tuple[int, int]]) -> int:
    """How many of the token ``spans`` (sorted, disjoint) lie wholly inside one of the ``regions``
    (sorted, disjoint, not touching: :func:`citation_regions`)."""
    starts = [s for s, _ in spans]
    inside = 0
    for a, b in regions:
        # the tokens starting in [a, b) are consecutive; each but the last ends before the next one
        # starts, so only the last may end after b
        i, j = bisect_left(starts, a), bisect_left(starts, b)
        if j > i:
            inside += j - i - (spans[j - 1][1] > b)
    return inside


def pc_value(ctx: TurnContext) -> float:
    return ctx.memoised("pc", _pc_compute)


def _pc_compute(ctx: TurnContext) -> float:
    if ctx.over_limit:
        return 0.0
    mentions = ctx.mentions
    if not mentions:
        return 1.0
    groups = ctx.grounding.backed_groups  # disjoint and in text order, so their ends are sorted too
    starts = [g.start for g in groups]
    covered = 0
    for m in mentions:
        # the nearest group on the left is the last one starting before m, on the right the first one
        # starting at or after m: O(log groups) per mention, however many groups a response holds
        i = bisect_left(starts, m.start)
        near = groups[max(0, i - 1) : i + 1]
        if any(max(0, g.start - m.end, m.start - g.end) <= PC_WINDOW_CHARS for g in near):
            covered += 1
    return covered / len(mentions)


def cgs_value(ctx: TurnContext) -> float:
    return gs_value(ctx) * min(1.0, cd_value(ctx) / CD_SATURATION) * (0.5 + 0.5 * pc_value(ctx))


def _gs(metric: Metric, ctx: TurnContext) -> float:
    return gs_value(ctx)


def _cd(metric: Metric, ctx: TurnContext) -> float:
    return cd_value(ctx)


def _pc(metric: Metric, ctx: TurnContext) -> float:
    return pc_value(ctx)


def _cgs(metric: Metric, ctx: TurnContext) -> float:
    return cgs_value(ctx)


def _nli(metric: Metric, ctx: TurnContext) -> tuple[float, float]:
    scores = ctx.run.entailment
    if scores is None:
        raise RuntimeError("NLI entailment needs an entailment scorer (the run marks it unavailable)")
    entailed = 0
    for hypothesis, review_ids in ctx.claims:
        best = max((scores[(ctx.run.kb.reviews[r].text, hypothesis)] for r in review_ids), default=0.0)
        entailed += best >= NLI_THRESHOLD
    return float(entailed), float(len(ctx.claims))


def _citation_validity(metric: Metric, ctx: TurnContext) -> float | None:
    tags = [tag for g in ctx.tag_groups for tag in g.tags]
    if not tags:
        return None
    recommended = set(ctx.recommended)
    valid = 0
    for tag in tags:
        ref = ctx.resolve(tag)
        valid += ref is not None and ref.poi_id in recommended
    return valid / len(tags)


def _citation_rate(metric: Metric, ctx: TurnContext) -> float:
    return 1.0 if ctx.tag_groups else 0.0


def support_pois(ctx: TurnContext) -> list[str]:
    """POIs a response's attribute claims may be about: the recommended set plus POIs of cited reviews."""
    pois = list(ctx.recommended)
    for g in ctx.tag_groups:
        for tag in g.tags:
            ref = ctx.resolve(tag)
            if ref is not None and ref.poi_id in ctx.run.kb.pois and ref.poi_id not in pois:
                pois.append(ref.poi_id)
    return pois


#: definition version of hallucinated_attribute_rate (2: judged against the POI each claim is about;
#: a recorded KB attribute that contradicts the term makes it false even when a review uses the word;
#: words inside counted quotes are the reviewer's, not claims)
HALLUCINATION_VERSION = 2


def term_true_of(ctx: TurnContext, poi_id: str, term_id: str) -> bool:
    """:func:`term_true` for the turn's run."""
    return term_true(ctx.run, poi_id, term_id)


def term_true(run: RunState, poi_id: str, term_id: str) -> bool:
    """Whether the KB says ``term_id`` is true of ``poi_id``: one of the term's support rules holds, or a
    category label of the POI names it ("Breakfast & Brunch"), or no rule's attribute is recorded for the
    POI (nothing contradicts it) and one of its reviews names the term. Cached for the run."""
    key = ("term_true", poi_id, term_id)
    cache = run.cache
    found = cache.get(key)
    if found is None:
        poi = run.kb.pois[poi_id]
        term = run.lexicon.terms[term_id]
        if term.supported_by_kb(poi) or term_id in run.category_terms(poi_id):
            found = True
        else:
            recorded = any(r.attribute and poi.attributes.get(r.attribute) is not None for r in term.support)
            found = not recorded and term_id in run.review_terms(poi_id)
        cache[key] = found
    return found  # type: ignore[no-any-return]


def _names(ctx: TurnContext, pois: list[str]) -> list[tuple[int, int, str]]:
    key = "names:" + ",".join(pois)
    spans = ctx.memo.get(key)
    if spans is None:
        kb = ctx.run.kb
        spans = ctx.memo[key] = name_spans(ctx.response, {p: kb.pois[p].name for p in pois})
    return spans  # type: ignore[no-any-return]


def claimed_of(ctx: TurnContext, pois: list[str], at: int) -> str:
    """The POI of ``pois`` an attribute word at ``at`` is claimed of: the one named last before it in the
    answer (``text_claims.name_spans``), else the first of ``pois`` (the top-1)."""
    found = pois[0]
    for where, _end, poi_id in _names(ctx, pois):
        if where > at:
            break
        found = poi_id
    return found


def _hallucinated(metric: Metric, ctx: TurnContext) -> float:
    quoted = [(c.start, c.end) for c in ctx.grounding.counted]
    pois = support_pois(ctx)
    named = [(s, e) for s, e, _p in _names(ctx, pois)] if pois else []
    claims = [
        m
        for m in ctx.mentions
        if not any(s <= m.start and m.end <= e for s, e in quoted)
        and not any(s < m.end and m.start < e for s, e in named)
    ]
    if not claims:
        return 0.0
    if not pois:
        return 1.0
    false = sum(1 for m in claims if not term_true_of(ctx, claimed_of(ctx, pois, m.start), m.term))
    return false / len(claims)


# -- registrations -------------------------------------------------------------------------------
GS = register(
    MetricFamily(
        name="gs",
        defaults=(None,),
        axis="grounding",
        level="turn",
        aggregation="turn-mean",
        higher_is_better=True,
        default=0.0,
        kernel=_gs,
        formula=(
            "Grounding score: GS = counted quoted citations / (quoted citations + bare tag groups +\n"
            "unresolved tags); 1.0 when the response has none of the three (the loophole CGS closes).\n"
            "A quoted citation (a quote inside a claim that carries tags, cited by all the claim's tags)\n"
            "counts when one of its tags supports it (rules S1-S5 of groundtrace.crs.metrics.support: >= 2\n"
            "words, not an echo of the user, quote_score >= 0.80 against the tag's review, no added\n"
            "negation or hedge inside or right before the quote) and it does not repeat an earlier counted\n"
            "(quote, review). A bare group closes a claim without a quote; an unresolved tag is an error.\n"
            "Only the first 64 quoted citations are examined; a response over 50,000 characters scores 0.\n"
            "Missing prediction: 0."
        ),
    ),
    aliases=("grounding_score",),
)

CD = register(
    MetricFamily(
        name="cd",
        defaults=(None,),
        axis="grounding",
        level="turn",
        aggregation="turn-mean",
        higher_is_better=True,
        default=0.0,
        kernel=_cd,
        formula=(
            "Citation density: CD = citation tokens / response tokens (groundtrace.core.evidence.tokens).\n"
            "Citation tokens = response tokens inside the inner text of a counted quoted citation (see GS;\n"
            "quote marks excluded) or inside a backed tag group ('[', 'R1', ',', 'R3', ']': a group with a\n"
            "tag that supports a counted quote of its claim); counted once, so CD ∈ [0, 1]. 0 for an empty\n"
            "response or one over 50,000 characters. Missing prediction: 0."
        ),
    ),
    aliases=("citation_density",),
)

PC = register(
    MetricFamily(
        name="pc",
        defaults=(None,),
        axis="grounding",
        level="turn",
        aggregation="turn-mean",
        higher_is_better=True,
        default=0.0,
        kernel=_pc,
        formula=(
            "Provenance coverage: PC = |{attribute-term mentions m : some backed tag group g (see CD) has\n"
            "max(0, g.start - m.end, m.start - g.end) <= 80 characters}| / |mentions| (41-term lexicon).\n"
            "1.0 when the response mentions no attribute term; 0 over 50,000 characters.\n"
            "Missing prediction: 0."
        ),
    ),
    aliases=("provenance_coverage",),
)

CGS = register(
    MetricFamily(
        name="cgs",
        defaults=(None,),
        axis="grounding",
        level="turn",
        aggregation="turn-mean",
        higher_is_better=True,
        default=0.0,
        kernel=_cgs,
        formula=(
            "Composite grounding score, per turn: CGS = GS × min(1, CD / 0.05) × (0.5 + 0.5 × PC);\n"
            "mean over turns. Missing prediction: 0."
        ),
    ),
    aliases=("composite_grounding",),
)

NLI = register(
    MetricFamily(
        name="nli_entailment",
        defaults=(None,),
        axis="grounding",
        level="turn",
        aggregation="pooled",
        higher_is_better=True,
        default=0.0,
        requires="entailment",
        kernel=_nli,
        formula=(
            "NLI entailment rate, pooled over claims: Σ entailed claims / Σ claims. A claim is a sentence\n"
            "carrying >= 1 tag group; hypothesis = the sentence without tags and quote marks; "
            "it is entailed\n"
            "when max over its resolvable cited reviews of P(entail | review text, hypothesis) >= 0.5\n"
            "(claims citing no resolvable review are not entailed). Needs an EntailmentScorer; without one\n"
            "the metric is reported unavailable, never 0. A missing prediction counts as one "
            "unentailed claim."
        ),
    ),
    aliases=("nli", "entailment"),
)

CITATION_VALIDITY = register(
    MetricFamily(
        name="citation_validity",
        defaults=(None,),
        axis="grounding",
        level="turn",
        aggregation="turn-mean",
        higher_is_better=True,
        default=0.0,
        kernel=_citation_validity,
        formula=(
            "Citation validity: CV = |{tag occurrences t : t resolves (review_refs; open: "
            "open_review_refs) to a\n"
            "review whose POI is in the recommended set (first 3 ranked KB POIs)}| / |tag occurrences|.\n"
            "Not applicable (left out) when the response has no tag. Missing prediction: 0."
        ),
    ),
    aliases=("cv", "valid_citations"),
)

CITATION_RATE = register(
    MetricFamily(
        name="citation_rate",
        defaults=(None,),
        axis="grounding",
        level="turn",
        aggregation="turn-mean",
        higher_is_better=True,
        default=0.0,
        kernel=_citation_rate,
        formula="Citation rate: share of responses with >= 1 [Rn] tag group. Missing prediction: 0.",
    ),
    aliases=("cr",),
)

HALLUCINATED = register(
    MetricFamily(
        name="hallucinated_attribute_rate",
        defaults=(None,),
        axis="grounding",
        level="turn",
        aggregation="turn-mean",
        higher_is_better=False,
        default=1.0,
        kernel=_hallucinated,
        version=HALLUCINATION_VERSION,
        formula=(
            "Hallucinated-attribute rate (v2): HAR = |{claims m : term(m) false of POI(m)}| / |claims|.\n"
            "Claims: lexicon mentions outside counted quotes, anchor names and the names of S's POIs.\n"
            "POI(m): the POI of S (recommended set ∪ POIs of resolvable cited reviews) named last before\n"
            "m, else the top-1. A term is true of p\n"
            "when a lexicon support rule holds on p's KB record or a category label of p names it, or\n"
            "none of the rules' attributes is recorded for p (nothing contradicts) and a KB review of p\n"
            "names the term.\n"
            "0.0 when there is no claim (1.0 with claims but no KB POI). Lower is better.\n"
            "Missing prediction: 1.0 (worst)."
        ),
    ),
    aliases=("har", "hallucination_rate", "hallucinated"),
)
