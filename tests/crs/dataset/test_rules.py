"""One dataset rule set: the catalogue is well formed and documented, and every rule fires — with its code —
in both the builder's QC and ``crs validate`` on a dialogue tampered to break it (validate only for the
rules the builder does not run)."""

from __future__ import annotations

import re
import string
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groundtrace.crs.build.builder import build_dialogues
from groundtrace.crs.build.qc import QC_RULES
from groundtrace.crs.build.qc import check_dialogue as qc_check
from groundtrace.crs.dataset import rules as R
from groundtrace.crs.dataset.rules import RULES, rule
from groundtrace.crs.dataset.validate import check_dialogue as validate_check
from groundtrace.crs.kb.demo import generate_demo_kb
from groundtrace.crs.kb.knowledge_base import KnowledgeBase
from groundtrace.crs.schema import Constraint, Dialogue, ReviewRef

DOCS = Path(__file__).resolve().parents[3] / "docs" / "crs-dataset.md"


# -- the catalogue ------------------------------------------------------------------------------------


def test_codes_and_names_are_unique_and_well_formed() -> None:
    assert len({r.code for r in RULES}) == len(RULES) == len({r.name for r in RULES})
    for r in RULES:
        assert re.fullmatch(r"GT-[FSDRGTKQP]\d{3}", r.code), r.code
        assert re.fullmatch(r"[a-z]+(-[a-z]+)*", r.name), r.name
        assert r.checks and r.template
        assert rule(r.code) is r and rule(r.name) is r
    with pytest.raises(KeyError, match="no dataset rule 'nope'"):
        rule("nope")


def test_every_template_formats_with_its_own_fields() -> None:
    for r in RULES:
        fields = {name for _, name, _, _ in string.Formatter().parse(r.template) if name}
        message = r.template.format(**{f: "x" if f != "score" else 0.5 for f in fields})
        assert "{" not in message, r


def test_the_docs_table_lists_every_rule_once() -> None:
    rows = re.findall(
        r"^\| `(GT-[A-Z]\d{3})` \| `([a-z-]+)` \|", DOCS.read_text(encoding="utf-8"), re.MULTILINE
    )
    assert sorted(rows) == sorted((r.code, r.name) for r in RULES)


# -- every rule, tampered into a built dialogue ----------------------------------------------------


@pytest.fixture(scope="module")
def kb() -> KnowledgeBase:
    # 50 per type: open pools stay within the city × type (a smaller city widens them, and GT-G013
    # then allows other types)
    return generate_demo_kb(6, n_per_type=50, reviews_per_poi=5)


@pytest.fixture(scope="module")
def built(kb: KnowledgeBase) -> list[Dialogue]:
    dialogues, report = build_dialogues(kb, 24, seed=2)
    assert report.built == 24
    return dialogues


def _rec(d: Dialogue):
    return next(t for t in d.turns if t.act == "recommend" and t.gold is not None and t.quote_spans)


def _reject(d: Dialogue):
    return next(t for t in d.turns if t.act == "reject_and_refine")


def _after_reject(d: Dialogue):
    pos = _reject(d).index
    return next(t for t in d.turns[pos:] if t.role == "system" and t.gold is not None)


def _distractor(d: Dialogue) -> str:
    used = {p for t in d.turns for p in [*t.recommended, *t.rejected]}
    used |= {p for t in d.turns if t.gold for p in [t.gold.gold_poi, *t.gold.multi_ref]}
    return next(p for p in d.candidates if p not in used)


def _outsider(d: Dialogue, kb: KnowledgeBase) -> str:
    """A POI of the dialogue's city and type that is no candidate."""
    return next(p.poi_id for p in kb.pois_in(d.city, d.poi_type) if p.poi_id not in d.candidates)


def _other_type(d: Dialogue, kb: KnowledgeBase) -> str:
    return next(p.poi_id for p in kb.pois.values() if p.poi_type != d.poi_type)


def _swap_char(text: str, at: int) -> str:
    return text[:at] + ("x" if text[at] != "x" else "y") + text[at + 1 :]


def _t_alternation(d, kb):
    d.turns[1].role = "user"


