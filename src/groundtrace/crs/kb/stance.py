"""Aspect and polarity (stance) of every review sentence, computed once when a KB is built.

Sentences
---------
:func:`split_sentences` cuts a review into maximal runs ending in ``.``, ``!`` or ``?`` (trailing spaces
excluded); the builder quotes exactly these sentences, so the stance of a quote is looked up by
``(review_id, start)``.

Aspects
-------
:data:`ASPECTS` maps an aspect name to a case-insensitive word pattern; a sentence's aspects are every
aspect whose pattern matches (``("overall",)`` when none does). Aspects: food, service, staff, price,
ambience, noise, cleanliness, location, rooms, kids, groups, wifi, accessibility, parking, outdoor,
drinks, wait.

Polarity
--------
``polarity`` is +1 (positive), 0 (neutral or factual) or -1 (negative), from a ``score`` in [-1, 1]:

* :class:`VaderPolarity` — VADER's ``compound`` (``vaderSentiment``, a lexicon and rules); +1 when
  ``compound >= 0.05``, -1 when ``<= -0.05`` (VADER's documented thresholds), else 0.
* :class:`StarClassifier` — TF-IDF (word 1–2-grams, sublinear tf) + logistic regression trained on the
  KB's own sentences labelled by their review's stars (>= 4 → positive, <= 2 → negative, 3 left out);
  ``score = 2·P(positive) - 1``; +1 when ``P >= 0.65``, -1 when ``P <= 0.35``, else 0.
* :class:`ConsensusPolarity` — both of the above: +1 when both say +1, -1 when either says -1, else 0;
  ``score`` = the mean of the two scores.
* :class:`ContextualPolarity` (the default, :data:`DEFAULT_MODEL`) — the consensus, then two rules that
  catch complaints both models read as neutral:

  1. *complaint cues* (:data:`COMPLAINT_RE`: "unfortunately", "took forever", "too salty", "a bit
     overpriced", "should have", "could be better", "had to ask", "waited 40 minutes", "noisy",
     "cramped", ... — by aspect: food, service, wait, price, noise, cleanliness, seating) make a
     sentence -1 unless both models say +1 and VADER's compound is >= :data:`STRONG_POSITIVE` (0.5);
  2. *review context*: a sentence of a review rated <= :data:`LOW_STARS` (2) stars is -1 unless it is
     strongly positive (VADER >= 0.5 and the star classifier's score >= 0.5): in a 1–2-star review a
     narrating sentence ("Another 1/2 hr goes by and call again.") is part of the complaint.

  3. *wished-for improvements* (:data:`WISHED_FOR`: "could be friendlier", "could be better") are -1
     even when strongly positive: the positive words are what the reviewer misses.

  ``score`` stays the consensus mean (rules change the polarity only).

Measured with ``benchmarks/eval_stance.py`` on two hand-labelled sets (numbers in docs/crs-kb.md): the
180 yelp_dense sentences of ``tests/crs/kb/fixtures/stance_sample.tsv`` were used to choose the rules;
the 240 sentences of ``stance_heldout.tsv`` (764 other businesses, from ../shared/data/yelp) were labelled
afterwards and never tuned on. Held out: consensus accuracy 0.667 with 43.6 % of negative sentences read
as positive/neutral; contextual accuracy 0.696 with 9.1 % (1.8 % read as positive), at the price of
11.9 % of positive sentences read as negative (6.8 % for the consensus) — the builder only loses quotable
praise, never cites a complaint as support.
``STANCE_VERSION`` is stored in the KB; a KB whose stance version differs is refused when loaded.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

from groundtrace.crs.schema import Review

STANCE_VERSION = "stance-5"
DEFAULT_MODEL = "contextual"

SENTENCE_RE = re.compile(r"[^\s.!?)\]}][^.!?]*[.!?]+")


def split_sentences(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each sentence of ``text`` (trailing spaces excluded)."""
    return [m.span() for m in SENTENCE_RE.finditer(text)]


def _words(pattern: str) -> re.Pattern[str]:
    return re.compile(rf"\b(?:{pattern})", re.IGNORECASE)


