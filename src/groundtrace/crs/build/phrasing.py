"""Stage 3b data — the user-language bank: phrasings per constraint, frames, hedges, held-out split pools.

The bank (``crs/data/phrasings.yaml``, header documents the fields) gives every constraint ``(kind,
value)`` many *phrasings*: fixed ones per constraint, and compositional *families* (templates filled from
the cuisine / category tables, or from a distance value: ``{km}``, ``{mi}``, ``{walk}``, ``{ride}``).
A ``(kind, value)`` with no entry is spoken by the ``fallback`` family (``{v}`` = the value in words).

Held-out split rule
-------------------
``u(x) = int(sha256(normalise(x))[:8], 16) / 16**8``; a phrasing (or a family template, a frame, a hedge)
goes to train when ``u < 0.6``, validation when ``u < 0.8``, test otherwise (:data:`SPLIT_CUTS`). A pool
left empty by the hash is repaired: the item of the largest pool whose ``u`` is nearest to the empty
split's interval moves there (so every constraint, family and frame bank is spoken in every split).
Family realisations take their template's split, so a test template is never seen with any value.
``normalise`` (:func:`groundtrace.crs.dataset.language.normalise`): NFKC, casefold, curly quotes
straightened, whitespace collapsed, outer punctuation stripped.

Loading (:func:`load_bank`) validates the file with pydantic and reports every bad entry as
``file:line: message`` (:class:`PhrasingFileError`): unknown keys or kinds, fewer than
:data:`MIN_PER_POOL` × 3 items in a bank, a normalised phrasing listed under two constraints, a family
realisation that equals a phrasing of another split, a known value whose family leaves a split empty.
"""

from __future__ import annotations

import hashlib
import re
import string
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from groundtrace.core.files.validation import validation_errors
from groundtrace.core.files.yaml_loader import YamlDocument, YamlError, parse_yaml, read_yaml
from groundtrace.crs.dataset.language import normalise
from groundtrace.crs.schema import ConstraintKind, PoiType

SPLITS = ("train", "validation", "test")
#: upper bounds of ``u`` for train and validation (test takes the rest): 60/20/20
SPLIT_CUTS = (0.6, 0.8)
MIN_PER_POOL = 1
FRAME_NAMES = (
    "request",
    "request_open",
    "request_next",
    "request_next_open",
    "provide",
    "provide_open",
    "extra",
    "extra_open",
    "reject",
    "reject_open",
    "reject_tail",
)
PHRASE, SENTENCE = "phrase", "sentence"
#: the slots each frame may use (the realiser fills exactly these; ``labels`` only where phrases go)
FRAME_SLOTS: dict[str, frozenset[str]] = {
    "request": frozenset({"city", "noun", "a_noun", "labels"}),
    "request_open": frozenset({"city", "noun", "a_noun"}),
    "request_next": frozenset({"prev", "a_noun", "labels"}),
    "request_next_open": frozenset({"prev", "a_noun"}),
    "provide": frozenset({"labels"}),
    "provide_open": frozenset(),
    "extra": frozenset({"labels"}),
    "extra_open": frozenset(),
    "reject": frozenset({"name", "reason", "labels"}),
    "reject_open": frozenset({"name", "reason"}),
    "reject_tail": frozenset(),
}

T = TypeVar("T")

# -- split rule -----------------------------------------------------------------------------------------


def phrase_u(text: str) -> float:
    """``u`` of the split rule: the first 8 hex digits of sha256(normalised text) over 16**8."""
    return int(hashlib.sha256(normalise(text).encode("utf-8")).hexdigest()[:8], 16) / 16**8


def split_of_u(u: float) -> str:
    return SPLITS[0] if u < SPLIT_CUTS[0] else SPLITS[1] if u < SPLIT_CUTS[1] else SPLITS[2]


def _interval(split: str) -> tuple[float, float]:
    lo = (0.0, *SPLIT_CUTS)[SPLITS.index(split)]
    hi = (*SPLIT_CUTS, 1.0)[SPLITS.index(split)]
    return lo, hi


