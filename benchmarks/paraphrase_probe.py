"""Paraphrase probe for TRACE-CRS (issue 22): does a system understand travellers, or the generator's words?

A measurement script, not package code: no system may read it or its phrasing files. It plays the role
of the issue's hidden check (a held-out paraphrase set applied to a real Yelp slice; gold unchanged).

``apply`` — copy a dataset folder and, in the user turns of the chosen splits, replace each
``constraints_added`` constraint's ``label`` found in the turn text (case-insensitive, word-bounded) by a
probe phrasing of that ``(kind, value)``::

    python benchmarks/paraphrase_probe.py apply --dataset DS --out DS_PROBED \\
        --phrasings benchmarks/data/probe_paraphrases_dev.yaml --splits test|all [--keep-labels] [--held-out]

* Choice: ``pool[crc32(f"{dialogue_id}|{turn_index}|{kind}") % len(pool)]`` — deterministic, no RNG.
  The pool is the constraint's sentences when the label starts a sentence of its own (at the start of
  the turn or after ``. ! ?``, capitalised), else its phrases (the other shape when that one is empty);
  value-carrying templates are filled from the value (distance: ``{km}``, ``{mi}``, ``{walk}``,
  ``{ride}`` as the builder computes them; ``{anchor}``: the anchor name the label names;
  ``{stars}``: ``4``; ``{signs}``: ``$$``, ``{level}``: ``2``). A sentence is capitalised.
* Gold is untouched: candidates, reviews, KB, system turns and their gold labels (``active_constraints``
  keep the builder's labels; they are gold, not user text). The user turn's ``constraints_added[].label``
  becomes the new phrase, so ``label in turn.text`` still holds (the parser's training reads labels as
  spans); ``--keep-labels`` leaves the old labels instead.
* ``--held-out`` (with ``--splits all``): each split draws only from its share of a constraint's pool
  (:func:`held_out_pool`: ~60/20/20 by crc32 of the text), so the test split's probe phrasings never occur
  in the train split a system learns from — without it one pool serves every split, and a system that
  learns from train sees the test phrasings there (the dataset validator reports GT-F007 on such a copy).
* Writes ``probe_report.json`` into the copy and prints, per kind, the constraint mentions found and
  replaced, found without a probe phrasing, and not found (label not word-bounded in the text).

``check`` — the probe files against the generator's vocabulary::

    python benchmarks/paraphrase_probe.py check benchmarks/data/probe_paraphrases_*.yaml \\
        [--dataset DS ...] [--counts-only]

The reference is the phrasing bank (``crs/data/phrasings.yaml``: fixed phrasings, family realisations for
the tables' values and the builder's radii, fallback templates), the persona labels
(``crs/data/personas.yaml``), the mined phrasings and every constraint label of the ``--dataset`` builds.
A probe phrasing (each realisation of a template) *violates* when its comparison form (casefold,
apostrophes dropped, other punctuation but ``$`` to spaces, ``{anchor}`` kept as a word) equals, contains
or is contained in a reference phrasing's, word-bounded. Also a violation: a (kind, value) the builder
can produce (bank, personas, ``--dataset`` builds) with fewer than :data:`MIN_PHRASINGS`, and one of the
issue's example rewrites (:data:`ISSUE_EXAMPLES`). Reported: word-bigram overlap
``|bigrams(probe) ∩ bigrams(reference)| / |bigrams(probe)|`` (distinct bigrams) and, for two or more
files, the same between the files. Exit 1 on any violation. ``--counts-only`` prints no phrasing text
(for a private set).

``run`` — ``groundtrace crs run --setting closed`` of each system on the original and each probed dataset,
resumable (a run folder with ``scores.json`` is kept), then the Markdown table::

    python benchmarks/paraphrase_probe.py run --original DS --probed DS_PROBED [--probed ...] \\
        --split all|test --runs RUNS_DIR [--systems trace-hybrid,knowledge,...] [--table-only]

Runs go to ``RUNS_DIR/<dataset folder name>/<split>/<system>``. Per system: R@1, MRR, evidence_support,
rejection_recovery on the original and probed datasets; then trace-hybrid's ratio probed/original R@1
and its lead ``R@1(trace-hybrid) - R@1(s)`` over tfidf, dense and hybrid-rrf on the probed set.
CPU seconds of each run (the child's user+system time) are recorded in ``probe_cpu.json``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import resource
import shutil
import subprocess
import sys
import zlib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from groundtrace.core.files.validation import validation_errors
from groundtrace.core.files.yaml_loader import YamlError, read_yaml

SPLITS = ("train", "validation", "test")
#: fewest phrasings (phrases + sentences, per value after templates) a produced (kind, value) needs
MIN_PHRASINGS = 4
#: the issue's example rewrites: a probe set must not reuse them (the hidden check may)
ISSUE_EXAMPLES = (
    "where we can eat al fresco",
    "somewhere I can leave the car easily",
    "super budget-friendly",
    "that locals love",
)
DEFAULT_SYSTEMS = ("trace-hybrid", "knowledge", "aspect", "hybrid-rrf", "tfidf", "dense", "random")
LEAD_OVER = ("tfidf", "dense", "hybrid-rrf")
TABLE_METRICS = (
    ("recall@1", "R@1"),
    ("mrr", "MRR"),
    ("evidence_support", "ES"),
    ("rejection_recovery", "RR"),
)
#: the slots a kind's templates may use (besides ``{anchor}`` for distances)
KIND_SLOTS: dict[str, frozenset[str]] = {
    "max_distance_km": frozenset({"km", "mi", "walk", "ride", "anchor"}),
    "min_stars": frozenset({"stars"}),
    "price_max": frozenset({"signs", "level"}),
    "price_min": frozenset({"signs", "level"}),
}
_SLOT_RE = re.compile(r"\{(\w+)\}")


class ProbeFileError(ValueError):
    """A probe phrasing file that cannot be used; the message names ``file:line``."""


# -- the probe phrasing file ----------------------------------------------------------------------------


class ProbeItem(BaseModel):
    """A phrasing restricted to some POI types."""

    model_config = ConfigDict(extra="forbid")
    text: str = Field(min_length=1, max_length=200)
    types: list[str] | None = None


Item = str | ProbeItem


class ProbeEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kind: str
    value: str | int | float | bool
    phrases: list[Item] = Field(default_factory=list)
    sentences: list[Item] = Field(default_factory=list)


class ProbeTemplates(BaseModel):
    model_config = ConfigDict(extra="forbid")
    phrases: list[Item] = Field(default_factory=list)
    sentences: list[Item] = Field(default_factory=list)


class ProbeFile(BaseModel):
    """``constraints``: phrasings per (kind, value); ``templates``: per kind, filled from the value."""

    model_config = ConfigDict(extra="forbid")
    constraints: list[ProbeEntry] = Field(default_factory=list)
    templates: dict[str, ProbeTemplates] = Field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ProbePhrasing:
    text: str
    sentence: bool
    types: tuple[str, ...] | None = None

    def fits(self, poi_type: str) -> bool:
        return self.types is None or poi_type in self.types


def value_key(value: object) -> str:
    """A constraint value as a lookup key: numbers by ``%g`` (``4.0`` and ``4`` agree), bools lowercase."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int | float):
        return f"{float(value):g}"
    try:
        return f"{float(str(value)):g}"
    except ValueError:
        return str(value)