#: Aspect name -> word pattern (matched at a word start, case-insensitive).
ASPECTS: dict[str, re.Pattern[str]] = {
    "food": _words(
        r"food|dish|meal|menu|flavou?r|tast|delicious|fresh|cook|chef|portion|sandwich|pizza|burger|"
        r"pasta|sushi|taco|steak|chicken|fries|salad|soup|dessert|breakfast|brunch|lunch|dinner|bread|"
        r"coffee|cake|seafood|oyster|gumbo|po.?boy|beignet|cheesesteak"
    ),
    "service": _words(r"service|served|server|waiter|waitress|bartender|host|attentive|friendly|rude"),
    "staff": _words(r"staff|employee|manager|owner|front desk|concierge|receptionist|valet"),
    "price": _words(
        r"price|pric|cheap|expensive|afford|value|worth|budget|bargain|overpriced|cost|\$\d|dollar|bucks"
    ),
    "ambience": _words(
        r"atmosphere|ambien|vibe|decor|romantic|cozy|cosy|intimate|charming|date|music|lighting|trendy|"
        r"classy|elegant|casual|upscale"
    ),
    "noise": _words(r"quiet|noisy|noise|loud|calm|peaceful|hear each other|conversation|deafening"),
    "cleanliness": _words(r"clean|dirty|filthy|spotless|sticky|gross|bathroom|restroom|smell"),
    "location": _words(r"location|located|walk|close to|near|neighbou?rhood|downtown|central|block"),
    "rooms": _words(r"room|bed|suite|pillow|shower|view|lobby|pool|check.?in|checkout|stay"),
    "kids": _words(r"kids?\b|children|child|family|families|toddler|high ?chair|stroller"),
    "groups": _words(r"groups?\b|large party|big party|party of|friends|birthday|celebrat"),
    "wifi": _words(r"wi-?fi|internet"),
    "accessibility": _words(r"wheelchair|ramp|accessib|stairs|steps|elevator"),
    "parking": _words(r"parking|park\b|garage|valet|\blot\b"),
    "outdoor": _words(r"patio|outdoor|outside|terrace|courtyard|sidewalk|al fresco"),
    "drinks": _words(r"drink|cocktail|beer|wine|bar\b|margarita|martini|happy hour|sangria"),
    "wait": _words(r"wait(?:ed|ing|s)?\b|line\b|queue|slow|took forever|reservation"),
}


def sentence_aspects(text: str) -> tuple[str, ...]:
    """Aspects mentioned by ``text`` in :data:`ASPECTS` order, or ``("overall",)`` when none."""
    found = tuple(name for name, pattern in ASPECTS.items() if pattern.search(text))
    return found or ("overall",)


@dataclass(frozen=True, slots=True)
class SentenceStance:
    """One review sentence: ``review.text[start:end]``, its aspects, polarity (-1/0/1) and score."""

    review_id: str
    start: int
    end: int
    aspects: tuple[str, ...]
    polarity: int
    score: float


class PolarityModel(Protocol):
    """Scores sentences: ``(polarity, score)`` per sentence, polarity in {-1, 0, 1}, score in [-1, 1]."""

    name: str

    def predict(
        self, sentences: Sequence[str], stars: Sequence[float] | None = None
    ) -> list[tuple[int, float]]:
        """``stars``: the rating of each sentence's review (context; models may ignore it)."""
        ...


def _band(score: float, low: float, high: float) -> int:
    return 1 if score >= high else (-1 if score <= low else 0)


class VaderPolarity:
    """VADER ``compound`` score; thresholds ±0.05 (see module docstring)."""

    name = "vader"
    threshold = 0.05

    def __init__(self) -> None:
        self._analyser = SentimentIntensityAnalyzer()

    def predict(
        self, sentences: Sequence[str], stars: Sequence[float] | None = None
    ) -> list[tuple[int, float]]:
        out = []
        for text in sentences:
            score = float(self._analyser.polarity_scores(text)["compound"])
            out.append((_band(score, -self.threshold, self.threshold), score))
        return out


class StarClassifier:
    """Logistic regression on TF-IDF, trained on sentences labelled by their review's stars.

    ``fit(reviews)`` labels each sentence of a >= 4-star review positive and of a <= 2-star review
    negative (3-star reviews are left out), and fits ``LogisticRegression(C=1.0, max_iter=1000)``
    (deterministic: lbfgs has no random state). Needs both classes; raises ``ValueError`` otherwise.
    """

    name = "stars"
    low, high = 0.35, 0.65

    def __init__(self) -> None:
        self._pipeline = None

    def fit(self, reviews: Iterable[Review]) -> StarClassifier:
        # deferred: scikit-learn costs ~1-3 s to import; a KB read from a file never fits this model
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import make_pipeline

        texts: list[str] = []
        labels: list[int] = []
        for review in reviews:
            if review.stars == 3:
                continue
            label = 1 if review.stars >= 4 else 0
            for start, end in split_sentences(review.text):
                texts.append(review.text[start:end])
                labels.append(label)
        if len(set(labels)) < 2:
            raise ValueError("the star classifier needs sentences of both >= 4-star and <= 2-star reviews")
        self._pipeline = make_pipeline(
            TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, min_df=2),
            LogisticRegression(C=1.0, max_iter=1000),
        )
        self._pipeline.fit(texts, labels)
        return self

    def predict(
        self, sentences: Sequence[str], stars: Sequence[float] | None = None
    ) -> list[tuple[int, float]]:
        if self._pipeline is None:
            raise RuntimeError("StarClassifier.fit must be called first")
        if not sentences:
            return []
        probs = self._pipeline.predict_proba(list(sentences))[:, 1]
        return [(_band(float(p), self.low, self.high), float(2 * p - 1)) for p in probs]