def partition(items: Iterable[T], text: Callable[[T], str]) -> dict[str, list[T]]:
    """Items by split (hash rule), repaired so that no split is empty when there are >= 3 items."""
    keyed = sorted(((phrase_u(text(x)), text(x), x) for x in items), key=lambda t: (t[0], t[1]))
    pools: dict[str, list[tuple[float, str, T]]] = {s: [] for s in SPLITS}
    for u, t, x in keyed:
        pools[split_of_u(u)].append((u, t, x))
    if len(keyed) >= len(SPLITS):
        for s in reversed(SPLITS):  # test first: the held-out pool matters most
            if pools[s]:
                continue
            lo, hi = _interval(s)
            donor = max((d for d in SPLITS if d != s), key=lambda d: (len(pools[d]), -SPLITS.index(d)))
            move = min(pools[donor], key=lambda it: (min(abs(it[0] - lo), abs(it[0] - hi)), it[1]))
            pools[donor].remove(move)
            pools[s].append(move)
    return {s: [x for _, _, x in sorted(pools[s], key=lambda t: (t[0], t[1]))] for s in SPLITS}


# -- file model -----------------------------------------------------------------------------------------


class PhrasingEntry(BaseModel):
    """A phrasing restricted to some POI types."""

    model_config = ConfigDict(extra="forbid")
    text: str = Field(min_length=1, max_length=160)
    types: list[PoiType] | None = None


Item = str | PhrasingEntry


class ConstraintEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kind: ConstraintKind
    value: str | int | float | bool
    phrases: list[Item] = Field(default_factory=list)
    sentences: list[Item] = Field(default_factory=list)


class FamilyEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")
    phrases: list[str] = Field(default_factory=list)
    sentences: list[str] = Field(default_factory=list)


class CuisineEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: list[str] = Field(default_factory=list)
    dish: list[str] = Field(default_factory=list)
    place: list[str] = Field(default_factory=list)


class CategoryEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")
    type: PoiType
    n: list[str] = Field(min_length=1)
    pl: list[str] = Field(default_factory=list)


class BankFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    hedges: list[str] = Field(min_length=3)
    frames: dict[str, list[str]]
    families: dict[str, FamilyEntry]
    cuisines: dict[str, CuisineEntry] = Field(default_factory=dict)
    categories: dict[str, CategoryEntry] = Field(default_factory=dict)
    constraints: list[ConstraintEntry]

    @field_validator("hedges")
    @classmethod
    def _hedge_slot(cls, hedges: list[str]) -> list[str]:
        bad = [h for h in hedges if h.count("{p}") != 1]
        if bad:
            raise ValueError(f"every hedge needs exactly one {{p}}: {bad}")
        return hedges


class PhrasingFileError(ValueError):
    """The phrasing bank is malformed; the message names ``file:line`` of each bad entry."""


# -- the bank -------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Phrasing:
    """One way to say a constraint: ``text`` (may hold ``{anchor}``), its shape and split, where it came
    from (``bank``, ``family:<name>``, ``fallback``, ``mined``) and its provenance (file line or review)."""

    text: str
    shape: str
    split: str
    source: str = "bank"
    types: tuple[str, ...] | None = None
    line: int = 0
    provenance: tuple[tuple[str, str], ...] = ()

    def fits(self, poi_type: str) -> bool:
        return self.types is None or poi_type in self.types


