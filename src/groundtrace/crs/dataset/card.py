"""The dataset card: a ``README.md`` with Hugging Face YAML front matter, written next to the data.

The front matter names the data files of each *config* (``configs:``), so ``datasets.load_dataset(FOLDER)``
loads the dialogues and ``load_dataset(FOLDER, "knowledge_base")`` the POIs; ``dataset_info`` declares
each config's features (generated from the JSON Schema of the records, :func:`hf_features`), so the
column types never depend on inference; ``license`` / ``license_name`` and the body state the licence
split: our annotations under :data:`ANNOTATIONS_LICENSE`, Yelp's review text (and business data) under
the Yelp Dataset Terms of Use, never redistributed in a release.

A config's splits must share one schema in ``datasets``, so the POIs and the reviews are two configs
(``knowledge_base`` = POIs; ``reviews`` with text in a built dataset, ``review_index`` without text in a
release). The configs, their files and row counts come from :class:`CardConfig` entries; the body is
plain Markdown whose every value comes from the manifest or the files written.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from groundtrace.crs.dataset.files import SPLITS, dialogue_json_schema
from groundtrace.crs.dataset.kb_files import POIS, REVIEWS, PoiRecord, write_kb_files
from groundtrace.crs.kb.knowledge_base import KnowledgeBase
from groundtrace.crs.schema import Review

ANNOTATIONS_LICENSE = "cc-by-4.0"
YELP_TERMS = "Yelp Dataset Terms of Use (https://terms.yelp.com/developers/dataset_terms/)"
CARD = "README.md"

_DTYPES = {"string": "string", "integer": "int64", "number": "float64", "boolean": "bool"}


def _resolve(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """Follow ``$ref`` and drop the ``null`` branch of an optional field."""
    while True:
        if "$ref" in schema:
            schema = defs[schema["$ref"].rsplit("/", 1)[-1]]
        elif "anyOf" in schema:
            branches = [s for s in schema["anyOf"] if s.get("type") != "null"]
            if len(branches) != 1:
                raise ValueError(f"no single column type for a union of {len(branches)} types: {schema}")
            schema = branches[0]
        else:
            return schema


def _feature(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """The Hugging Face YAML feature (without its name) of one JSON Schema node."""
    schema = _resolve(schema, defs)
    kind = schema.get("type")
    if kind == "object":
        props = schema.get("properties")
        if not props:
            raise ValueError(f"an object without fixed properties has no column type: {schema}")
        return {"struct": [{"name": k, **_feature(v, defs)} for k, v in props.items()]}
    if kind == "array":
        item = _feature(schema["items"], defs)
        return {"list": item["dtype"] if set(item) == {"dtype"} else item["struct"]}
    if kind in _DTYPES:
        return {"dtype": _DTYPES[kind]}
    raise ValueError(f"no column type for JSON Schema {schema}")


def hf_features(schema: dict[str, Any]) -> list[dict[str, Any]]:
    """The ``dataset_info.features`` list of records described by a (pydantic) JSON Schema: objects become
    ``struct``, arrays ``list``, optional fields their non-null type; ``ValueError`` for a field that has no
    single column type (a union, or an object with free keys)."""
    defs = schema.get("$defs", {})
    return _feature(schema, defs)["struct"]


@dataclass
class CardConfig:
    """One config of the card: its name, ``{split: file path relative to the card}``, the JSON Schema of
    its records, row counts per split and a one-line description."""

    name: str
    files: dict[str, str]
    schema: dict[str, Any]
    rows: dict[str, int]
    description: str


@dataclass
class Card:
    """What the card says beyond its configs."""

    title: str
    summary: str
    configs: list[CardConfig]
    review_text_included: bool
    yelp_data: bool
    manifest: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    #: how groundtrace reads the folder (one Markdown line)
    reading: str = "groundtrace reads the folder as is: `groundtrace crs validate`, `crs run --dataset`."


def _size_category(n: int) -> str:
    for limit, label in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K")):
        if n < limit:
            return label
    return "100K<n<1M"


def front_matter(card: Card) -> dict[str, Any]:
    """The YAML front matter of ``card`` as a dict (configs, features, licence, tags)."""
    dialogues = sum(card.configs[0].rows.values()) if card.configs else 0
    meta: dict[str, Any] = {
        "pretty_name": card.title,
        "language": ["en"],
        "license": "other" if card.yelp_data else ANNOTATIONS_LICENSE,
        "task_categories": ["text-generation", "text-retrieval"],
        "tags": ["conversational-recommendation", "tourism", "citations", "grounding", "trace-crs"],
        "size_categories": [_size_category(dialogues)],
        "configs": [
            {
                "config_name": c.name,
                **({"default": True} if c.name == "default" else {}),
                "data_files": [{"split": s, "path": p} for s, p in c.files.items()],
            }
            for c in card.configs
        ],
        "dataset_info": [{"config_name": c.name, "features": hf_features(c.schema)} for c in card.configs],
    }
    if card.yelp_data:
        meta["license_name"] = f"annotations {ANNOTATIONS_LICENSE}; Yelp review and business data: Yelp terms"
        meta["license_link"] = "https://terms.yelp.com/developers/dataset_terms/"
    return meta


def _licence_section(card: Card) -> list[str]:
    if not card.yelp_data:
        return [
            "## Licence",
            "",
            f"Everything here is generated (demo city, reviews, dialogues): {ANNOTATIONS_LICENSE}.",
        ]
    text = (
        "This folder **contains Yelp review text** (quoted in the dialogues and in `reviews`): it is for "
        "your own use under the Yelp terms and must not be redistributed; publish a release with "
        "`groundtrace crs export --format trace-release` instead."
        if card.review_text_included
        else "No Yelp review text is included: quotes are `[Q:N]` placeholders and the review index carries "
        "only ids, lengths and fingerprints. Restore the text from your own Yelp download with "
        "`groundtrace crs import-release`."
    )
    return [
        "## Licence",
        "",
        "| part | licence |",
        "|---|---|",
        f"| dialogues, personas, constraints, gold labels, pools, spans (ours) | {ANNOTATIONS_LICENSE} |",
        f"| review text, business names, attributes, ratings (Yelp Open Dataset) | {YELP_TERMS} |",
        "",
        text,
    ]


def card_markdown(card: Card) -> str:
    """The whole ``README.md``: YAML front matter, then the body."""
    head = yaml.safe_dump(front_matter(card), sort_keys=False, allow_unicode=True, width=1000)
    m = card.manifest
    lines = [f"# {card.title}", "", card.summary, ""]
    facts = [
        ("format", f"TRACE-CRS dataset format {m['schema_version']}" if "schema_version" in m else None),
        ("generator", m.get("generator")),
        (
            "knowledge base",
            f"{m.get('kb_name')} (content hash `{m.get('kb_hash')}`)" if "kb_name" in m else None,
        ),
        ("seed", m.get("seed")),
        ("realiser", m.get("realiser")),
        ("rejection share", m.get("rejection_share")),
        (
            "tiers",
            ", ".join(f"{k} {v}" for k, v in m["tiers"].items())
            if isinstance(m.get("tiers"), dict)
            else None,
        ),
    ]
    lines += [f"* {k}: {v}" for k, v in facts if v is not None]
    lines += ["", "## Configs", "", "| config | split | file | rows | what |", "|---|---|---|---|---|"]
    for c in card.configs:
        for split, path in c.files.items():
            lines.append(
                f"| `{c.name}` | `{split}` | `{path}` | {c.rows.get(split, 0):,} | {c.description} |"
            )
    lines += [
        "",
        "```python",
        "from datasets import load_dataset",
        'dialogues = load_dataset("path/to/this/folder")           # the default config',
        *(
            f'{c.name} = load_dataset("path/to/this/folder", "{c.name}")'
            for c in card.configs
            if c.name != "default"
        ),
        "```",
        "",
        "Every field has one JSON type across records (format v2: constraint values are text + `value_type`,",
        'mappings are lists of records), so `load_dataset("json", data_files=...)` works on any file too.',
        card.reading,
        "",
    ]
    lines += [*card.notes, *([""] if card.notes else [])]
    lines += _licence_section(card)
    return f"---\n{head}---\n\n" + "\n".join(lines) + "\n"


def write_card(folder: Path, card: Card) -> Path:
    """Write ``README.md`` into ``folder``; returns its path."""
    path = folder / CARD
    path.write_text(card_markdown(card), encoding="utf-8")
    return path


def split_configs(
    files: dict[str, Path], folder: Path, schema: dict[str, Any], rows: dict[str, int]
) -> CardConfig:
    """The ``default`` config over the split files that hold dialogues (an empty split is left out)."""
    return CardConfig(
        "default",
        {s: f.relative_to(folder).as_posix() for s, f in files.items() if rows.get(s, 0) > 0},
        schema,
        {s: n for s, n in rows.items() if n > 0},
        "dialogues (one per line)",
    )


_LANGUAGE_INTRO = (
    "Users say each constraint with one of many phrasings (synonyms, indirect needs, amounts, negated "
    "wishes, hedges, a few typos); each phrasing belongs to one split by a stable hash of its "
    "normalised text (60/20/20), and a dialogue speaks only its split's pool, so the test split's "
    "constraint phrases never occur in train or validation. A constraint's `label` is the phrase "
    "exactly as it appears in the turn text."
)
_DISTINCT_NOTE = (
    "distinct-n = distinct n-grams / all n-grams of the split's user turns; it falls as a split grows, "
    "so `@ n` compares the splits on their first n user turns (n = the smallest split's count)."
)


def language_card_notes(phrasing: dict[str, Any]) -> list[str]:
    """The card's "User language" section from ``BuildReport.phrasing`` (empty when there is none)."""
    if not phrasing:
        return []
    by_kind = phrasing.get("bank", {}).get("by_kind", {})
    held = phrasing.get("held_out", {})
    mined = phrasing.get("mined", {})
    mined_kinds = ", ".join(f"{k} {v}" for k, v in mined.get("by_kind", {}).items()) or "none"
    seen = held.get("seen_in_train_or_validation", 0)
    share = held.get("seen_share", 0.0)
    return [
        "## User language and held-out phrasing",
        "",
        _LANGUAGE_INTRO,
        "",
        "| constraint kind | constraints | phrasings | fewest per constraint |",
        "|---|---|---|---|",
        *(
            f"| `{k}` | {v['constraints']} | {v['phrasings']} | {v['min_per_constraint']} |"
            for k, v in by_kind.items()
        ),
        "",
        f"* phrasings mined from the KB's reviews: {mined.get('count', 0)} ({mined_kinds}); "
        + "provenance in `build_report.json`",
        f"* test constraint phrases seen in train/validation: {seen} of {held.get('test_phrases', 0)} "
        + f"({share:.1%})",
        "",
        "| split | user turns | distinct-1 | distinct-2 | distinct-1 @ n | distinct-2 @ n |",
        "|---|---|---|---|---|---|",
        *(
            f"| `{s}` | {v['user_turns']:,} | {v['distinct_1']:.4f} | {v['distinct_2']:.4f} | "
            + f"{v.get('distinct_1_at_n', 0):.4f} | {v.get('distinct_2_at_n', 0):.4f} |"
            for s, v in phrasing.get("user_language", {}).items()
        ),
        "",
        _DISTINCT_NOTE,
    ]