class ConsensusPolarity:
    """VADER and the star classifier together: +1 only when both say +1, -1 when either says -1, else 0;
    the score is the mean of the two scores."""

    name = "consensus"

    def __init__(self, vader: PolarityModel, stars: PolarityModel) -> None:
        self.vader, self.stars = vader, stars

    def predict(
        self, sentences: Sequence[str], stars: Sequence[float] | None = None
    ) -> list[tuple[int, float]]:
        out = []
        for (pa, sa), (pb, sb) in zip(
            self.vader.predict(sentences), self.stars.predict(sentences), strict=True
        ):
            polarity = 1 if pa == 1 and pb == 1 else (-1 if -1 in (pa, pb) else 0)
            out.append((polarity, (sa + sb) / 2))
        return out


#: A wished-for improvement ("the service could be friendlier", "could be better", "should be better"):
#: a complaint whatever the base models say — VADER scores the wished-for quality ("friendlier") as present,
#: so unlike the other cues strong praise does not override it (stance-5).
WISHED_FOR = re.compile(
    r"could (?:definitely |really |certainly )?be (?:a (?:bit|little|lot|tad) |much |way |slightly )?"
    r"(?:better|improved|more \w+|\w{3,}ier)|"
    r"should (?:definitely |really )?be (?:a (?:bit|little|lot) |much |way )?(?:better|improved)",
    re.IGNORECASE,
)

#: Complaint constructions both base models tend to read as neutral (rule 1 of ContextualPolarity), by
#: aspect: overall, food, service, wait, price, noise, cleanliness, seating, counterfactuals.
COMPLAINT_RE = re.compile(
    r"\b(?:"
    r"unfortunately|disappoint\w*|mediocre|meh|sub-?par|nothing special|just ok(?:ay)?|at best|worst|"
    r"terrible|horrible|awful|crappy|sucks?|sucky|nasty|ridiculous|shame|sad\w*|never again|"
    r"won'?t be (?:back|returning)|not worth|waste of|wasted|complain\w*|issue|problem|mistake|excuse|"
    r"apolog\w*|refund|"
    r"bland|soggy|stale|greasy|undercooked|overcooked|burnt|lukewarm|tasteless|flavorless|inedible|cold|"
    r"sick|lacked|lacking|didn't have (?:a lot of|much|any) (?:flavou?r|taste)|"
    r"rude|unprofessional|unfriendly|ignored|forgot|forgotten|hurried|rushed|nowhere to be found|annoy\w*|"
    r"(?:wasn't|weren't|was not|were not) (?:offered|told|informed|greeted|acknowledged)|"
    r"no (?:one|apology|explanation)|wrong order|got (?:it|the order) wrong|spill\w*|leak\w*|"
    r"slow|took forever|long (?:line|wait)s?|had to (?:ask|wait|flag|move)|hectic|chaotic|"
    r"\d+ ?(?:hrs?|hours?|mins?|minutes?) wait|"
    r"(?:waited|wait(?:ing)?) (?:for )?(?:over |about |almost |another )?"
    r"(?:\d+|an?|one|two|twenty|thirty|forty|45) ?(?:mins?|minutes|hours?|hrs?)|"
    r"overpriced|over-priced|charged|"
    r"noisy|loud(?:ly|er)?|cramped|dirty|filthy|gross|odou?r|stink\w*|smell(?:ed|s)? (?:bad|like)|"
    r"poor(?:ly)?|bad|worse|"
    r"too (?!good\b|cute\b|bad\b|many (?:good|great)|and\b|but\b|or\b|so\b)\w+|"
    r"a (?:bit|tad|little|touch) (?:too |on the )?(?:high|pricey|expensive|salty|sweet|dry|bland|greasy|slow|"
    r"loud|noisy|small|steep|overpriced|cold)|"
    r"(?:could|should|would|might)(?:'ve| have) (?:been|liked?|put|used|done)|could use|"
    r"should(?:n't)? have|would have been|could have been|wish(?:ed)?|"
    r"not (?:good|great|impressed|happy|the best|fresh|busy)|" + WISHED_FOR.pattern + r")\b",
    re.IGNORECASE,
)
STRONG_POSITIVE = 0.5
LOW_STARS = 2.0


