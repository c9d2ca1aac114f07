"""Rebuild ``src/groundtrace/catalog/data/allergens.json`` — the ingredient -> allergen map of TRACE-Catalog.

Inputs (both saved in this repository, nothing is downloaded):

* ``scripts/data/eu_annex_ii.yaml`` — the 14 groups of Regulation (EU) No 1169/2011 Annex II with the
  ingredient names the Annex makes sources of each group, its exemptions and look-alike names;
* ``scripts/data/off_allergens_en.txt`` — the English synonym line of each entry of Open Food Facts'
  ``taxonomies/allergens.txt`` (ODbL 1.0; its header names the file version);
* optionally ``--ingredients PATH``: a local copy of Open Food Facts' ``taxonomies/ingredients.txt`` (or
  ``taxonomies/food/ingredients.txt``); every entry carrying an ``allergens:en:`` property adds its English
  names as terms of that allergen (entries inherit the property from a ``< en:parent``).

Output: ``{"version", "generated", "sources", "groups", "terms", "wheat_terms", "exempt",
"flour_qualifiers"}``, English names only, lower case, sorted; a term may belong to several groups
("soy sauce": soybeans and cereals_gluten). Run: ``python scripts/build_allergen_map.py`` (``--check``
exits 1 when the committed file differs from a rebuild, ignoring the date).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
ANNEX = ROOT / "scripts" / "data" / "eu_annex_ii.yaml"
OFF = ROOT / "scripts" / "data" / "off_allergens_en.txt"
OUT = ROOT / "src" / "groundtrace" / "catalog" / "data" / "allergens.json"
VERSION = 1


def _norm(term: str) -> str:
    return re.sub(r"\s+", " ", term.strip().lower())


def read_off_allergens(path: Path) -> tuple[dict[str, list[str]], dict[str, str]]:
    """``({main name: [English synonyms]}, header fields)`` of the saved OFF English lines."""
    entries: dict[str, list[str]] = {}
    header: dict[str, str] = {}
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith("#"):
            m = re.search(r"(https://github\.com/\S+)", line)
            if m:
                header["url"] = m.group(1)
            m = re.search(r"file version ([0-9a-f]{40})", line)
            if m:
                header["commit"] = m.group(1)
            continue
        if not line.strip():
            continue
        if not line.startswith("en:"):
            raise SystemExit(f"{path}:{lineno}: expected an 'en:' line, got {line[:40]!r}")
        names = [_norm(n) for n in line[3:].split(",") if n.strip()]
        entries[names[0]] = names
    return entries, header


def read_off_ingredients(path: Path) -> dict[str, set[str]]:
    """``{OFF allergen main name: {English ingredient names}}`` from an OFF ``ingredients.txt``: entries are
    blocks separated by blank lines; ``< en:parent`` lines name parents; ``allergens:en: en:x`` the property
    (inherited by children that do not set their own)."""
    blocks = path.read_text(encoding="utf-8").split("\n\n")
    names_of: dict[str, list[str]] = {}
    parent_of: dict[str, list[str]] = {}
    prop_of: dict[str, list[str]] = {}
    for block in blocks:
        names: list[str] = []
        parents: list[str] = []
        props: list[str] = []
        for line in block.splitlines():
            line = line.strip()
            if line.startswith("< en:"):
                parents.append(_norm(line[5:]))
            elif line.startswith("en:") and not names:
                names = [_norm(n) for n in line[3:].split(",") if n.strip()]
            elif line.startswith("allergens:en:"):
                props = [_norm(v).removeprefix("en:") for v in line[len("allergens:en:") :].split(",")]
        if names:
            names_of[names[0]] = names
            parent_of[names[0]] = parents
            if props:
                prop_of[names[0]] = props

    def props(key: str, seen: frozenset[str] = frozenset()) -> list[str]:
        if key in prop_of:
            return prop_of[key]
        for p in parent_of.get(key, []):
            if p not in seen:
                found = props(p, seen | {key})
                if found:
                    return found
        return []

    out: dict[str, set[str]] = {}
    for key, names in names_of.items():
        for allergen in props(key):
            out.setdefault(allergen, set()).update(names)
    return out


def _variants(term: str) -> list[str]:
    """The term and its irregular plural ("anchovy" -> "anchovies"); regular "-s"/"-es" plurals are left
    to the detector's pattern."""
    out = [term]
    if term.endswith("y") and not term.endswith(("ey", "ay", "oy")):
        out.append(term[:-1] + "ies")
    return out


