"""Does a predicted value state the gold value? Comparators for one (SKU, attribute) pair.

Correctness: values compare with ``groundtrace.core.evidence.normalize.values_equal`` (booleans, units,
abbreviations, 2 % / 0.5 numeric tolerance) using the attribute's template kind/unit when templates are given
(:func:`equal_for`), then with the per-type gold-wording rules of :func:`typed_equal` (quantity parsed out
of ``"12 oz Bag"``, pack counts out of ``"Pack of 3"``, enum synonyms, contiguous-token containment for
strings); a single-valued gold accepts its ``value`` or any ``alternatives``; a list gold
(multi-valued attribute) needs set equality — every predicted item equals some gold item and vice versa.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from groundtrace.catalog.model import AttributeSpec, GoldLabel
from groundtrace.catalog.scout.lexicons import map_to_vocab
from groundtrace.catalog.scout.quantities import unit_key
from groundtrace.catalog.templates import TemplateSet
from groundtrace.core.evidence.normalize import normalize_value, parse_quantity, values_equal

Equal = Callable[[str, str], bool]
_BOOL_WORDS = frozenset({"true", "false", "yes", "no", "y", "n"})
_NUMBER = re.compile(r"(?<![\w./-])(\d+[- ]\d+/\d+|\d+/\d+|\d+(?:[.,]\d+)?)(?![\d/]|-\d)")
_WORD = re.compile(r"\s*-?\s*([A-Za-z\"”'%][A-Za-z.]*(?:-[A-Za-z]+)*)")
_PACK_COUNT = re.compile(
    r"^\s*(?P<a>\d+)\s*$|\b(?:pack|case|box|set|bundle|lot)\s+of\s+(?P<b>\d+)\b"
    r"|\b(?P<c>\d+)\s*[-\s]?\s*(?:pack|pk|packs|count|ct|pcs?|pieces?|units?)\b",
    re.IGNORECASE,
)
_TOKEN = re.compile(r"[^\W_]+")
_COUNT_WORDS = frozenset(
    {
        "count",
        "ct",
        "pc",
        "pcs",
        "piece",
        "capsule",
        "pod",
        "k-cup",
        "kcup",
        "teabag",
        "bag",
        "sachet",
        "tablet",
        "softgel",
        "serving",
        "unit",
    }
)
MIN_TOKEN_COVER = 0.5


def quantity_mentions(text: str) -> list[str]:
    """Every ``number [unit]`` inside ``text``, the unit read from the extractor's closed unit-token list
    (up to two words, longest first) or a count word (count, ct, pcs, pieces, capsules, pods, k-cups,
    tea bags, bags, sachets → ``"N count"``): ``"Large 2.2 Pound Bag"`` → ``["2.2 Pound"]``, ``"3.6 OZ
    (102g)"`` → ``["3.6 OZ", "102 g"]``, ``"1 bag (20 oz.)"`` → ``["1 count", "20 oz"]``. A number followed
    by no unit gives the bare number."""
    out: list[str] = []
    for m in _NUMBER.finditer(text):
        words: list[str] = []
        pos = m.end()
        for _ in range(2):
            w = _WORD.match(text, pos)
            if not w:
                break
            words.append(w.group(1).rstrip("."))
            pos = w.end()
        number = re.sub(r"[- ]", " ", m.group(1))  # "6-7/8" -> "6 7/8" (a mixed fraction)
        if words and _singular(words[0].lower()) in _COUNT_WORDS:
            out.append(f"{number} count")
            continue
        for k in range(len(words), 0, -1):
            unit = " ".join(words[:k])
            if unit_key(unit) is not None and parse_quantity(f"{number} {unit}") is not None:
                out.append(f"{number} {unit}")
                break
        else:
            out.append(number)
    return out


def pack_count(text: str) -> int | None:
    """The pack/piece count a value states: ``"Pack of 3"``, ``"2-pack"``, ``"6 pk"``, ``"12 Count"``,
    ``"3"`` → the integer; ``None`` when the text states none or several different ones."""
    found = {int(next(g for g in m.groups() if g)) for m in _PACK_COUNT.finditer(text)}
    return found.pop() if len(found) == 1 else None


def _singular(token: str) -> str:
    if len(token) > 4 and token.endswith("ies"):
        return token[:-3] + "y"
    if len(token) > 3 and token.endswith("s") and not token.endswith("ss"):
        return token[:-1]
    return token


def value_tokens(text: str) -> list[str]:
    """Normalised word tokens (``core.normalize`` canonical string, singular forms)."""
    return [_singular(t) for t in _TOKEN.findall(normalize_value(text, "string") or "")]


def token_contained(a: str, b: str, min_cover: float = MIN_TOKEN_COVER) -> bool:
    """True when the tokens of the shorter value appear *contiguously and in order* in the longer one and
    cover at least ``min_cover`` of the longer one's tokens: ``"whole bean"`` ⊂ ``"Whole Bean Coffee"``
    (2/3), ``"cherry"`` ⊂ ``"Sour Cherry"`` (1/2); ``"lemon"`` vs ``"Sicilian Lemon & Honeysuckle"`` is
    1/3 → False."""
    ta, tb = value_tokens(a), value_tokens(b)
    short, long_ = (ta, tb) if len(ta) <= len(tb) else (tb, ta)
    if not short or len(short) / len(long_) < min_cover:
        return False
    n = len(short)
    return any(long_[i : i + n] == short for i in range(len(long_) - n + 1))


def _vocab_of(text: str, vocab: list[str], search: bool = False) -> list[str]:
    """Vocabulary values ``text`` names — the whole text (``search=False``) or any phrase inside it —
    through the extractor's value phrases (synonyms, abbreviations, plural ``s``)."""
    return map_to_vocab(text, vocab, search=search)