def distance_slots(km: float) -> dict[str, str]:
    """The builder's amounts for a distance (``groundtrace.crs.build.phrasing.distance_slots``): km, miles
    (1 decimal), walking minutes (12 min/km, to 5, at least 5), ride minutes (3 min/km, to 5)."""
    walk = max(5, round(km * 12 / 5) * 5)
    ride = max(5, round(km * 3 / 5) * 5)
    return {"km": f"{km:g}", "mi": f"{km * 0.621371:.1f}", "walk": str(walk), "ride": str(ride)}


def value_slots(kind: str, value: object) -> dict[str, str]:
    """The template slots of ``(kind, value)`` (``{anchor}`` is filled per turn)."""
    if kind == "max_distance_km":
        return distance_slots(float(value))  # type: ignore[arg-type]
    if kind == "min_stars":
        return {"stars": f"{float(value):g}"}  # type: ignore[arg-type]
    if kind in ("price_max", "price_min"):
        level = int(float(value))  # type: ignore[arg-type]
        return {"signs": "$" * level, "level": str(level)}
    return {}


def _items(xs: Sequence[Item], sentence: bool) -> list[ProbePhrasing]:
    out = []
    for x in xs:
        text, types = (x, None) if isinstance(x, str) else (x.text, tuple(x.types) if x.types else None)
        out.append(ProbePhrasing(text, sentence, types))
    return out