def _t_label_in_text(d, kb):
    turn = next(t for t in d.turns if t.constraints_added)
    c = turn.constraints_added[0]
    turn.constraints_added[0] = c.model_copy(update={"label": c.label + " (never said)"})


def _t_act(d, kb):
    d.turns[1].act = "ask_detail"


def _t_turn_index(d, kb):
    d.turns[2].index = 9


def _t_role_fields(d, kb):
    d.turns[0].recommended = [d.candidates[0]]


def _t_recommendations(d, kb):
    first = True
    for t in d.turns:
        if t.role == "system" and t.act in ("recommend", "compare"):
            if not first:
                t.act = "explain"
            first = False


def _t_comparison(d, kb):
    for t in d.turns:
        if t.act == "compare":
            t.act = "recommend"


def _t_has_rejection(d, kb):
    d.has_rejection = not d.has_rejection


def _t_refine(d, kb):
    _reject(d).constraints_added = []


def _t_reject_nothing(d, kb):
    _reject(d).rejected = []


def _t_rejected_satisfies(d, kb):
    _reject(d).constraints_added = [Constraint(kind="min_stars", value=0.0, label="any")]


def _t_rejected_recommended(d, kb):
    t, rejected = _after_reject(d), _reject(d).rejected[0]
    t.gold.gold_poi = rejected
    t.recommended = [rejected, *t.recommended[1:]]


def _t_pool_size(d, kb):
    d.candidates.remove(_distractor(d))


def _t_pool_duplicates(d, kb):
    x = _distractor(d)
    d.candidates[d.candidates.index(x)] = next(p for p in d.candidates if p != x)


def _t_gold_missing(d, kb):
    _rec(d).gold = None


def _t_gold_not_main(d, kb):
    t = _rec(d)
    t.recommended = [_distractor(d), *t.recommended]


def _t_gold_not_candidate(d, kb):
    t = _rec(d)
    t.gold.gold_poi = t.recommended[0] = _outsider(d, kb)


def _t_gold_violates(d, kb):
    _rec(d).gold.active_constraints.append(Constraint(kind="price_max", value=0, label="free"))


def _t_multi_ref_outside(d, kb):
    _rec(d).gold.multi_ref.append(_outsider(d, kb))


def _t_multi_ref_violates(d, kb):
    gold = _rec(d).gold
    gold.active_constraints.append(Constraint(kind="price_max", value=0, label="free"))
    gold.multi_ref.append(next(p for p in d.candidates if p != gold.gold_poi))


def _t_multi_ref_missing(d, kb):
    t = next(t for t in d.turns if t.gold is not None and t.gold.multi_ref)
    t.gold.multi_ref = []


def _t_open_pool_gold(d, kb):
    gold = _rec(d).gold
    gold.open_pool.remove(gold.gold_poi)


def _t_open_pool_duplicates(d, kb):
    gold = _rec(d).gold
    gold.open_pool.append(gold.open_pool[0])


def _t_open_pool_size(d, kb):
    _rec(d).gold.open_pool.extend(f"ghost-{i}" for i in range(101))


def _t_open_pool_poi(d, kb):
    _rec(d).gold.open_pool.append(_other_type(d, kb))


def _t_tag_unknown(d, kb):
    t = _rec(d)
    tag = t.cited_tags[0]
    t.text = t.text.replace(f"[{tag}]", "[R999]")
    t.cited_tags = ["R999" if x == tag else x for x in t.cited_tags]


def _t_cited_tags(d, kb):
    _rec(d).cited_tags = []


def _t_missing_citation(d, kb):
    t = _rec(d)
    t.text, t.cited_tags, t.quote_spans = "I'd recommend this place.", [], []


def _t_tag_wrong_poi(d, kb):
    t = _rec(d)
    other = next(tag for tag, ref in d.review_refs.items() if ref.poi_id not in t.recommended)
    t.text += f" See also [{other}]."
    t.cited_tags.append(other)


def _t_kb_poi(d, kb):
    _rec(d).recommended.append("ghost-poi")


def _t_kb_review(d, kb):
    d.review_refs["R999"] = ReviewRef(review_id="rv-ghost", poi_id=d.candidates[0])