def _numbers_equal(a: str, b: str, unit: str | None) -> bool:
    """Any quantity mentioned in ``a`` equals any mentioned in ``b`` (same dimension, 2 % / 0.5); a side
    that is a whole bare number also equals a count (``"36"`` = ``"36 count"``)."""
    qa, qb = quantity_mentions(a), quantity_mentions(b)
    if any(values_equal(x, y, "number", unit) for x in qa for y in qb):
        return True
    for bare, other in ((a, qb), (b, qa)):
        whole = parse_quantity(bare)
        if (
            whole is not None
            and whole.unitless
            and any(
                y == f"{n} count" and values_equal(bare, n, "number") for y in other for n in [y.split()[0]]
            )
        ):
            return True
    return False


def typed_equal(a: str, b: str, spec: AttributeSpec) -> bool:
    """``a`` and ``b`` state the same value of ``spec`` (symmetric). ``core.normalize.values_equal`` with
    the template kind/unit first; then, per type:

    * number with a unit, or with recommended unit symbols: a quantity mentioned in one side equals one
      mentioned in the other (``"12 oz"`` = ``"12 oz Bag"`` = ``"Large 12 Ounce Bag"``; ``"16 oz"`` ≠
      ``"12 oz Bag"``), and a whole bare number equals a count (``"36"`` = ``"36 count"``);
    * unit-less number (pack/piece counts): both sides state the same integer count (``"3"`` = ``"Pack of
      3"`` = ``"3-pack"``);
    * enum: both sides name the same *set* of allowed values through the vocabulary and its synonyms
      (``"Decaf"`` → {decaffeinated}; ``"Tea Powder, Tapioca Pearls"`` names one value, a pie assortment
      naming three flavours matches none of them alone);
    * string: the whole of both sides is the same recommended-vocabulary value (``"Teabags"`` = ``"tea
      bags"``), or :func:`token_contained` (contiguous, in order, covering >= 50 % of the longer side:
      ``"cherry"`` = ``"Sour Cherry"``, ``"lemon"`` ≠ ``"Sicilian Lemon & Honeysuckle"``);
    * bool: ``values_equal`` only.
    """
    if values_equal(a, b, spec.type, spec.unit):
        return True
    if spec.type == "bool":
        return False
    if spec.type == "number":
        has_unit = spec.unit or any(
            parse_quantity(f"1 {u}") is not None and not parse_quantity(f"1 {u}").unitless
            for u in spec.recommended_values
        )
        if has_unit and _numbers_equal(a, b, spec.unit):
            return True
        ca, cb = pack_count(a), pack_count(b)
        return ca is not None and ca == cb
    if spec.type == "enum":
        va, vb = _vocab_of(a, spec.allowed_values, True), _vocab_of(b, spec.allowed_values, True)
        return bool(va) and set(va) == set(vb)
    if spec.recommended_values:
        va, vb = _vocab_of(a, spec.recommended_values), _vocab_of(b, spec.recommended_values)
        if va and va == vb:
            return True
    return token_contained(a, b)