@dataclass
class ProbeSet:
    """A loaded probe file: :meth:`pool` gives the phrasings of a (kind, value), templates filled."""

    name: str
    fixed: dict[tuple[str, str], list[ProbePhrasing]]
    templates: dict[str, list[ProbePhrasing]]
    values: dict[tuple[str, str], object] = field(default_factory=dict)

    def pool(self, kind: str, value: object) -> list[ProbePhrasing]:
        """Fixed phrasings of ``(kind, value)`` plus the kind's templates filled from the value
        (``{anchor}`` kept)."""
        out = list(self.fixed.get((kind, value_key(value)), ()))
        slots = value_slots(kind, value) if kind in self.templates else {}
        for p in self.templates.get(kind, ()):
            text = p.text
            for name, v in slots.items():
                text = text.replace("{" + name + "}", v)
            out.append(ProbePhrasing(text, p.sentence, p.types))
        return out

    def all_texts(self, values: dict[str, list[object]]) -> list[tuple[str, str, str]]:
        """``(kind, value key, text)`` of every fixed phrasing and every template realised for
        ``values[kind]``."""
        out = [(k, v, p.text) for (k, v), ps in self.fixed.items() for p in ps]
        for kind in self.templates:
            for value in values.get(kind, ()):
                key = value_key(value)
                fixed = {p.text for p in self.fixed.get((kind, key), ())}
                out += [(kind, key, p.text) for p in self.pool(kind, value) if p.text not in fixed]
        return out


def load_probe(path: str | Path) -> ProbeSet:
    """Read and validate a probe file; every problem is a ``file:line: message`` line of a
    :class:`ProbeFileError`."""
    try:
        doc = read_yaml(path)
    except YamlError as exc:
        raise ProbeFileError(str(exc)) from None
    try:
        model = ProbeFile.model_validate(doc.data or {})
    except ValidationError as exc:
        errors = validation_errors(exc, file=doc.name, line=doc.line_of, model=ProbeFile, limit=20)
        raise ProbeFileError("\n".join(str(e) for e in errors)) from None
    errors: list[str] = []
    fixed: dict[tuple[str, str], list[ProbePhrasing]] = {}
    for i, e in enumerate(model.constraints):
        key = (e.kind, value_key(e.value))
        if key in fixed:
            errors.append(f"{doc.name}:{doc.line_of(('constraints', i))}: {e.kind}={e.value} is listed twice")
        fixed[key] = _items(e.phrases, False) + _items(e.sentences, True)
        if any("{" in p.text for p in fixed[key]):
            errors.append(f"{doc.name}:{doc.line_of(('constraints', i))}: slots belong in templates")
    templates: dict[str, list[ProbePhrasing]] = {}
    for kind, t in model.templates.items():
        allowed = KIND_SLOTS.get(kind)
        if allowed is None:
            line = doc.line_of(("templates", kind))
            errors.append(f"{doc.name}:{line}: no templates for {kind!r} (kinds: {', '.join(KIND_SLOTS)})")
            continue
        templates[kind] = _items(t.phrases, False) + _items(t.sentences, True)
        for p in templates[kind]:
            bad = set(_SLOT_RE.findall(p.text)) - allowed
            if bad:
                line = doc.line_of(("templates", kind))
                errors.append(
                    f"{doc.name}:{line}: {p.text!r} uses {sorted(bad)}; {kind} takes {sorted(allowed)}"
                )
    if errors:
        raise ProbeFileError("\n".join(errors))
    return ProbeSet(doc.name, fixed, templates)


# -- apply ----------------------------------------------------------------------------------------------


def choose(pool: Sequence[ProbePhrasing], dialogue_id: str, turn_index: int, kind: str) -> ProbePhrasing:
    """``pool[crc32(f"{dialogue_id}|{turn_index}|{kind}") % len(pool)]``."""
    return pool[zlib.crc32(f"{dialogue_id}|{turn_index}|{kind}".encode()) % len(pool)]


