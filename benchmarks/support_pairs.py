"""Draw the (constraint, quote) pairs of the hand-labelled support-judge set from real yelp_dense reviews.

The labelled set is ``tests/fixtures/crs_support/support_pairs.jsonl``; labels were added by hand, one
reading per pair, following docs/crs-support-labels.md. This script rebuilds the *pairs* (seeded, so the
same pairs come out every time) and keeps the labels of an existing file, matched by
``(constraint kind, value, review_id, start)``:

    python benchmarks/support_pairs.py [--data ../shared/data/yelp_dense] [--seed 23] \\
        [--out tests/fixtures/crs_support/support_pairs.jsonl]

Sampling
--------
Reviews are read through the project's Yelp loader (``groundtrace.crs.kb.yelp.stream_businesses`` /
``stream_reviews``), at most :data:`PER_POI` reviews per business (ranked by ``sha256(seed:review_id)``:
four businesses carry 71 % of the file), split by ``groundtrace.crs.kb.stance.split_sentences``; a sentence
is a candidate when it has 4–60 words and at most 300 characters. For each constraint of
:data:`CONSTRAINTS` the candidates are sorted into three strata by a *broad topic pattern* written for
sampling only (wider than the metric's aspect lexicon, so the set also holds phrasings the lexicon
misses — "al fresco", "street parking", "BYOB"):

* ``topical`` — the topic pattern matches and no :data:`CUE_RE` cue does (mostly plain support);
* ``cued`` — the topic pattern and a cue both match: negations, hedges, wishes ("would be nice"),
  complaints, contrasts, comparisons — the hard cases;
* ``off_topic`` — the topic pattern does not match.

:data:`PER_STRATUM` pairs are drawn from each (seeded ``random.Random``), without reusing a sentence for
the same constraint. Nothing here decides a label: the topic pattern only chooses what to read.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import sys
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

from groundtrace.crs.kb.stance import split_sentences
from groundtrace.crs.kb.yelp import stream_businesses, stream_reviews, yelp_files

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT / ".." / "shared" / "data" / "yelp_dense"
DEFAULT_OUT = ROOT / "tests" / "fixtures" / "crs_support" / "support_pairs.jsonl"
PER_POI = 30
PER_STRATUM = {"topical": 10, "cued": 6, "off_topic": 3}
MIN_WORDS, MAX_WORDS, MAX_CHARS = 4, 60, 300

#: (kind, value, label, broad topic pattern used for sampling only).
CONSTRAINTS: tuple[tuple[str, object, str, str], ...] = (
    ("amenity", "outdoor_seating", "outdoor seating",
     r"patio|outdoor|outside|sidewalk|terrace|al fresco|courtyard|deck\b|rooftop|garden"),
    ("amenity", "wifi", "free wifi", r"wi-?fi|internet|laptop|work(?:ing)? remotely|outlets?\b|plugs?\b"),
    ("amenity", "parking", "easy parking", r"park(?:ing|ed)?\b|garage|valet|\blot\b|meters?\b"),
    ("amenity", "dogs_allowed", "dog friendly", r"\bdogs?\b|pup|pets?\b|puppy|furry"),
    ("amenity", "good_for_kids", "good for kids",
     r"\bkids?\b|child|family|families|toddler|baby|stroller|high ?chairs?|\bson\b|daughter"),
    ("amenity", "wheelchair_accessible", "wheelchair accessible",
     r"wheelchair|ramps?\b|stairs|steps\b|accessib|handicap|elevator|walker|crutches|\bcane\b"),
    ("amenity", "takes_reservations", "takes reservations",
     r"reserv|book(?:ed|ing)?\b|walk-?ins?\b|wait(?:ed|ing)? (?:list|for a table)|opentable|call ahead"),
    ("noise_max", "quiet", "somewhere quiet",
     r"quiet|loud|noise|noisy|\bhear\b|conversation|calm|peaceful|music|crowded|packed"),
    ("price_max", 1, "cheap",
     r"cheap|prices?\b|pric(?:ey|y)|afford|expensive|value|\$\d|budget|bargain|overpriced|worth|bucks"),
    ("ambience", "romantic", "romantic", r"romantic|\bdate\b|anniversary|candle|intimate|cozy|\bdim\b"),
    ("ambience", "casual", "casual",
     r"casual|laid[- ]back|relaxed|dress(?: code|ed down|y)\b|no-frills|chill\b|low-key|jeans"),
    ("ambience", "classy", "classy",
     r"classy|elegant|upscale|fancy|sophisticated|fine dining|tablecloth|dress(?: code|ed up|y)\b"),
    ("ambience", "trendy", "trendy", r"trendy|\bhip\b|hipster|stylish|instagram|modern|chic\b"),
    ("cuisine", "Italian", "Italian food",
     r"italian|pasta|pizza|gnocchi|risotto|lasagna|tiramisu|spaghetti|carbonara|cannoli"),
    ("cuisine", "Mexican", "Mexican food",
     r"mexican|tacos?\b|burritos?|salsa|quesadilla|guac|enchilada|tortilla|nachos"),
    ("cuisine", "Seafood", "seafood",
     r"seafood|oysters?|shrimp|crab|fish\b|lobster|crawfish|mussels|scallops|salmon"),
    ("cuisine", "Chinese", "Chinese food",
     r"chinese|dumplings?|dim sum|lo mein|fried rice|wontons?|szechuan|sichuan|general tso|noodles?"),
    ("alcohol", "any", "serves alcohol",
     r"\bbeers?\b|\bwines?\b|cocktails?|drinks?\b|\bbar\b|byob|liquor|margaritas?|sangria|mimosas?"),
    ("meal", "breakfast", "breakfast", r"breakfast|\beggs?\b|pancakes?|omelet|morning|waffles?"),
    ("meal", "lunch", "lunch", r"lunch|midday|\bnoon\b|lunchtime"),
    ("meal", "dinner", "dinner", r"dinner|evening|supper"),
    ("meal", "latenight", "open late", r"\blate\b|midnight|\bnight\b|closes?\b|closing|open until|hours"),
    ("min_stars", 4.0, "highly rated",
     r"best|amazing|excellent|recommend|favou?rite|terrible|worst|mediocre|disappoint|average|\bokay\b|"
     + r"\bok\b|\bgreat\b"),
)  # fmt: skip

CUE_RE = re.compile(
    r"\b(?:not|no|never|none|nothing|without|lack(?:s|ed|ing)?|wish|would be nice|if only|hope|"
    r"unfortunately|but|however|though|although|except|too|should|could|might|maybe|probably|"
    r"than|used to|anymore|only)\b|n't\b|n’t\b",
    re.IGNORECASE,
)


def _rank(seed: int, *parts: object) -> bytes:
    return hashlib.sha256(":".join(str(p) for p in (seed, *parts)).encode()).digest()


def candidates(data: Path, seed: int) -> Iterator[dict]:
    """Every candidate sentence: ``{review_id, poi_id, stars, start, end, quote}`` (see the docstring)."""
    business_file, review_file = yelp_files(data)
    errors: list = []
    pois = {p.poi_id: p for p in stream_businesses(business_file, errors)}
    by_poi: dict[str, list] = defaultdict(list)
    for review in stream_reviews(review_file, errors, business_ids=set(pois)):
        by_poi[review.poi_id].append(review)
    for error in errors:
        print(f"warning: {error}", file=sys.stderr)
    for poi_id in sorted(by_poi):
        kept = sorted(by_poi[poi_id], key=lambda r: _rank(seed, r.review_id))[:PER_POI]
        for review in kept:
            for start, end in split_sentences(review.text):
                quote = review.text[start:end]
                words = len(quote.split())
                if MIN_WORDS <= words <= MAX_WORDS and len(quote) <= MAX_CHARS:
                    yield {
                        "review_id": review.review_id,
                        "poi_id": poi_id,
                        "stars": review.stars,
                        "start": start,
                        "end": end,
                        "quote": quote,
                    }


def draw(pool: list[dict], seed: int) -> list[dict]:
    """The pairs: per constraint and stratum, :data:`PER_STRATUM` candidates drawn by a seeded RNG."""
    pairs: list[dict] = []
    for kind, value, label, topic in CONSTRAINTS:
        topic_re = re.compile(rf"\b(?:{topic})", re.IGNORECASE)
        strata: dict[str, list[dict]] = {"topical": [], "cued": [], "off_topic": []}
        for cand in pool:
            if topic_re.search(cand["quote"]):
                strata["cued" if CUE_RE.search(cand["quote"]) else "topical"].append(cand)
            else:
                strata["off_topic"].append(cand)
        rng = random.Random(f"{seed}:{kind}:{value}")
        for stratum, n in PER_STRATUM.items():
            for cand in rng.sample(strata[stratum], min(n, len(strata[stratum]))):
                pairs.append(
                    {
                        "constraint": {"kind": kind, "value": value, "label": label},
                        **cand,
                        "stratum": stratum,
                    }
                )
    return pairs


def pair_key(pair: dict) -> tuple[str, str, str, int]:
    c = pair["constraint"]
    return (c["kind"], str(c["value"]), pair["review_id"], int(pair["start"]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--seed", type=int, default=23)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    pool = list(candidates(args.data, args.seed))
    pairs = draw(pool, args.seed)
    labels: dict[tuple, dict] = {}
    if args.out.is_file():
        for line in args.out.read_text(encoding="utf-8").splitlines():
            if line.strip():
                old = json.loads(line)
                labels[pair_key(old)] = {k: old[k] for k in ("label", "reason") if k in old}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as handle:
        for i, pair in enumerate(pairs):
            row = {"id": f"s{i:03d}", **pair, **labels.get(pair_key(pair), {})}
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"{len(pairs)} pairs from {len(pool)} candidate sentences -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
