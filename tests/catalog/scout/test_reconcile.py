"""Reconcile: priority, merge with provenance, abstentions, and the confidence formula (hand-computed)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groundtrace.catalog.model import AttributeSpec, CandidateStatus, Evidence
from groundtrace.catalog.scout.engine import FLAG_INJECTION, FLAG_QUOTE_NOT_FOUND, Abstention, Finding
from groundtrace.catalog.scout.reconcile import noisy_or_confidence, reconcile, reconcile_attribute, tier

NET = AttributeSpec(slug="net_content", name="Net content", type="number", recommended_values=["oz", "g"])
FLAVOR = AttributeSpec(
    slug="flavor", name="Flavor", type="string", recommended_values=["vanilla", "chocolate"]
)
ALLERGENS = AttributeSpec(
    slug="allergens",
    name="Allergens",
    type="enum",
    multi_valued=True,
    safety_critical=True,
    allowed_values=["milk", "eggs", "soybeans"],
)
ORGANIC = AttributeSpec(slug="organic", name="Organic", type="bool", allowed_values=["true", "false"])

_SOURCE = {"catalog": "catalog", "hq": "syndicated", "image": "image"}


def F(
    attr: AttributeSpec,
    value: str,
    ref: str,
    source_type: str = "catalog",
    quality: float = 1.0,
    explicit: bool = False,
    flags: list[str] | None = None,
    confidence: float | None = None,
) -> Finding:
    source = _SOURCE.get(source_type, "web")
    ev = Evidence(source=source, source_type=source_type, source_ref=ref, quote=f"{value} quote", span=(0, 5))  # type: ignore[arg-type]
    return Finding(
        attribute=attr.slug,
        value=value,
        evidence=ev,
        quality=quality,
        explicit=explicit,
        flags=flags or [],
        confidence=confidence,
    )


def test_tiers_follow_the_seed_priority() -> None:
    order = [
        F(NET, "1 oz", r, st).evidence
        for r, st in [
            ("c", "catalog"),
            ("f", "hq"),
            ("i", "image"),
            ("o", "official_web"),
            ("m", "major_retailer"),
            ("r", "retailer"),
            ("a", "aggregator"),
            ("x", "other"),
        ]
    ]
    assert [tier(e) for e in order] == sorted(tier(e) for e in order)
    assert tier(order[0]) < tier(order[1]) < tier(order[2]) < tier(order[3]) < tier(order[4])


def test_equal_values_merge_across_sources_with_every_provenance() -> None:
    title = F(NET, "16 oz", "catalog:title", quality=0.6)
    feed = F(NET, "454 g", "feed.csv#x", "hq", explicit=True)
    cand = reconcile_attribute("S", NET, [feed, title])
    assert cand.status == CandidateStatus.EXTRACTED and cand.value == "16 oz"
    assert [e.source_ref for e in cand.evidence] == ["catalog:title", "feed.csv#x"]
    # s_title = 0.90 * 0.6 = 0.54 ; s_feed = 0.85 * 1.0 = 0.85 ; conf = 1 - 0.46 * 0.15 = 0.931
    assert cand.confidence == pytest.approx(0.931)


def test_web_never_overrides_catalog_and_penalises() -> None:
    cat = F(NET, "16 oz", "catalog:spec:Net Wt", explicit=True)
    web = F(NET, "12 oz", "https://acme.com/p", "official_web", quality=0.85)
    cand = reconcile_attribute("S", NET, [web, cat])
    assert cand.value == "16 oz" and [e.source_ref for e in cand.evidence] == ["catalog:spec:Net Wt"]
    # agree: 0.90 * 1.0 = 0.9 ; disagreeing lower tier: s = 0.75 * 0.85 = 0.6375
    # conf = 0.9 * (1 - 0.5 * 0.6375) = 0.9 * 0.68125 = 0.613125
    assert cand.confidence == pytest.approx(0.6131)
    assert "https://acme.com/p" in cand.note


def test_conflict_between_equal_priority_documents() -> None:
    cand = reconcile_attribute(
        "S",
        NET,
        [F(NET, "16 oz", "catalog:title", quality=0.6), F(NET, "12 oz", "catalog:description", quality=0.6)],
    )
    assert cand.status == CandidateStatus.CONFLICT and cand.value is None and cand.confidence == 0.0
    assert "catalog:title" in cand.note and "catalog:description" in cand.note


def test_ambiguous_when_one_document_names_two_values() -> None:
    cand = reconcile_attribute(
        "S",
        FLAVOR,
        [
            F(FLAVOR, "vanilla", "catalog:title", quality=0.75),
            F(FLAVOR, "chocolate", "catalog:title", quality=0.75),
        ],
    )
    assert cand.status == CandidateStatus.AMBIGUOUS and cand.value is None


def test_explicit_field_outranks_free_mention_in_the_same_tier() -> None:
    cand = reconcile_attribute(
        "S",
        FLAVOR,
        [
            F(FLAVOR, "chocolate", "catalog:title", quality=0.75),
            F(FLAVOR, "Vanilla", "catalog:spec:Flavor", explicit=True),
        ],
    )
    assert cand.status == CandidateStatus.EXTRACTED and cand.value == "Vanilla"


def test_source_preference_inside_web() -> None:
    official = F(ORGANIC, "true", "https://acme.com/p", "official_web", quality=0.85)
    retailer = F(ORGANIC, "false", "https://www.walmart.com/ip/1", "major_retailer", quality=0.85)
    assert reconcile_attribute("S", ORGANIC, [retailer, official]).value == "true"
    r2 = F(ORGANIC, "false", "https://www.target.com/p/1", "major_retailer", quality=0.85)
    r3 = F(ORGANIC, "true", "https://www.walmart.com/ip/1", "major_retailer", quality=0.85)
    assert reconcile_attribute("S", ORGANIC, [r2, r3]).status == CandidateStatus.CONFLICT


def test_bool_synonyms_are_equal() -> None:
    cand = reconcile_attribute(
        "S",
        ORGANIC,
        [
            F(ORGANIC, "true", "catalog:title", quality=0.85),
            F(ORGANIC, "yes", "catalog:spec:Organic", explicit=True),
        ],
    )
    assert cand.status == CandidateStatus.EXTRACTED and cand.value == "true" and len(cand.evidence) == 2


def test_multi_valued_union_of_top_tier() -> None:
    desc = [
        F(ALLERGENS, "milk", "catalog:description", explicit=True),
        F(ALLERGENS, "soybeans", "catalog:description", explicit=True),
    ]
    spec = [F(ALLERGENS, "milk", "catalog:spec:Allergens", explicit=True)]
    web = [F(ALLERGENS, "eggs", "https://acme.com/p", "official_web", explicit=True)]
    cand = reconcile_attribute("S", ALLERGENS, desc + spec + web)
    assert cand.value == ["milk", "soybeans"]  # template order; web adds nothing to a catalog answer
    # milk: 1 - (1-0.9)(1-0.9) = 0.99 (cap 0.99); soybeans: 0.9 -> min = 0.9
    assert cand.confidence == pytest.approx(0.9)
    assert {e.source_ref for e in cand.evidence} == {"catalog:description", "catalog:spec:Allergens"}


def test_abstentions() -> None:
    assert reconcile_attribute("S", NET, []).status == CandidateStatus.NOT_FOUND
    rejected = [F(NET, "12 oz", "https://www.walmart.com/ip/12oz", "major_retailer")]
    cand = reconcile_attribute("S", NET, [], rejected=rejected)
    assert cand.status == CandidateStatus.IDENTITY_MISMATCH and "walmart" in cand.note and cand.value is None
    na = reconcile_attribute(
        "S", NET, [], abstention=Abstention(status=CandidateStatus.NOT_APPLICABLE, note="gift card")
    )
    assert na.status == CandidateStatus.NOT_APPLICABLE and "gift card" in na.note


def test_flags_quote_not_found_and_injection() -> None:
    bad = F(ORGANIC, "true", "catalog:title", quality=0.0, flags=[FLAG_QUOTE_NOT_FOUND], confidence=0.95)
    cand = reconcile_attribute("S", ORGANIC, [bad])
    assert cand.status == CandidateStatus.EXTRACTED and cand.value == "true"
    assert cand.confidence == 0.0 and FLAG_QUOTE_NOT_FOUND in cand.note
    inj = F(ORGANIC, "true", "https://kroger.com/p", "major_retailer", flags=[FLAG_INJECTION])
    cand = reconcile_attribute("S", ORGANIC, [inj])
    assert cand.status == CandidateStatus.NOT_FOUND and cand.value is None and "injection" in cand.note


def test_llm_confidence_caps_quality() -> None:
    # q = min(quote score 1.0, model confidence 0.5) = 0.5 ; conf = 0.9 * 0.5 = 0.45
    cand = reconcile_attribute("S", ORGANIC, [F(ORGANIC, "true", "catalog:title", confidence=0.5)])
    assert cand.confidence == pytest.approx(0.45)


def test_reconcile_covers_every_attribute_in_order() -> None:
    out = reconcile("S", [NET, FLAVOR, ORGANIC], [F(ORGANIC, "true", "catalog:title")], engine="offline")
    assert list(out) == ["net_content", "flavor", "organic"]
    assert out["organic"].engine == "offline" and out["net_content"].status == CandidateStatus.NOT_FOUND


_types = st.sampled_from(
    ["catalog", "hq", "image", "official_web", "major_retailer", "retailer", "aggregator", "other"]
)


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["true", "false"]),
            st.sampled_from(["a", "b", "c", "d"]),
            _types,
            st.floats(0, 1),
            st.booleans(),
        ),
        max_size=8,
    )
)
def test_candidate_invariants(rows: list[tuple[str, str, str, float, bool]]) -> None:
    findings = [F(ORGANIC, v, f"{t}:{ref}", t, quality=q, explicit=x) for v, ref, t, q, x in rows]
    cand = reconcile_attribute("S", ORGANIC, findings)
    assert 0.0 <= cand.confidence <= 0.99
    if cand.status != CandidateStatus.EXTRACTED:
        assert cand.value is None and cand.confidence == 0.0
    else:
        assert cand.value in ("true", "false") and cand.evidence
        assert all(e.source_ref in {f.evidence.source_ref for f in findings} for e in cand.evidence)
    assert (cand.status == CandidateStatus.NOT_FOUND) == (not findings)


@given(st.lists(st.floats(0, 1), max_size=6), st.lists(st.floats(0, 1), max_size=6))
def test_confidence_formula_bounds_and_monotonic(agree: list[float], disagree: list[float]) -> None:
    a = [F(ORGANIC, "true", f"catalog:{i}", quality=q) for i, q in enumerate(agree)]
    d = [F(ORGANIC, "false", f"https://x{i}.example/", "other", quality=q) for i, q in enumerate(disagree)]
    base = noisy_or_confidence(a, [])
    assert 0.0 <= noisy_or_confidence(a, d) <= base <= 0.99
    extra = F(ORGANIC, "true", "catalog:extra", quality=0.5)
    assert noisy_or_confidence([*a, extra], []) >= base


def test_fields_of_one_catalog_record_are_one_source() -> None:
    # title and description of the same merchant record both mention the value: max, not noisy-or.
    # s_title = 0.90 * 0.75 = 0.675 ; s_desc = 0.90 * 0.75 = 0.675 ; one source -> conf = 0.675
    # (the per-document noisy-or gave 1 - 0.325^2 = 0.894; measured 76 % right on WDC-PAVE, see docs)
    cand = reconcile_attribute(
        "S",
        FLAVOR,
        [
            F(FLAVOR, "vanilla", "catalog:title", quality=0.75),
            F(FLAVOR, "vanilla", "catalog:description", quality=0.75),
        ],
    )
    assert cand.confidence == pytest.approx(0.675)
    assert [e.source_ref for e in cand.evidence] == [
        "catalog:title",
        "catalog:description",
    ]  # provenance kept


def test_explicit_catalog_field_is_confident_and_thin_mentions_are_not() -> None:
    explicit = reconcile_attribute("S", NET, [F(NET, "16 oz", "catalog:spec:Net Wt", explicit=True)])
    named = reconcile_attribute("S", NET, [F(NET, "16 oz", "catalog:description", quality=0.85)])
    bare = reconcile_attribute("S", NET, [F(NET, "16 oz", "catalog:title", quality=0.6)])
    web = reconcile_attribute("S", NET, [F(NET, "16 oz", "https://shop.example/p", "retailer", quality=0.85)])
    # 0.90 * 1.0 = 0.90 ; 0.90 * 0.85 = 0.765 ; 0.90 * 0.6 = 0.54 ; retailer 0.55 * 0.85 = 0.4675
    assert [c.confidence for c in (explicit, named, bare, web)] == pytest.approx([0.9, 0.765, 0.54, 0.4675])
    assert explicit.confidence >= 0.8 > named.confidence >= 0.7 > bare.confidence > web.confidence


def test_independent_web_hosts_combine_but_pages_of_one_host_do_not() -> None:
    a1 = F(NET, "16 oz", "https://www.acme.com/p/1", "official_web", quality=0.85)
    a2 = F(NET, "16 oz", "https://acme.com/p/2", "official_web", quality=0.85)
    b = F(NET, "16 oz", "https://shop.example.org/x", "retailer", quality=0.85)
    # acme: 0.75 * 0.85 = 0.6375 (two pages, one host) ; shop: 0.55 * 0.85 = 0.4675
    assert reconcile_attribute("S", NET, [a1, a2]).confidence == pytest.approx(0.6375)
    # conf = 1 - (1 - 0.6375)(1 - 0.4675) = 1 - 0.3625 * 0.5325 = 0.80697
    assert reconcile_attribute("S", NET, [a1, a2, b]).confidence == pytest.approx(0.807, abs=1e-3)


def test_catalog_and_feed_are_independent_sources() -> None:
    # s_cat = 0.90 * 0.75 = 0.675 ; s_feed = 0.85 * 1.0 = 0.85 ; conf = 1 - 0.325 * 0.15 = 0.95125
    cand = reconcile_attribute(
        "S",
        FLAVOR,
        [
            F(FLAVOR, "vanilla", "catalog:title", quality=0.75),
            F(FLAVOR, "vanilla", "feed.csv#1", "hq", explicit=True),
        ],
    )
    assert cand.confidence == pytest.approx(0.9512, abs=1e-4)


def test_source_group() -> None:
    from groundtrace.catalog.model import Evidence
    from groundtrace.catalog.scout.reconcile import source_group

    def ev(source: str, ref: str, url: str | None = None) -> Evidence:
        st_ = {"catalog": "catalog", "syndicated": "hq", "image": "image"}.get(source, "retailer")
        return Evidence(source=source, source_type=st_, source_ref=ref, quote="q", url=url)  # type: ignore[arg-type]

    assert source_group(ev("catalog", "catalog:title")) == source_group(ev("catalog", "catalog:spec:Size"))
    assert (
        source_group(ev("web", "https://www.acme.com/a"))
        == "web:acme.com"
        == source_group(ev("web", "acme.com/b"))
    )
    assert source_group(ev("web", "corpus:7", "https://shop.example.org/x")) == "web:shop.example.org"
    assert source_group(ev("web", "corpus:7")) == "web:corpus:7" != source_group(ev("web", "corpus:8"))