def write_build_card(
    folder: Path, kb: KnowledgeBase, manifest: dict[str, Any], notes: list[str] | None = None
) -> Path:
    """The card of a built dataset folder: writes ``knowledge_base/{pois,reviews}.jsonl`` (review text
    included) and ``README.md`` with the configs ``default``, ``knowledge_base`` and ``reviews``; ``notes``:
    extra Markdown lines of the body (the user-language section)."""
    kb_files = write_kb_files(kb, folder / "knowledge_base", text=True)
    splits = {s: folder / f"{s}.jsonl" for s in SPLITS if (folder / f"{s}.jsonl").is_file()}
    rows = {s: _count_lines(f) for s, f in splits.items()}
    configs = [
        split_configs(splits, folder, dialogue_json_schema(), rows),
        CardConfig(
            "knowledge_base",
            {POIS: kb_files[POIS].relative_to(folder).as_posix()},
            PoiRecord.model_json_schema(),
            {POIS: len(kb.pois)},
            "POIs of the knowledge base (attributes as key / value / value_type records)",
        ),
        CardConfig(
            REVIEWS,
            {REVIEWS: kb_files[REVIEWS].relative_to(folder).as_posix()},
            Review.model_json_schema(),
            {REVIEWS: len(kb.reviews)},
            "reviews of the knowledge base, with their text",
        ),
    ]
    card = Card(
        title="TRACE-CRS dialogues (groundtrace build)",
        summary=(
            "Multi-turn tourism recommendation dialogues whose system turns cite verbatim review snippets "
            "with `[Rn]` tags, built by `groundtrace crs build`."
        ),
        configs=configs,
        review_text_included=True,
        yelp_data=not kb.name.startswith("demo:"),
        manifest=manifest,
        notes=list(notes or []),
    )
    return write_card(folder, card)