def build(annex_path: Path = ANNEX, off_path: Path = OFF, ingredients: Path | None = None) -> dict[str, Any]:
    """The map (module docstring) from the saved inputs."""
    annex = yaml.safe_load(annex_path.read_text(encoding="utf-8"))
    off, header = read_off_allergens(off_path)
    off_ingredients = read_off_ingredients(ingredients) if ingredients else {}
    dropped = {_norm(k) for k in annex.get("off_drop", {})}
    terms: dict[str, set[str]] = {}
    exempt: dict[str, dict[str, Any]] = {}
    wheat_terms: set[str] = set()
    groups: dict[str, dict[str, str]] = {}
    for g in annex["groups"]:
        gid = g["id"]
        groups[gid] = {"annex": g["annex"], "value": g["value"], "off_entry": g["off_entry"]}
        if g["off_entry"] not in off:
            entry = g["off_entry"]
            raise SystemExit(f"{annex_path}: group {gid}: no OFF entry named {entry!r} in {off_path}")
        names = {n for n in off[g["off_entry"]] if n not in dropped}
        names |= {_norm(t) for t in g.get("terms", [])}
        names |= {n for n in off_ingredients.get(g["off_entry"], set()) if n not in dropped}
        for name in names:
            for v in _variants(name):
                terms.setdefault(v, set()).add(gid)
        words = [_norm(w) for w in g.get("wheat_words", [])]
        for name in names:
            if words and any(re.search(rf"\b{re.escape(w)}", name) for w in words):
                wheat_terms.update(_variants(name))
        for e in g.get("exempt", []):
            entry = exempt.setdefault(_norm(e["phrase"]), {"groups": [], "why": e["why"]})
            entry["groups"] = sorted({*entry["groups"], gid})
    sources = [
        {
            "name": annex.get("source", "Regulation (EU) No 1169/2011, Annex II"),
            "url": "https://eur-lex.europa.eu/eli/reg/2011/1169/oj",
            "licence": "EU legal text; reuse authorised with acknowledgement "
            "(Commission Decision 2011/833/EU)",
            "file": "scripts/data/eu_annex_ii.yaml",
        },
        {
            "name": "Open Food Facts taxonomies/allergens.txt (English lines)",
            "repository": "https://github.com/openfoodfacts/openfoodfacts-server",
            "commit": header.get("commit", ""),
            "url": header.get("url", ""),
            "licence": "ODbL 1.0 (https://opendatacommons.org/licenses/odbl/1-0/), "
            "Open Food Facts contributors",
            "file": "scripts/data/off_allergens_en.txt",
        },
    ]
    if ingredients:
        sources.append(
            {
                "name": "Open Food Facts taxonomies/ingredients.txt (allergens:en: properties)",
                "licence": "ODbL 1.0",
                "file": str(ingredients),
            }
        )
    return {
        "version": VERSION,
        "generated": dt.date.today().isoformat(),
        "sources": sources,
        "off_dropped": annex.get("off_drop", {}),
        "groups": groups,
        "terms": {t: sorted(gs) for t, gs in sorted(terms.items())},
        "wheat_terms": sorted(wheat_terms),
        "exempt": dict(sorted(exempt.items())),
        "flour_qualifiers": sorted(_norm(q) for q in annex.get("flour_qualifiers", [])),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ingredients", type=Path, default=None, help="local OFF ingredients.txt")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--check", action="store_true", help="exit 1 when --out differs from a rebuild")
    args = parser.parse_args(argv)
    data = build(ingredients=args.ingredients)
    if args.check:
        old = json.loads(args.out.read_text(encoding="utf-8"))
        same = {**old, "generated": ""} == {**data, "generated": ""}
        print("up to date" if same else f"{args.out} differs from a rebuild")
        return 0 if same else 1
    args.out.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {args.out}: {len(data['terms'])} terms, {len(data['exempt'])} exempt phrases")
    return 0


if __name__ == "__main__":
    sys.exit(main())