def label_pattern(label: str) -> re.Pattern[str]:
    """``label`` case-insensitive and word-bounded (no word character just before or after)."""
    return re.compile(r"(?<!\w)" + re.escape(label) + r"(?!\w)", re.IGNORECASE)


def starts_sentence(text: str, at: int, label: str) -> bool:
    """True when ``label`` at ``text[at:]`` begins a sentence: capitalised, at the start or after . ! ?"""
    return label[:1].isupper() and (at == 0 or re.search(r"[.!?]\s+$", text[:at]) is not None)


def decode(c: dict[str, Any]) -> object:
    """A serialised constraint value (``value`` text + ``value_type``) as a Python value."""
    vt, v = c.get("value_type"), c.get("value")
    if vt == "int":
        return int(v)  # type: ignore[arg-type]
    if vt == "float":
        return float(v)  # type: ignore[arg-type]
    if vt == "bool":
        return str(v).lower() == "true"
    return v


def anchor_names(dialogue: dict[str, Any]) -> list[str]:
    """Names of the dialogue's anchors (top-level and per leg), longest first."""
    names = []
    for a in [dialogue.get("anchor")] + [leg.get("anchor") for leg in dialogue.get("legs") or []]:
        if isinstance(a, dict) and a.get("name"):
            names.append(str(a["name"]))
    return sorted(set(names), key=len, reverse=True)


@dataclass
class KindStats:
    found: int = 0
    replaced: int = 0
    no_phrasing: int = 0
    not_found: int = 0


@dataclass
class ApplyReport:
    by_kind: dict[str, KindStats] = field(default_factory=dict)
    turns_changed: int = 0
    dialogues_changed: int = 0

    def kind(self, k: str) -> KindStats:
        return self.by_kind.setdefault(k, KindStats())

    def as_dict(self) -> dict[str, Any]:
        rows = {k: vars(s) for k, s in sorted(self.by_kind.items())}
        return {
            "turns_changed": self.turns_changed,
            "dialogues_changed": self.dialogues_changed,
            "by_kind": rows,
        }


def _fill_anchor(text: str, label: str, dialogue: dict[str, Any]) -> str:
    if "{anchor}" not in text:
        return text
    name = next((n for n in anchor_names(dialogue) if n.lower() in label.lower()), None)
    return text.replace("{anchor}", name or "the centre")


def held_out_pool(pool: Sequence[ProbePhrasing], split: str) -> list[ProbePhrasing]:
    """``split``'s share of a constraint's pool (``--held-out``): the pool ordered by crc32 of the text;
    test takes the first ``k = max(1, round(0.2 n))``, validation the next ``k``, train the rest (a pool of
    fewer than 3 is not split), so a test phrasing never occurs in train or validation."""
    if len(pool) < 3:
        return list(pool)
    ordered = sorted(pool, key=lambda p: (zlib.crc32(p.text.encode()), p.text))
    k = max(1, round(0.2 * len(ordered)))
    parts = {"test": ordered[:k], "validation": ordered[k : 2 * k], "train": ordered[2 * k :]}
    return parts.get(split, list(pool))


def _pick(
    probe: ProbeSet, c: dict[str, Any], sentence: bool, poi_type: str, split: str | None
) -> list[ProbePhrasing]:
    pool = probe.pool(c["kind"], decode(c))
    if split is not None:
        pool = held_out_pool(pool, split)
    pool = [p for p in pool if p.fits(poi_type)]
    same = [p for p in pool if p.sentence == sentence]
    return same or pool