def _t_ref_poi(d, kb):
    review = kb.reviews_of(d.candidates[0])[0]
    d.review_refs["R999"] = ReviewRef(review_id=review.review_id, poi_id=d.candidates[1])


def _t_kb_hash(d, kb):
    d.kb_hash = "0" * 64


def _t_quote_span_range(d, kb):
    _rec(d).quote_spans[0].end = 10_000


def _t_quote_span_ref(d, kb):
    t = _rec(d)
    t.quote_spans[0].tag = next(tag for tag in d.review_refs if tag not in t.cited_tags)


def _t_quote_not_in_review(d, kb):
    t = _rec(d)
    span = t.quote_spans[0]
    fake = "zebra xylophone quartz jukebox " * 10
    t.text = t.text[: span.start] + fake[: span.end - span.start] + t.text[span.end :]


def _t_quote_span_mismatch(d, kb):
    _t_quote_not_in_review(d, kb)


def _t_quote_span_verbatim(d, kb):
    t = _rec(d)
    span = max(t.quote_spans, key=lambda s: s.end - s.start)
    assert span.end - span.start >= 30
    t.text = _swap_char(t.text, span.start + (span.end - span.start) // 2)


def _t_evidence_stance(d, kb):
    """Praise dressed as a warning: a positive review sentence after "One reviewer warns"."""
    t = _rec(d)
    for tag, ref in d.review_refs.items():
        review = kb.review(ref.review_id)
        positive = [s for s in kb.stances.get(ref.review_id, []) if s.polarity > 0]
        if ref.poi_id == t.recommended[0] and positive:
            sentence = review.text[positive[0].start : positive[0].end]
            t.text = f'I recommend it. One reviewer warns: "{sentence}" [{tag}].'
            t.cited_tags, t.quote_spans = [tag], []
            return
    pytest.skip("no positive sentence to quote")


def _t_quote_uncovered(d, kb):
    _rec(d).quote_spans = []


def _t_itinerary_legs(d, kb):
    """The second leg starts at a system turn."""
    d.legs[1].first_turn += 1


def _t_tier(d, kb):
    d.difficulty = "Easy" if d.difficulty != "Easy" else "Expert"


def _t_features(d, kb):
    d.features["n_turns"] = 99.0


TAMPERS: dict[str, tuple[Callable[[Dialogue, KnowledgeBase], None], bool]] = {
    # rule name: (tamper, needs a dialogue with a rejection)
    "alternation": (_t_alternation, False),
    "act": (_t_act, False),
    "turn-index": (_t_turn_index, False),
    "role-fields": (_t_role_fields, False),
    "recommendations": (_t_recommendations, False),
    "comparison": (_t_comparison, False),
    "has-rejection": (_t_has_rejection, False),
    "refine": (_t_refine, True),
    "reject-nothing": (_t_reject_nothing, True),
    "rejected-satisfies": (_t_rejected_satisfies, True),
    "rejected-recommended": (_t_rejected_recommended, True),
    "pool-size": (_t_pool_size, False),
    "pool-duplicates": (_t_pool_duplicates, False),
    "gold-missing": (_t_gold_missing, False),
    "gold-not-main": (_t_gold_not_main, False),
    "gold-not-candidate": (_t_gold_not_candidate, False),
    "gold-violates": (_t_gold_violates, False),
    "multi-ref-outside": (_t_multi_ref_outside, False),
    "multi-ref-violates": (_t_multi_ref_violates, False),
    "multi-ref-missing": (_t_multi_ref_missing, False),
    "open-pool-gold": (_t_open_pool_gold, False),
    "open-pool-duplicates": (_t_open_pool_duplicates, False),
    "open-pool-size": (_t_open_pool_size, False),
    "open-pool-poi": (_t_open_pool_poi, False),
    "tag-unknown": (_t_tag_unknown, False),
    "cited-tags": (_t_cited_tags, False),
    "missing-citation": (_t_missing_citation, False),
    "tag-wrong-poi": (_t_tag_wrong_poi, False),
    "kb-poi": (_t_kb_poi, False),
    "kb-review": (_t_kb_review, False),
    "ref-poi": (_t_ref_poi, False),
    "kb-hash": (_t_kb_hash, False),
    "quote-span-range": (_t_quote_span_range, False),
    "quote-span-ref": (_t_quote_span_ref, False),
    "quote-not-in-review": (_t_quote_not_in_review, False),
    "quote-span-mismatch": (_t_quote_span_mismatch, False),
    "quote-span-verbatim": (_t_quote_span_verbatim, False),
    "evidence-stance": (_t_evidence_stance, False),
    "quote-uncovered": (_t_quote_uncovered, False),
    "label-in-text": (_t_label_in_text, False),
    "tier": (_t_tier, False),
    "features": (_t_features, False),
    "itinerary-legs": (_t_itinerary_legs, False),
}
#: tampers applied to an itinerary dialogue (the others use a single-type one)
ITINERARY_TAMPERS = {"itinerary-legs"}

#: rules about files, lines and redacted releases: exercised by tests/crs/dataset/test_validate.py
#: (old-format: by tests/crs/dataset/test_format_v2.py)
FILE_LEVEL = {"json", "schema", "model", "duplicate-id", "manifest", "old-format", "redacted", "placeholder"}
FILE_LEVEL |= {"placeholder-missing"}
#: held-out phrasing is about the split files together: tests/crs/dataset/test_language.py
FILE_LEVEL |= {"held-out-phrasing"}


def test_every_rule_is_exercised() -> None:
    assert set(TAMPERS) | FILE_LEVEL == {r.name for r in RULES}
    assert {r.name for r in QC_RULES} <= set(TAMPERS)  # every rule the builder runs has a tamper here


@pytest.mark.parametrize("name", sorted(TAMPERS))
def test_qc_and_validate_report_the_same_code(built: list[Dialogue], kb: KnowledgeBase, name: str) -> None:
    tamper, needs_rejection = TAMPERS[name]
    single = [d for d in built if not d.legs]
    if name in ITINERARY_TAMPERS:
        base = next(d for d in built if d.legs)
    else:
        base = next(d for d in single if d.has_rejection) if needs_rejection else single[3]
    assert qc_check(base, kb) == []
    assert [p for p in validate_check(base, kb, tiered=True) if p.severity == "error"] == []
    d = base.model_copy(deep=True)
    tamper(d, kb)
    r = rule(name)
    qc_codes = {f.code for f in qc_check(d, kb)}
    validated = {p.code: p for p in validate_check(d, kb, tiered=True)}
    assert r.code in validated, sorted(validated)
    assert validated[r.code].severity in (r.severity, "warning")
    assert validated[r.code].name == r.name
    if r.builder == "error":
        assert r.code in qc_codes, sorted(qc_codes)
    else:
        assert r.code not in qc_codes


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_qc_and_validate_agree_on_any_mix_of_tampers(
    built: list[Dialogue], kb: KnowledgeBase, data: st.DataObject
) -> None:
    """Invariant of one rule set: whatever breaks, every QC error is a finding of validate, and every
    validate error of a rule the builder runs is a QC error (the checks never raise either)."""
    d = built[data.draw(st.integers(0, len(built) - 1))].model_copy(deep=True)
    for name in data.draw(st.lists(st.sampled_from(sorted(TAMPERS)), min_size=1, max_size=3, unique=True)):
        try:
            TAMPERS[name][0](d, kb)
        except (StopIteration, IndexError, ValueError, AttributeError, AssertionError, pytest.skip.Exception):
            pass  # this tamper does not apply to this dialogue (or to what an earlier tamper left)
    qc = {f.code for f in qc_check(d, kb)}
    validated = validate_check(d, kb, tiered=False)
    assert qc <= {p.code for p in validated}
    assert {p.code for p in validated if p.severity == "error" and rule(p.code).builder == "error"} <= qc


def test_qc_is_stricter_than_a_release_only_on_verbatim_spans() -> None:
    stricter = [r for r in RULES if r.builder is not None and r.builder != r.severity]
    assert stricter == [R.QUOTE_SPAN_VERBATIM]