def value_key(value: object) -> str:
    """A constraint value as a lookup key: numbers by ``%g`` (``4.0`` and ``4`` agree), bools lowercase."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int | float):
        return f"{float(value):g}"
    return str(value)


def with_article(noun: str) -> str:
    return f"{'an' if noun[:1].lower() in 'aeiou' else 'a'} {noun}"


def distance_slots(km: float) -> dict[str, str]:
    """Amounts for a distance: km, miles (1 decimal), walking minutes (12 min/km, to 5), ride minutes."""
    walk = max(5, round(km * 12 / 5) * 5)
    ride = max(5, round(km * 3 / 5) * 5)
    return {"km": f"{km:g}", "mi": f"{km * 0.621371:.1f}", "walk": str(walk), "ride": str(ride)}


_SLOT_RE = re.compile(r"\{(\w+)\}")


def fill(template: str, slots: dict[str, list[str]]) -> list[str]:
    """Every realisation of ``template`` over the slot values (``{anchor}`` is kept); [] if a slot is
    missing. Several slots multiply."""
    names = [n for n in dict.fromkeys(_SLOT_RE.findall(template)) if n != "anchor"]
    out = [template]
    for n in names:
        values = slots.get(n)
        if not values:
            return []
        out = [t.replace("{" + n + "}", v) for t in out for v in values]
    return out


def _cuisine_slots(e: CuisineEntry) -> dict[str, list[str]]:
    return {
        "name": e.name,
        "a_name": [with_article(n) for n in e.name],
        "dish": e.dish,
        "place": e.place,
        "a_place": [with_article(p) for p in e.place],
    }


def _category_slots(e: CategoryEntry) -> dict[str, list[str]]:
    return {"n": e.n, "a_n": [with_article(n) for n in e.n], "pl": e.pl}


def _value_words(value: object) -> str:
    return str(value).replace("_", " ").lower()


@dataclass
class PhrasingBank:
    """The loaded bank. :meth:`pool` gives the phrasings of a constraint for a split and POI type.

    ``owner``: normalised phrasing → its split, over every fixed phrasing, family realisation for the
    tables' values and template (the global map the held-out checks and typo guard use).
    """

    name: str
    fixed: dict[tuple[str, str], list[Phrasing]]
    families: dict[str, dict[str, list[tuple[str, str]]]]  # family -> split -> [(template, shape)]
    cuisines: dict[str, CuisineEntry]
    categories: dict[str, CategoryEntry]
    frames: dict[str, dict[str, list[str]]]
    hedges: dict[str, list[str]]
    owner: dict[str, str]
    mined: dict[tuple[str, str], list[Phrasing]] = field(default_factory=dict)
    _cache: dict[tuple[str, str, str], dict[str, list[Phrasing]]] = field(default_factory=dict, repr=False)

    # -- lookups ------------------------------------------------------------------------------------------
    def phrasings(self, kind: str, value: object) -> dict[str, list[Phrasing]]:
        """Every phrasing of ``(kind, value)`` by split (fixed or family, plus mined ones)."""
        key = (kind, value_key(value), "")
        hit = self._cache.get(key)
        if hit is None:
            hit = self._phrasings(kind, value)
            self._cache[key] = hit
        return hit

    def pool(self, kind: str, value: object, split: str, poi_type: str) -> list[Phrasing]:
        """The split's phrasings of ``(kind, value)`` that fit ``poi_type`` (all of the split's when none
        fits)."""
        key = (kind, value_key(value), f"{split}:{poi_type}")
        hit = self._cache.get(key)
        if hit is None:
            pool = self.phrasings(kind, value)[split]
            hit = {split: [p for p in pool if p.fits(poi_type)] or pool}
            self._cache[key] = hit
        return hit[split]

    def _phrasings(self, kind: str, value: object) -> dict[str, list[Phrasing]]:
        vk = value_key(value)
        fixed = self.fixed.get((kind, vk))
        if fixed is not None:
            out = {s: [p for p in fixed if p.split == s] for s in SPLITS}
        else:
            out = self._family_phrasings(kind, value)
        for p in self.mined.get((kind, vk), ()):
            out[p.split].append(p)
        return out

    def family_of(self, kind: str, value: object) -> tuple[str, dict[str, list[str]]] | None:
        """``(family name, slots)`` that speaks ``(kind, value)``, or None when only the fallback can."""
        v = str(value)
        if kind == "cuisine" and v in self.cuisines:
            return "cuisine", _cuisine_slots(self.cuisines[v])
        if kind == "category" and v in self.categories:
            entry = self.categories[v]
            return f"category:{entry.type}", _category_slots(entry)
        distance = kind == "max_distance_km" and isinstance(value, int | float)
        if distance and "max_distance_km" in self.families:
            return "max_distance_km", {k: [x] for k, x in distance_slots(float(value)).items()}
        return None

    def _family_phrasings(self, kind: str, value: object) -> dict[str, list[Phrasing]]:
        found = self.family_of(kind, value)
        out: dict[str, list[Phrasing]] = {s: [] for s in SPLITS}
        if found is not None:
            name, slots = found
            for s in SPLITS:
                for template, shape in self.families.get(name, {}).get(s, []):
                    out[s] += [Phrasing(t, shape, s, f"family:{name}") for t in fill(template, slots)]
        if all(out[s] for s in SPLITS):
            return out
        slots = {"v": [_value_words(value)]}
        for s in SPLITS:  # fallback: the value in words; only for splits the family leaves empty
            if not out[s]:
                for template, shape in self.families.get("fallback", {}).get(s, []):
                    out[s] += [Phrasing(t, shape, s, "fallback") for t in fill(template, slots)]
        return out

    def value_noun(self, kind: str, value: object) -> str:
        """A value in words for reasons ("a lot of tacos lately", "not museums this time")."""
        v = str(value)
        if kind == "cuisine" and v in self.cuisines:
            e = self.cuisines[v]
            return (e.dish or e.name or [v])[0]
        if kind == "category" and v in self.categories:
            e = self.categories[v]
            return (e.pl or e.n)[0]
        return _value_words(value)

    def frame(self, name: str, split: str) -> list[str]:
        return self.frames[name][split]

    def seen_elsewhere(self, text: str, split: str) -> bool:
        """True when ``text`` (normalised) is a phrasing of a split other than ``split``."""
        owner = self.owner.get(normalise(text))
        return owner is not None and owner != split

    # -- stats and mining --------------------------------------------------------------------------------
    def known_constraints(self) -> list[tuple[str, object]]:
        """Every ``(kind, value)`` the bank names: fixed entries, cuisines, categories."""
        out: list[tuple[str, object]] = [(k, v) for (k, v) in self.fixed]
        out += [("cuisine", c) for c in self.cuisines]
        out += [("category", c) for c in self.categories]
        return out

    def with_mined(self, mined: list[tuple[str, object, Phrasing]]) -> tuple[PhrasingBank, list[Phrasing]]:
        """A copy whose pools also hold ``mined`` ``(kind, value, phrasing)``; a phrasing whose normalised
        text is already in the bank (any constraint) is skipped. Returns the copy and the phrasings kept."""
        owner = dict(self.owner)
        extra: dict[tuple[str, str], list[Phrasing]] = {k: list(v) for k, v in self.mined.items()}
        kept: list[Phrasing] = []
        for kind, value, p in mined:
            n = normalise(p.text)
            if n in owner:
                continue
            owner[n] = p.split
            extra.setdefault((kind, value_key(value)), []).append(p)
            kept.append(p)
        bank = replace(self, owner=owner, mined=extra, _cache={})
        return bank, kept

    def size_by_kind(self) -> dict[str, dict[str, int]]:
        """Per kind: constraints, phrasings (all splits) and the smallest per-constraint count, over the
        constraints the bank names (families realised for the tables' values; distances for the
        builder's radii)."""
        stats: dict[str, dict[str, int]] = {}
        pairs = self.known_constraints() + [("max_distance_km", r) for r in BUILDER_RADII_KM]
        for kind, value in pairs:
            by = self.phrasings(kind, value)
            n = sum(len({p.text for p in by[s]}) for s in SPLITS)
            row = stats.setdefault(kind, {"constraints": 0, "phrasings": 0, "min_per_constraint": n})
            row["constraints"] += 1
            row["phrasings"] += n
            row["min_per_constraint"] = min(row["min_per_constraint"], n)
        return dict(sorted(stats.items()))


#: distance radii the bundled personas and the itinerary planner use (for the bank's size statistics)
BUILDER_RADII_KM = (1.0, 1.5, 2.0, 2.5, 3.0)


# -- loading --------------------------------------------------------------------------------------------


def _item(x: Item) -> tuple[str, tuple[str, ...] | None]:
    return (x, None) if isinstance(x, str) else (x.text, tuple(x.types) if x.types else None)


class _Loader:
    """Builds a :class:`PhrasingBank` from a validated file, collecting ``file:line`` errors."""

    def __init__(self, doc: YamlDocument, model: BankFile) -> None:
        self.doc, self.m, self.name = doc, model, doc.name
        self.errors: list[str] = []
        self.owner: dict[str, tuple[str, str, int]] = {}  # normalised -> (split, what, line)

    def err(self, loc: tuple[Any, ...], message: str) -> None:
        self.errors.append(f"{self.name}:{self.doc.line_of(loc)}: {message}")

    def claim(self, text: str, split: str, what: str, loc: tuple[Any, ...]) -> None:
        n = normalise(text)
        prev = self.owner.get(n)
        line = self.doc.line_of(loc)
        if prev is None:
            self.owner[n] = (split, what, line)
        elif prev[0] != split or (prev[1] != what and not what.startswith("family")):
            self.err(loc, f"{text!r} ({what}, {split}) is also {prev[1]} ({prev[0]}) at line {prev[2]}")

    def fixed(self) -> dict[tuple[str, str], list[Phrasing]]:
        out: dict[tuple[str, str], list[Phrasing]] = {}
        for i, entry in enumerate(self.m.constraints):
            key = (entry.kind, value_key(entry.value))
            where = f"{entry.kind}={entry.value}"
            if key in out:
                self.err(("constraints", i), f"constraint {where} is listed twice")
                continue
            items: list[tuple[str, str, tuple[str, ...] | None, tuple[Any, ...]]] = []
            for shape, field_name in ((PHRASE, "phrases"), (SENTENCE, "sentences")):
                for j, x in enumerate(getattr(entry, field_name)):
                    text, types = _item(x)
                    items.append((text, shape, types, ("constraints", i, field_name, j)))
            seen: set[str] = set()
            unique = []
            for it in items:
                if normalise(it[0]) in seen:
                    self.err(it[3], f"{it[0]!r} is listed twice for {where}")
                    continue
                seen.add(normalise(it[0]))
                unique.append(it)
            if len(unique) < len(SPLITS) * MIN_PER_POOL:
                self.err(("constraints", i), f"{where} has {len(unique)} phrasings; at least 3 are needed")
                continue
            pools = partition(unique, lambda it: it[0])
            phrasings = []
            for s in SPLITS:
                for text, shape, types, loc in pools[s]:
                    self.claim(text, s, where, loc)
                    phrasings.append(Phrasing(text, shape, s, "bank", types, self.doc.line_of(loc)))
            out[key] = phrasings
        return out

    def families(self) -> dict[str, dict[str, list[tuple[str, str]]]]:
        out: dict[str, dict[str, list[tuple[str, str]]]] = {}
        for name, fam in self.m.families.items():
            items = [(t, PHRASE, ("families", name, "phrases", j)) for j, t in enumerate(fam.phrases)]
            items += [(t, SENTENCE, ("families", name, "sentences", j)) for j, t in enumerate(fam.sentences)]
            if len(items) < len(SPLITS):
                self.err(("families", name), f"family {name!r} has {len(items)} templates; at least 3")
                continue
            pools = partition(items, lambda it: it[0])
            out[name] = {s: [(t, shape) for t, shape, _ in pools[s]] for s in SPLITS}
            for s in SPLITS:
                for t, _, loc in pools[s]:
                    self.claim(t, s, f"family:{name}", loc)
        return out

    def split_pools(self, items: list[str], loc: tuple[Any, ...], what: str) -> dict[str, list[str]]:
        if len(set(items)) < len(SPLITS):
            self.err(loc, f"{what} needs at least 3 distinct entries, has {len(set(items))}")
        return partition(dict.fromkeys(items), lambda t: t)

    def check_values(self, bank: PhrasingBank) -> None:
        """Every table value is spoken in every split by its own family, and its realisations do not
        equal a phrasing of another split."""
        tables: list[tuple[str, str, tuple[Any, ...]]] = [
            ("cuisine", v, ("cuisines", v)) for v in self.m.cuisines
        ] + [("category", v, ("categories", v)) for v in self.m.categories]
        for kind, value, loc in tables:
            by = bank.phrasings(kind, value)
            empty = [s for s in SPLITS if not any(p.source.startswith("family") for p in by[s])]
            if empty:
                self.err(loc, f"{kind} {value!r}: its family has no phrasing for {', '.join(empty)}")
            for s in SPLITS:
                for p in by[s]:
                    self.claim(p.text, s, f"family:{kind}", loc)


def _build(doc: YamlDocument) -> PhrasingBank:
    try:
        model = BankFile.model_validate(doc.data)
    except ValidationError as exc:  # every bad entry (up to 20), each at its own line
        errors = validation_errors(exc, file=doc.name, line=doc.line_of, model=BankFile, limit=20)
        raise PhrasingFileError("\n".join(str(e) for e in errors)) from None
    ld = _Loader(doc, model)
    missing = [f for f in FRAME_NAMES if f not in model.frames]
    if missing:
        ld.err(("frames",), f"frames lack {', '.join(missing)}")
    for f in ("fallback",):
        if f not in model.families:
            ld.err(("families",), f"families lack {f!r}")
    fixed = ld.fixed()
    families = ld.families()
    for f, texts in model.frames.items():
        allowed = FRAME_SLOTS.get(f)
        if allowed is None:
            ld.err(("frames", f), f"unknown frame {f!r} (frames: {', '.join(FRAME_NAMES)})")
            continue
        for j, text in enumerate(texts):
            try:
                used = {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}
            except ValueError as exc:
                ld.err(("frames", f, j), f"frame {text!r}: {exc}")
                continue
            if used - allowed or ("labels" in allowed and "labels" not in used):
                want = ", ".join(sorted(allowed)) or "none"
                ld.err(("frames", f, j), f"frame {text!r} uses {sorted(used)}; {f} frames take {want}")
    frames = {f: ld.split_pools(v, ("frames", f), f"frame {f!r}") for f, v in model.frames.items()}
    hedges = ld.split_pools(model.hedges, ("hedges",), "hedges")
    bank = PhrasingBank(
        name=doc.name,
        fixed=fixed,
        families=families,
        cuisines=dict(model.cuisines),
        categories=dict(model.categories),
        frames=frames,
        hedges=hedges,
        owner={},
    )
    if not ld.errors:
        ld.check_values(bank)
    if ld.errors:
        raise PhrasingFileError("\n".join(ld.errors))
    bank.owner = {n: s for n, (s, _, _) in ld.owner.items()}
    return bank


def load_bank(path: str | Path | None = None) -> PhrasingBank:
    """Load and validate a bank (the bundled ``crs/data/phrasings.yaml`` by default); raises
    :class:`PhrasingFileError` listing ``file:line: message`` per bad entry."""
    try:
        if path is None:
            source = resources.files("groundtrace.crs.data").joinpath("phrasings.yaml")
            doc = parse_yaml(source.read_text(encoding="utf-8"), "groundtrace/crs/data/phrasings.yaml")
        else:
            doc = read_yaml(path)
    except YamlError as exc:
        raise PhrasingFileError(str(exc)) from None
    if not isinstance(doc.data, dict):
        raise PhrasingFileError(f"{doc.name}:1: expected a mapping (hedges, frames, families, constraints)")
    return _build(doc)


@lru_cache(maxsize=1)
def bundled_bank() -> PhrasingBank:
    """The bundled bank (cached; treat as read-only — :meth:`PhrasingBank.with_mined` copies)."""
    return load_bank()