class ContextualPolarity:
    """The consensus of VADER and the star classifier, corrected by complaint cues and the review's
    rating (rules 1 and 2 of the module docstring)."""

    name = "contextual"

    def __init__(self, vader: PolarityModel, stars: PolarityModel) -> None:
        self.vader, self.stars = vader, stars

    def predict(
        self, sentences: Sequence[str], stars: Sequence[float] | None = None
    ) -> list[tuple[int, float]]:
        ratings = list(stars) if stars is not None else [None] * len(sentences)
        out = []
        rows = zip(
            sentences, ratings, self.vader.predict(sentences), self.stars.predict(sentences), strict=True
        )
        for text, rating, (pa, sa), (pb, sb) in rows:
            polarity = 1 if pa == 1 and pb == 1 else (-1 if -1 in (pa, pb) else 0)
            strong = sa >= STRONG_POSITIVE and sb >= STRONG_POSITIVE
            if polarity >= 0 and COMPLAINT_RE.search(text) and not (polarity == 1 and sa >= STRONG_POSITIVE):
                polarity = -1
            if rating is not None and rating <= LOW_STARS and polarity >= 0 and not strong:
                polarity = -1
            if WISHED_FOR.search(text):
                polarity = -1
            out.append((polarity, (sa + sb) / 2))
        return out


def make_model(name: str, reviews: Iterable[Review] = ()) -> PolarityModel:
    """A polarity model by name: ``vader``, or ``stars`` / ``consensus`` / ``contextual`` (fitted on
    ``reviews``; without both >= 4-star and <= 2-star reviews to learn from, ``consensus`` and
    ``contextual`` fall back to VADER alone)."""
    if name == "vader":
        return VaderPolarity()
    if name == "stars":
        return StarClassifier().fit(reviews)
    if name in ("consensus", "contextual"):
        try:
            stars = StarClassifier().fit(reviews)
        except ValueError:  # no low- or no high-star review to learn from: VADER alone
            return VaderPolarity()
        cls = ConsensusPolarity if name == "consensus" else ContextualPolarity
        return cls(VaderPolarity(), stars)
    raise ValueError(
        f"unknown polarity model {name!r}; expected 'vader', 'stars', 'consensus' or 'contextual'"
    )


def _score(score: float) -> float:
    """The stored score: rounded to 4 decimals, ``-0.0`` as ``0.0`` (SQLite stores an integral REAL as an
    integer, so a stored ``-0.0`` reads back as ``0.0`` and would change the KB's content hash)."""
    return round(score, 4) + 0.0


def annotate(
    reviews: Iterable[Review], model: PolarityModel | None = None
) -> dict[str, list[SentenceStance]]:
    """``{review_id: [SentenceStance of each sentence, in order]}`` for ``reviews``.

    ``model`` defaults to :data:`DEFAULT_MODEL` (a star classifier is fitted on ``reviews`` themselves;
    when they lack either >= 4-star or <= 2-star reviews, VADER alone is used).
    """
    reviews = list(reviews)
    model = model or make_model(DEFAULT_MODEL, reviews)
    spans: list[tuple[str, int, int, str]] = []
    ratings: list[float] = []
    for review in reviews:
        for start, end in split_sentences(review.text):
            spans.append((review.review_id, start, end, review.text[start:end]))
            ratings.append(review.stars)
    predictions = model.predict([s[3] for s in spans], ratings)
    out: dict[str, list[SentenceStance]] = {r.review_id: [] for r in reviews}
    for (review_id, start, end, text), (polarity, score) in zip(spans, predictions, strict=True):
        out[review_id].append(
            SentenceStance(review_id, start, end, sentence_aspects(text), polarity, _score(score))
        )
    return out


def stance_at(
    stances: Mapping[str, list[SentenceStance]], review_id: str, start: int
) -> SentenceStance | None:
    """The stance of the sentence of ``review_id`` that contains offset ``start`` (None when unknown)."""
    for s in stances.get(review_id, ()):
        if s.start <= start < s.end:
            return s
    return None