def rewrite_turn(
    turn: dict[str, Any],
    dialogue: dict[str, Any],
    probe: ProbeSet,
    report: ApplyReport,
    keep_labels: bool,
    held_out: bool = False,
) -> bool:
    """Replace the labels of ``turn``'s added constraints in its text (spans found on the original text,
    longest label first, overlaps skipped); True when the text changed. ``held_out``: draw from the
    dialogue's split's share of each pool (:func:`held_out_pool`)."""
    split = (dialogue.get("split") or "train") if held_out else None
    text = turn["text"]
    spans: list[tuple[int, int, dict[str, Any], str]] = []
    for c in sorted(turn.get("constraints_added") or [], key=lambda c: -len(c.get("label") or "")):
        stats = report.kind(c["kind"])
        label = c.get("label") or ""
        m = next(
            (
                m
                for m in label_pattern(label).finditer(text)
                if all(m.end() <= s or m.start() >= e for s, e, *_ in spans)
            ),
            None,
        )
        if not label or m is None:
            stats.not_found += 1
            continue
        stats.found += 1
        sentence = starts_sentence(text, m.start(), m.group(0))
        pool = _pick(probe, c, sentence, dialogue.get("poi_type") or "", split)
        if not pool:
            stats.no_phrasing += 1
            continue
        p = choose(pool, dialogue["dialogue_id"], int(turn["index"]), c["kind"])
        new = _fill_anchor(p.text, label, dialogue)
        if sentence:
            new = new[:1].upper() + new[1:]
        spans.append((m.start(), m.end(), c, new))
        stats.replaced += 1
    if not spans:
        return False
    out, last = [], 0
    for start, end, c, new in sorted(spans, key=lambda s: s[0]):
        out += [text[last:start], new]
        last = end
        if not keep_labels:
            c["label"] = new
    turn["text"] = "".join(out) + text[last:]
    return True


def apply_probe(
    dataset: Path,
    out: Path,
    probe: ProbeSet,
    splits: Sequence[str],
    keep_labels: bool = False,
    held_out: bool = False,
) -> ApplyReport:
    """Copy ``dataset`` to ``out`` and rewrite the user turns of ``splits`` (see the module docstring)."""
    if not (dataset / "manifest.json").is_file():
        raise SystemExit(f"{dataset}: not a dataset folder (no manifest.json)")
    if out.exists():
        raise SystemExit(f"{out}: already exists; remove it or choose another --out")
    shutil.copytree(dataset, out)
    report = ApplyReport()
    for split in splits:
        path = out / f"{split}.jsonl"
        if not path.is_file():
            continue
        lines = []
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                d = json.loads(line)
            except json.JSONDecodeError as exc:
                raise SystemExit(f"{dataset / path.name}:{n}: not JSON ({exc.msg})") from None
            changed = [
                rewrite_turn(t, d, probe, report, keep_labels, held_out)
                for t in d.get("turns", [])
                if t.get("role") == "user"
            ]
            report.turns_changed += sum(changed)
            report.dialogues_changed += any(changed)
            lines.append(json.dumps(d, ensure_ascii=False, separators=(",", ":")))
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    meta = {
        "source": str(dataset),
        "phrasings": probe.name,
        "splits": list(splits),
        "keep_labels": keep_labels,
        "held_out": held_out,
    }
    (out / "probe_report.json").write_text(json.dumps({**meta, **report.as_dict()}, indent=1) + "\n")
    return report


def print_apply(report: ApplyReport) -> None:
    print("| kind | found | replaced | found, no probe phrasing | not found |")
    print("|---|---:|---:|---:|---:|")
    total = KindStats()
    for k, s in sorted(report.by_kind.items()):
        print(f"| {k} | {s.found} | {s.replaced} | {s.no_phrasing} | {s.not_found} |")
        for f in ("found", "replaced", "no_phrasing", "not_found"):
            setattr(total, f, getattr(total, f) + getattr(s, f))
    print(f"| **all** | {total.found} | {total.replaced} | {total.no_phrasing} | {total.not_found} |")
    print(f"\nturns changed {report.turns_changed}, dialogues changed {report.dialogues_changed}")


# -- check ----------------------------------------------------------------------------------------------


def form(text: str) -> str:
    """The comparison form: casefold, apostrophes dropped, punctuation but ``$`` and ``{}`` to spaces,
    whitespace collapsed."""
    t = text.casefold().replace("\u2019", "'").replace("'", "")
    t = re.sub(r"[^\w$\s{}]", " ", t)
    return " ".join(t.split())


def bigrams(f: str) -> set[tuple[str, str]]:
    w = f.split()
    return set(itertools.pairwise(w))