def equal_for(spec: AttributeSpec | None) -> Equal:
    """Comparator for one attribute: :func:`typed_equal` with the template spec when the attribute is
    known; otherwise string equality, then number equality when both sides parse as quantities, then
    boolean equality when both sides are yes/no/true/false words."""
    if spec is not None:
        return lambda a, b: typed_equal(a, b, spec)

    def untyped(a: str, b: str) -> bool:
        if values_equal(a, b, "string"):
            return True
        if parse_quantity(a) is not None and parse_quantity(b) is not None:
            return values_equal(a, b, "number")
        if a.strip().lower() in _BOOL_WORDS and b.strip().lower() in _BOOL_WORDS:
            return values_equal(a, b, "bool")
        return False

    return untyped


def _items(value: str | list[str] | None) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else [v for v in value if v is not None]


def value_matches(predicted: str | list[str], gold: GoldLabel, equal: Equal) -> bool:
    """Is ``predicted`` right for ``gold`` (which must carry a value)? Rules in the module docstring."""
    preds = _items(predicted)
    if not preds:
        return False
    if isinstance(gold.value, list):
        wanted = _items(gold.value)
        return all(any(equal(p, g) for g in wanted) for p in preds) and all(
            any(equal(p, g) for p in preds) for g in wanted
        )
    accepted = _items(gold.value) + list(gold.alternatives)
    return all(any(equal(p, g) for g in accepted) for p in preds)


def set_counts(predicted: str | list[str] | None, gold: GoldLabel, equal: Equal) -> tuple[int, int, int, int]:
    """Set overlap of a multi-valued prediction with list gold: ``(predicted items that match a gold item,
    predicted items, gold items matched by a prediction, gold items)`` — the parts of set precision
    (first / second), recall (third / fourth) and F1 (``(first + third) / (second + fourth)``, which is
    ``2·TP / (|P| + |G|)`` when matches are one-to-one)."""
    preds, wanted = _items(predicted), _items(gold.value)
    hit_p = sum(any(equal(p, g) for g in wanted) for p in preds)
    hit_g = sum(any(equal(p, g) for p in preds) for g in wanted)
    return hit_p, len(preds), hit_g, len(wanted)


def spec_of(templates: TemplateSet | None, category: str, attribute: str) -> AttributeSpec | None:
    """The template spec of ``attribute`` in the template ``category`` routes to (None: unknown)."""
    template = templates.for_category(category) if templates is not None else None
    return next((a for a in template.attributes if a.slug == attribute), None) if template else None


def correct_for(templates: TemplateSet | None) -> Callable[[str, GoldLabel, str], bool]:
    """``correct(value, gold, category)`` as :func:`~groundtrace.catalog.evaluation.scoring.evaluate`
    judges a pair — the comparator a learned model is calibrated with (``catalog train --templates``), so
    its θ is picked for the precision the evaluation measures. Comparators are cached per (category,
    attribute)."""
    cache: dict[tuple[str, str], Equal] = {}

    def correct(value: str, gold: GoldLabel, category: str) -> bool:
        if gold.not_applicable or gold.value in (None, []):
            return False
        key = (category, gold.attribute)
        if key not in cache:
            cache[key] = equal_for(spec_of(templates, category, gold.attribute))
        return value_matches(value, gold, cache[key])

    return correct
