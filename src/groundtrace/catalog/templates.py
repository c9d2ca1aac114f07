"""Category templates: load YAML files into a :class:`TemplateSet` and route a leaf category to its template.

``Template(c_s; T)`` in the seed: a category selects the priority attributes to extract. The YAML format is
one :class:`~groundtrace.catalog.model.CategoryTemplate` per file (see ``docs/catalog-data.md``); the
built-in files for grocery, alcohol, electronics and home ship as package data next to this module.

Routing contract of :meth:`TemplateSet.for_category` (first hit wins):

1. exact match on a template's ``category`` or one of its ``aliases``;
2. the same, case-insensitively, with ``&`` == ``and`` and punctuation ignored;
3. steps 1-2 on each segment of a taxonomy path (``"A > B > C"``, also ``/``, ``|``, ``›``), leaf first;
4. keyword fallback: on each segment, leaf first, the template whose keyword phrase (whole words) matches
   wins; the longest matching phrase breaks ties, then the number of matching phrases, then the name.
   ``"Grocery & Gourmet Food > Coffee"`` → grocery; ``"Home & Kitchen > Coffee Makers"`` → home
   ("coffee makers" is longer than "coffee").
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Iterator
from importlib import resources
from pathlib import Path

import yaml

from groundtrace.catalog.model import CategoryTemplate
from groundtrace.core.evidence.normalize import known_units, parse_unit
from groundtrace.core.files.yaml_loader import YamlError, read_yaml, validate_document

_PATH_SPLIT = re.compile(r"\s*(?:>|/|\||›|»)\s*")
_NON_ALNUM = re.compile(r"[^0-9a-z]+")


class TemplateError(ValueError):
    """A template file is unreadable or invalid; the message names the file."""


def category_key(text: str) -> str:
    """Normalised lookup key: lowercase, ``&`` → ``and``, every run of non-alphanumerics → one space."""
    text = text.lower().replace("&", " and ")
    return _NON_ALNUM.sub(" ", text).strip()


def split_category_path(category: str) -> list[str]:
    """Segments of a taxonomy path, root first: ``"A > B"`` → ``["A", "B"]`` (empty segments dropped)."""
    return [seg for seg in _PATH_SPLIT.split(category.strip()) if seg.strip()]


def validate_template(template: CategoryTemplate) -> list[str]:
    """Consistency problems the pydantic model cannot see (empty list when the template is sound)."""
    problems: list[str] = []
    seen: set[str] = set()
    for spec in template.attributes:
        if spec.slug in seen:
            problems.append(f"duplicate attribute slug {spec.slug!r}")
        seen.add(spec.slug)
        if spec.type == "enum" and not spec.allowed_values:
            problems.append(f"enum attribute {spec.slug!r} has no allowed_values")
        if spec.type == "bool" and spec.allowed_values and set(spec.allowed_values) != {"true", "false"}:
            problems.append(f"bool attribute {spec.slug!r} must allow exactly 'true' and 'false'")
        if spec.variant_invariant and spec.safety_critical:
            problems.append(
                f"attribute {spec.slug!r} is safety_critical and variant_invariant: allergens and dietary "
                "claims change between variants, so a sibling-variant page must never propose them"
            )
        if spec.unit is not None and spec.type != "number":
            problems.append(
                f"attribute {spec.slug!r} has a unit but type {spec.type!r} (units need type number)"
            )
        elif spec.unit is not None and parse_unit(spec.unit) is None:
            close = difflib.get_close_matches(spec.unit.lower(), known_units(), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            problems.append(f"attribute {spec.slug!r}: unknown unit {spec.unit!r}{hint}")
    if not template.attributes:
        problems.append("template has no attributes")
    return problems


def load_template_file(path: Path) -> CategoryTemplate:
    """Read one YAML template file (``core.files.yaml_loader``: safe YAML, ``file:line`` of the offending
    key, did-you-mean for unknown keys), then check it with :func:`validate_template`."""
    try:
        template = validate_document(read_yaml(path), CategoryTemplate)
    except YamlError as exc:
        raise TemplateError(str(exc)) from None
    problems = validate_template(template)
    if problems:
        raise TemplateError(f"{path}: " + "; ".join(problems))
    return template


def dump_template(template: CategoryTemplate) -> str:
    """YAML text of a template (defaults omitted, key order kept) that :func:`load_template_file` reads
    back."""
    data = template.model_dump(mode="json", exclude_defaults=True)  # nested attributes too
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=110)


class TemplateSet:
    """An immutable collection of category templates with category routing (see the module docstring)."""

    def __init__(self, templates: Iterable[CategoryTemplate]) -> None:
        self._templates: dict[str, CategoryTemplate] = {}
        self._exact: dict[str, str] = {}
        self._keyed: dict[str, str] = {}
        self._resolved: dict[str, tuple[CategoryTemplate | None, str]] = {}  # resolve() per category text
        for template in templates:
            if template.category in self._templates:
                raise TemplateError(f"two templates for category {template.category!r}")
            self._templates[template.category] = template
        # names first: a template's own name always beats another template's alias; among aliases the
        # later template wins (so ``merged`` lets the added set take over shared aliases)
        for name in self._templates:
            self._exact[name] = name
            self._keyed[category_key(name)] = name
        names = set(self._exact) | set(self._keyed)
        for name, template in self._templates.items():
            for alias in template.aliases:
                for table, key in ((self._exact, alias.strip()), (self._keyed, category_key(alias))):
                    if key not in names or table.get(key) == name:
                        table[key] = name

    # -- access -----------------------------------------------------------------------------------------
    def categories(self) -> list[str]:
        """Template category names, sorted."""
        return sorted(self._templates)

    def get(self, category: str) -> CategoryTemplate:
        """The template named exactly ``category`` (no routing); KeyError lists the known names."""
        try:
            return self._templates[category]
        except KeyError:
            raise KeyError(f"no template named {category!r}; known: {', '.join(self.categories())}") from None

    def __iter__(self) -> Iterator[CategoryTemplate]:
        return iter(self._templates[name] for name in self.categories())

    def __len__(self) -> int:
        return len(self._templates)

    def merged(self, other: TemplateSet) -> TemplateSet:
        """A new set with ``other``'s templates added; a category present in both is taken from ``other``."""
        combined = {t.category: t for t in self}
        combined.update({t.category: t for t in other})
        return TemplateSet(combined.values())

    # -- routing ----------------------------------------------------------------------------------------
    def _direct(self, label: str) -> CategoryTemplate | None:
        name = self._exact.get(label.strip()) or self._keyed.get(category_key(label))
        return self._templates[name] if name else None

    def _keyword(self, segment: str) -> CategoryTemplate | None:
        padded = f" {category_key(segment)} "
        best: tuple[int, int, str] | None = None
        for template in self._templates.values():
            hits = [
                len(k) for k in (category_key(kw) for kw in template.keywords) if k and f" {k} " in padded
            ]
            if hits:
                score = (max(hits), len(hits), template.category)
                if best is None or score[:2] > best[:2] or (score[:2] == best[:2] and score[2] < best[2]):
                    best = score
        return self._templates[best[2]] if best else None

    def resolve(self, category: str) -> tuple[CategoryTemplate | None, str]:
        """``(template, how)`` where ``how`` is exact / alias / path / keyword / none (for reports).
        Memoised per category text (the set never changes; a catalog repeats a few hundred categories)."""
        found = self._resolved.get(category)
        if found is None:
            found = self._resolved[category] = self._resolve(category)
        return found

    def _resolve(self, category: str) -> tuple[CategoryTemplate | None, str]:
        if not category or not category.strip():
            return None, "none"
        hit = self._direct(category)
        if hit is not None:
            how = "exact" if category.strip() == hit.category else "alias"
            return hit, how
        segments = split_category_path(category)
        for segment in reversed(segments):
            hit = self._direct(segment)
            if hit is not None:
                return hit, "path"
        for segment in reversed(segments):
            hit = self._keyword(segment)
            if hit is not None:
                return hit, "keyword"
        return None, "none"

    def for_category(self, category: str) -> CategoryTemplate | None:
        """The template for a leaf category or taxonomy path, or None (then the SKU gets no attributes)."""
        return self.resolve(category)[0]


def builtin_template_dir() -> Path:
    """Directory of the YAML templates shipped with the package."""
    return Path(str(resources.files("groundtrace.catalog").joinpath("templates")))


def load_templates(directory: Path | None = None) -> TemplateSet:
    """Load every ``*.yaml``/``*.yml`` file of ``directory`` (None → the built-in templates).

    Raises :class:`TemplateError` naming the file for an invalid template, and for a directory with none.
    """
    root = builtin_template_dir() if directory is None else Path(directory)
    if not root.is_dir():
        raise TemplateError(f"{root}: not a directory of templates")
    files = sorted([*root.glob("*.yaml"), *root.glob("*.yml")])
    if not files:
        raise TemplateError(f"{root}: no *.yaml templates found")
    return TemplateSet(load_template_file(path) for path in files)
