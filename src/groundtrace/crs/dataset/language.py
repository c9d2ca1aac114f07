"""User-language statistics of a dataset and the held-out-phrasing rule (``GT-F007``).

* :func:`normalise` — the form constraint phrases are compared in: NFKC, casefold, curly quotes and dashes
  straightened, whitespace collapsed, outer punctuation (except ``$``) stripped.
* :func:`held_out` — over the user turns' ``constraints_added`` labels per split: the distinct normalised
  test phrases, how many of them also occur in train or validation (``seen``) and examples.
  ``seen_share = seen / distinct test phrases`` (0.0 for a held-out build).
* :func:`distinct_n` — distinct-n of a set of texts: distinct n-grams / all n-grams (tokens:
  ``[\\w'$]+`` of the lower-cased text), the usual lexical-diversity measure (Li et al., 2016).
* :func:`user_language` — distinct-1 and distinct-2 of the user turns, per split.
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field

from groundtrace.crs.schema import Dialogue

SPLITS = ("train", "validation", "test")
_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2014": "-"})
_EDGE = string.punctuation.replace("$", "").replace("{", "").replace("}", "") + " "
_TOKEN_RE = re.compile(r"[\w'$]+")


def normalise(text: str) -> str:
    """The comparison form of a phrase (see module docstring)."""
    text = unicodedata.normalize("NFKC", text).translate(_QUOTES).casefold()
    return re.sub(r"\s+", " ", text).strip(_EDGE)


def constraint_labels(dialogues: Iterable[Dialogue]) -> dict[str, set[str]]:
    """Distinct normalised labels of user-added constraints, per split (dialogues without a split skip)."""
    out: dict[str, set[str]] = {s: set() for s in SPLITS}
    for d in dialogues:
        if d.split not in out:
            continue
        for t in d.turns:
            if t.role == "user":
                out[d.split].update(normalise(c.label) for c in t.constraints_added)
    return out


@dataclass
class HeldOut:
    """The held-out measure: ``seen`` of ``total`` distinct test phrases occur in train/validation."""

    total: int = 0
    seen: int = 0
    examples: list[str] = field(default_factory=list)

    @property
    def seen_share(self) -> float:
        return self.seen / self.total if self.total else 0.0

    def as_dict(self) -> dict[str, object]:
        return {
            "test_phrases": self.total,
            "seen_in_train_or_validation": self.seen,
            "seen_share": round(self.seen_share, 6),
            "examples": self.examples,
        }


def held_out(labels: dict[str, set[str]], max_examples: int = 5) -> HeldOut:
    """:class:`HeldOut` from :func:`constraint_labels` output."""
    test = labels.get("test", set())
    other = labels.get("train", set()) | labels.get("validation", set())
    seen = sorted(test & other)
    return HeldOut(total=len(test), seen=len(seen), examples=seen[:max_examples])


def tokens(text: str) -> list[str]:
    return _TOKEN_RE.findall(text.lower())


def distinct_n(texts: Iterable[str], n: int) -> float:
    """Distinct n-grams over all n-grams of ``texts`` (0.0 when there is none)."""
    return _distinct([tokens(t) for t in texts], n)


def _distinct(tokenised: list[list[str]], n: int) -> float:
    seen: set[tuple[str, ...]] = set()
    total = 0
    for toks in tokenised:
        grams = list(zip(*(toks[i:] for i in range(n)), strict=False))
        total += len(grams)
        seen.update(grams)
    return len(seen) / total if total else 0.0


def user_language(dialogues: Iterable[Dialogue]) -> dict[str, dict[str, float]]:
    """``{split: {"user_turns": k, "distinct_1", "distinct_2", "distinct_1_at_n", "distinct_2_at_n",
    "n"}}`` over the user turns. distinct-n falls as a text set grows, so ``*_at_n`` compare the splits
    at one size: the first ``n`` user turns of each (dialogue order), ``n`` = the smallest split's count."""
    texts: dict[str, list[list[str]]] = {s: [] for s in SPLITS}
    for d in dialogues:
        if d.split in texts:
            texts[d.split].extend(tokens(t.text) for t in d.turns if t.role == "user")
    n = min((len(ts) for ts in texts.values() if ts), default=0)
    return {
        s: {
            "user_turns": len(ts),
            "distinct_1": round(_distinct(ts, 1), 4),
            "distinct_2": round(_distinct(ts, 2), 4),
            "n": n,
            "distinct_1_at_n": round(_distinct(ts[:n], 1), 4),
            "distinct_2_at_n": round(_distinct(ts[:n], 2), 4),
        }
        for s, ts in texts.items()
        if ts
    }