def related(a: str, b: str) -> str | None:
    """``equals`` / ``contains`` / ``contained`` when the forms ``a`` and ``b`` meet word-bounded."""
    if a == b:
        return "equals"
    if f" {b} " in f" {a} ":
        return "contains"
    if f" {a} " in f" {b} ":
        return "contained"
    return None


@dataclass
class Reference:
    """The generator's vocabulary: ``texts`` (form → where from) and the (kind, value)s it produces."""

    texts: dict[str, str] = field(default_factory=dict)
    produced: dict[tuple[str, str], object] = field(default_factory=dict)

    def add(self, text: str, where: str) -> None:
        f = form(text)
        if f:
            self.texts.setdefault(f, where)


def _bank_reference(ref: Reference) -> None:
    from groundtrace.crs.build.personas import bundled_personas
    from groundtrace.crs.build.phrasing import BUILDER_RADII_KM, bundled_bank, fill

    bank = bundled_bank()
    pairs = bank.known_constraints() + [("max_distance_km", r) for r in BUILDER_RADII_KM]
    for kind, value in pairs:
        ref.produced[(kind, value_key(value))] = value
        for ps in bank.phrasings(kind, value).values():
            for p in ps:
                ref.add(p.text, f"bank {kind}={value}")
    for fam, by_split in bank.families.items():
        for templates in by_split.values():
            for t, _ in templates:
                for r in fill(t, {"v": ["{v}"]}) if fam == "fallback" else [t]:
                    if not _SLOT_RE.search(r.replace("{anchor}", "")):
                        ref.add(r, f"bank family {fam}")
    for persona in bundled_personas():
        for c in persona.constraints:
            ref.produced.setdefault((c.kind, value_key(c.value)), c.value)
            ref.add(c.label, f"persona {persona.id}")


def _dataset_reference(ref: Reference, dataset: Path) -> None:
    report = dataset / "build_report.json"
    if report.is_file():
        mined = json.loads(report.read_text()).get("phrasing", {}).get("mined", {}).get("phrasings", [])
        for m in mined:
            ref.add(m["text"], f"mined {dataset.name}")
    for split in SPLITS:
        path = dataset / f"{split}.jsonl"
        if not path.is_file():
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            d = json.loads(line)
            names = anchor_names(d)
            for t in d.get("turns", []):
                for c in t.get("constraints_added") or [] if t.get("role") == "user" else []:
                    ref.produced.setdefault((c["kind"], value_key(decode(c))), decode(c))
                    label = c["label"]
                    for n in names:
                        label = re.sub(re.escape(n), "{anchor}", label, flags=re.IGNORECASE)
                    ref.add(label, f"label {dataset.name}")


def build_reference(datasets: Iterable[Path] = ()) -> Reference:
    """Bank + personas + mined phrasings and labels of ``datasets`` (see the module docstring)."""
    ref = Reference()
    _bank_reference(ref)
    for d in datasets:
        _dataset_reference(ref, d)
    return ref


@dataclass
class CheckResult:
    violations: list[str] = field(default_factory=list)
    n_phrasings: int = 0
    bigram_overlap: float = 0.0
    covered: int = 0
    produced: int = 0


def _values_by_kind(ref: Reference) -> dict[str, list[object]]:
    out: dict[str, list[object]] = {}
    for (kind, _), value in sorted(ref.produced.items()):
        out.setdefault(kind, []).append(value)
    return out


def check_probe(probe: ProbeSet, ref: Reference, show: bool = True) -> CheckResult:
    """Violations of ``probe`` against ``ref`` (texts shown only when ``show``) and its bigram overlap."""
    res = CheckResult()
    texts = probe.all_texts(_values_by_kind(ref))
    res.n_phrasings = len(texts)
    ref_bigrams: set[tuple[str, str]] = set().union(*(bigrams(f) for f in ref.texts))
    mine: set[tuple[str, str]] = set()
    examples = {form(x) for x in ISSUE_EXAMPLES}
    for kind, value, text in texts:
        f = form(text)
        mine |= bigrams(f)
        what = f"{kind}={value}: {text!r}" if show else f"{kind}={value}"
        if f in examples:
            res.violations.append(f"{what} is one of the issue's example rewrites")
        for r, where in ref.texts.items():
            rel = related(f, r)
            if rel:
                res.violations.append(f"{what} {rel} {where}: {r!r}" if show else f"{what} {rel} {where}")
    res.bigram_overlap = len(mine & ref_bigrams) / len(mine) if mine else 0.0
    for (kind, key), value in sorted(ref.produced.items()):
        n = len({p.text for p in probe.pool(kind, value)})
        res.produced += 1
        res.covered += n >= MIN_PHRASINGS
        if n < MIN_PHRASINGS:
            res.violations.append(f"{kind}={key} has {n} phrasings (needs {MIN_PHRASINGS})")
    return res