def write_export_card(
    folder: Path, kb: KnowledgeBase | None, *, redacted: bool, hydrated: bool = False
) -> Path:
    """The card of a ``crs export --format groundtrace`` folder: the ``default`` config over its split
    files (quotes as ``⟦Q:…⟧`` placeholders when ``redacted``; ``crs hydrate`` restores them). A
    ``hydrated`` folder (``crs hydrate``'s output; ``kb`` may be None: its quotes came from Yelp reviews)
    holds review text again."""
    splits = {s: folder / f"{s}.jsonl" for s in SPLITS if (folder / f"{s}.jsonl").is_file()}
    rows = {s: _count_lines(f) for s, f in splits.items()}
    manifest = _read_manifest(folder)
    notes = (
        [
            "## Hydrating the quotes",
            "",
            "Quotes are `⟦Q:<review_id>:<start>-<end>⟧` placeholders (`redaction.json` has the grammar, the",
            "edit scripts and fingerprints); restore them from your own Yelp download with",
            "`groundtrace crs hydrate THIS_FOLDER --yelp-reviews yelp_academic_dataset_review.json --out D`.",
        ]
        if redacted
        else [
            "## Hydrated",
            "",
            "The quotes were restored by `groundtrace crs hydrate` from a Yelp review file: this folder",
            "contains review text and must not be redistributed (Yelp Dataset terms).",
        ]
        if hydrated
        else []
    )
    card = Card(
        title="TRACE-CRS dialogues (groundtrace export)",
        summary="Multi-turn tourism recommendation dialogues citing review snippets with `[Rn]` tags.",
        configs=[split_configs(splits, folder, dialogue_json_schema(), rows)],
        review_text_included=not redacted,
        yelp_data=hydrated or (kb is not None and not kb.name.startswith("demo:")),
        manifest=manifest,
        notes=notes,
    )
    return write_card(folder, card)


def _read_manifest(folder: Path) -> dict[str, Any]:
    try:
        value = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _count_lines(path: Path) -> int:
    with open(path, "rb") as handle:
        return sum(1 for line in handle if line.strip())
