"""``OpenRefs`` (lazy open-setting tag table of the scorer) equals ``open_review_refs`` for every key."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from groundtrace.crs.kb.demo import generate_demo_kb
from groundtrace.crs.kb.knowledge_base import open_review_refs
from groundtrace.crs.metrics.context import OpenRefs, RunState
from groundtrace.crs.metrics.lexicon import load_lexicon
from groundtrace.crs.schema import ReviewRef

KB = generate_demo_kb(1, n_per_type=12, reviews_per_poi=7)
POIS = sorted(KB.pois)
REVIEWS = sorted(KB.reviews)


@settings(max_examples=80, deadline=None)
@given(
    base_reviews=st.lists(st.sampled_from(REVIEWS), max_size=12),
    odd_tags=st.lists(st.sampled_from(["R40", "R9", "R07", "X1", "R0", "r3"]), max_size=3),
    pool=st.lists(st.sampled_from(POIS), max_size=20),
    asked=st.lists(st.integers(0, 120), max_size=8),
)
def test_open_refs_equals_open_review_refs(
    base_reviews: list[str], odd_tags: list[str], pool: list[str], asked: list[int]
) -> None:
    def ref(review_id: str) -> ReviewRef:
        return ReviewRef(review_id=review_id, poi_id=KB.reviews[review_id].poi_id)

    base = {f"R{i + 1}": ref(r) for i, r in enumerate(base_reviews)}
    for j, tag in enumerate(odd_tags):  # tags off the R1..Rn sequence: kept, or overwritten as the rule says
        base[tag] = ref(REVIEWS[j])
    full = open_review_refs(KB, base, pool)
    lazy = OpenRefs(RunState(KB, load_lexicon(), "open"), base, tuple(pool))
    for tag in [*(f"R{n}" for n in asked), *base, "R", "Rx", "R-1"]:  # asked in any order, lazily
        assert lazy.get(tag) == full.get(tag)
        assert (tag in lazy) == (tag in full)
    assert list(lazy) == list(full) and len(lazy) == len(full) and dict(lazy) == full