def cross_overlap(a: ProbeSet, b: ProbeSet, ref: Reference) -> tuple[int, float]:
    """Between two probe sets: phrasings that equal/contain/are contained (word-bounded) in the other's,
    and the share of ``a``'s distinct bigrams also in ``b``'s."""
    values = _values_by_kind(ref)
    fa = {form(t) for _, _, t in a.all_texts(values)}
    fb = {form(t) for _, _, t in b.all_texts(values)}
    meets = sum(1 for x in fa if any(related(x, y) for y in fb))
    ba: set[tuple[str, str]] = set().union(*(bigrams(x) for x in fa))
    bb: set[tuple[str, str]] = set().union(*(bigrams(x) for x in fb))
    return meets, (len(ba & bb) / len(ba) if ba else 0.0)


# -- run ------------------------------------------------------------------------------------------------


def run_dir(runs: Path, dataset: Path, split: str, system: str) -> Path:
    return runs / dataset.name / split / system


def run_one(dataset: Path, split: str, system: str, out: Path) -> None:
    """``groundtrace crs run`` of one system (skipped when ``out/scores.json`` exists); CPU seconds of the
    child into ``out/probe_cpu.json``."""
    if (out / "scores.json").is_file():
        return
    out.parent.mkdir(parents=True, exist_ok=True)
    cmd = ["groundtrace", "crs", "run", "--dataset", str(dataset), "--split", split, "--setting", "closed"]
    cmd += ["--system", system, "--out", str(out)]
    print("$", " ".join(cmd), file=sys.stderr, flush=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(out.parent / f"{system}.log", "w") as log:
        rc = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, check=False).returncode
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    if rc != 0:
        print(f"  failed (exit {rc}); see {out.parent / f'{system}.log'}", file=sys.stderr)
        return
    (out / "probe_cpu.json").write_text(json.dumps({"cpu_s": round(cpu, 1)}) + "\n")


def scores(out: Path) -> dict[str, float | None] | None:
    path = out / "scores.json"
    if not path.is_file():
        return None
    agg = json.loads(path.read_text()).get("aggregate", {})
    return {m: agg.get(m) for m, _ in TABLE_METRICS}


def _fmt(x: float | None) -> str:
    return "–" if x is None else f"{x:.3f}"


def table(original: dict[str, Any], probed: dict[str, Any], systems: Sequence[str], title: str) -> list[str]:
    """Markdown rows: per system the metrics original → probed; then trace-hybrid's ratio and leads."""
    head = " | ".join(f"{short} orig | {short} probed" for _, short in TABLE_METRICS)
    lines = [f"**{title}**", "", f"| system | {head} |", "|---|" + "---:|" * (2 * len(TABLE_METRICS))]
    for s in systems:
        o, p = original.get(s) or {}, probed.get(s) or {}
        cells = " | ".join(f"{_fmt(o.get(m))} | {_fmt(p.get(m))}" for m, _ in TABLE_METRICS)
        lines.append(f"| {s} | {cells} |")
    th_o, th_p = (
        (original.get("trace-hybrid") or {}).get("recall@1"),
        (probed.get("trace-hybrid") or {}).get("recall@1"),
    )
    lines.append("")
    if th_o and th_p is not None:
        lines.append(f"trace-hybrid R@1 probed/original = {th_p:.3f}/{th_o:.3f} = **{th_p / th_o:.3f}**")
    leads = []
    for s in LEAD_OVER:
        other = (probed.get(s) or {}).get("recall@1")
        if th_p is not None and other is not None:
            leads.append(f"{s} {th_p - other:+.3f}")
    if leads:
        lines.append("trace-hybrid lead in R@1 on the probed set: " + ", ".join(leads))
    es = (probed.get("trace-hybrid") or {}).get("evidence_support")
    if es is not None:
        lines.append(f"trace-hybrid evidence support on the probed set: {es:.3f}")
    return lines


def run_all(args: argparse.Namespace) -> int:
    systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    datasets = [Path(args.original)] + [Path(p) for p in args.probed]
    if not args.table_only:
        for d in datasets:
            for s in systems:
                run_one(d, args.split, s, run_dir(Path(args.runs), d, args.split, s))
    results = [{s: scores(run_dir(Path(args.runs), d, args.split, s)) for s in systems} for d in datasets]
    for d, probed in zip(datasets[1:], results[1:], strict=True):
        title = f"{datasets[0].name} → {d.name}, split {args.split}, closed"
        print("\n".join(table(results[0], probed, systems, title)) + "\n")
    return 0


# -- command line ---------------------------------------------------------------------------------------


def check_main(args: argparse.Namespace) -> int:
    ref = build_reference(Path(d) for d in args.dataset)
    probes = [load_probe(p) for p in args.files]
    bad = 0
    for path, probe in zip(args.files, probes, strict=True):
        res = check_probe(probe, ref, show=not args.counts_only)
        print(
            f"{path}: {res.n_phrasings} phrasings; {res.covered}/{res.produced} produced (kind, value)s with "
            f">= {MIN_PHRASINGS}; word-bigram overlap with the reference {res.bigram_overlap:.3f} "
            f"({len(ref.texts)} reference phrasings); violations {len(res.violations)}"
        )
        kinds = Counter(v.split("=", 1)[0] for v in res.violations)
        for line in (
            res.violations if not args.counts_only else [f"  {k}: {n}" for k, n in sorted(kinds.items())]
        ):
            print(f"  {line}")
        bad += len(res.violations)
    for i, a in enumerate(probes):
        for j, b in enumerate(probes):
            if i < j:
                meets, share = cross_overlap(a, b, ref)
                print(
                    f"{args.files[i]} vs {args.files[j]}: {meets} phrasings meet (equal/contain), "
                    f"bigram overlap {share:.3f}"
                )
    return 1 if bad else 0


def apply_main(args: argparse.Namespace) -> int:
    probe = load_probe(args.phrasings)
    splits = list(SPLITS) if args.splits == "all" else [s.strip() for s in args.splits.split(",")]
    unknown = [s for s in splits if s not in SPLITS]
    if unknown:
        raise SystemExit(f"--splits: unknown split(s) {unknown}; use all or {', '.join(SPLITS)}")
    report = apply_probe(Path(args.dataset), Path(args.out), probe, splits, args.keep_labels, args.held_out)
    print(f"{args.dataset} -> {args.out} (splits {', '.join(splits)})\n")
    print_apply(report)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("apply", help="write a probed copy of a dataset")
    a.add_argument("--dataset", required=True)
    a.add_argument("--out", required=True)
    a.add_argument("--phrasings", required=True)
    a.add_argument("--splits", default="test", help="test, all, or a comma-separated list")
    a.add_argument("--keep-labels", action="store_true", help="leave constraints_added labels as they were")
    a.add_argument(
        "--held-out",
        action="store_true",
        help="each split draws from its own share of a constraint's probe phrasings (test's unseen in train)",
    )
    c = sub.add_parser("check", help="probe files vs the generator's vocabulary")
    c.add_argument("files", nargs="+")
    c.add_argument(
        "--dataset", action="append", default=[], help="a build whose labels/mined phrasings count"
    )
    c.add_argument("--counts-only", action="store_true", help="print no phrasing text (a private set)")
    r = sub.add_parser("run", help="run systems on the original and probed datasets; Markdown table")
    r.add_argument("--original", required=True)
    r.add_argument("--probed", action="append", required=True)
    r.add_argument("--split", default="all")
    r.add_argument("--runs", required=True, help="folder of the run folders")
    r.add_argument("--systems", default=",".join(DEFAULT_SYSTEMS))
    r.add_argument("--table-only", action="store_true", help="start no run; table from finished runs")
    args = ap.parse_args(argv)
    try:
        return {"apply": apply_main, "check": check_main, "run": run_all}[args.cmd](args)
    except ProbeFileError as exc:
        print(exc, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
