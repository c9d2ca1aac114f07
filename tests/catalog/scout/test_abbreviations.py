"""Values with a period inside ("Mt. Olive", "Mr. Coffee", "U.S. Polo Assn.") stay whole: the sentence
splitter knows abbreviations, and no extractor cuts a value at a sentence-splitter boundary."""

from __future__ import annotations

import re

from hypothesis import example, given, settings
from hypothesis import strategies as st

from groundtrace.catalog.model import SKU, Document
from groundtrace.catalog.pipeline import EnrichConfig, build_components, process_sku
from groundtrace.catalog.scout.lexicon_engine import LexiconEngine
from groundtrace.catalog.scout.sentences import (
    ends_with_abbreviation,
    first_sentence,
    sentence_spans,
    strip_end_period,
)
from groundtrace.catalog.sources.catalog_record import catalog_documents
from groundtrace.catalog.templates import load_templates

GROCERY = load_templates().for_category("grocery")

_ABBREV = st.sampled_from(["Mt.", "Mr.", "Mrs.", "St.", "Dr.", "No.", "U.S.", "Ft.", "J.", "Jr."])
_WORD = st.from_regex(r"[A-Z][a-z]{2,7}('s)?", fullmatch=True)
_SUFFIX = st.sampled_from(["", "", " Assn.", " Inc.", " Co.", " Bros.", " 7"])


@st.composite
def _names(draw: st.DrawFn) -> str:
    words = draw(st.lists(_WORD, min_size=1, max_size=2))
    return f"{draw(_ABBREV)} {' '.join(words)}{draw(_SUFFIX)}"


def _cut_at_boundary(value: str, full: str) -> bool:
    """True when ``value`` is ``full`` cut at a sentence-splitter boundary (a period then a space)."""
    value = value.strip()
    if not (full.startswith(value) and len(value) < len(full)):
        return False
    rest = full[len(value) :]
    return bool(re.match(r"\.\s", rest) or (value.endswith(".") and rest[:1].isspace()))


def test_repro_mt_olive_is_written_whole() -> None:
    comp = build_components(EnrichConfig())
    sku = SKU(sku_id="x1", title="Kosher Dills", brand="Mt. Olive", category="Grocery")
    brand = next(r for r in process_sku(sku, comp).results if r.attribute == "brand")
    assert brand.candidate.value == "Mt. Olive"
    assert brand.candidate.evidence[0].quote == "Brand: Mt. Olive"
    assert brand.decision.action.value == "WRITE"


def test_splitter_keeps_abbreviations_and_splits_sentences() -> None:
    text = "Made by Mr. Coffee in the U.S. Brewed fresh. Serve hot! No. 7 is best"
    assert [text[s:e] for s, e in sentence_spans(text)] == [
        "Made by Mr. Coffee in the U.S. Brewed fresh.",
        "Serve hot!",
        "No. 7 is best",
    ]
    assert ends_with_abbreviation("U.S. Polo Assn.") and not ends_with_abbreviation("Olive.")
    assert strip_end_period("U.S. Polo Assn.") == "U.S. Polo Assn."
    assert strip_end_period("Mt. Olive.") == "Mt. Olive"
    assert first_sentence("St. Dalfour. Fine jams since 1984.") == "St. Dalfour"


@settings(max_examples=40, deadline=None)
@given(name=_names(), tail=st.sampled_from(["", ".", ". Fine since 1984.", "\nSize: 12 oz"]))
@example(name="Mt. Olive", tail="")
@example(name="Mr. Coffee", tail=". Brews fast.")
@example(name="St. Dalfour", tail="")
@example(name="Dr. Bronner's", tail=".")
@example(name="No. 7", tail="")
@example(name="U.S. Polo Assn.", tail="")
def test_no_extractor_cuts_a_value_at_a_splitter_boundary(name: str, tail: str) -> None:
    """Brand from the record field, from a ``Brand:`` line in the description, and a country from
    "Made in ...": no extracted value is a strict prefix of the stated one cut at a period + space."""
    sku = SKU(
        sku_id="h1",
        title="Jam",
        brand=name,
        description=f"Brand: {name}{tail}\nMade in {name}{tail}",
        category="grocery",
    )
    docs = catalog_documents(sku)
    specs = [GROCERY.attribute("brand"), GROCERY.attribute("country_of_origin")]
    out = LexiconEngine().extract(sku, specs, docs, template_attributes=GROCERY.attributes)
    values = [f.value for f in out.findings]
    assert values, "the stated brand is found"
    for f in out.findings:
        assert not _cut_at_boundary(f.value, name), (f.attribute, f.value, name)
        assert not _cut_at_boundary(f.evidence.quote.split(": ", 1)[-1], name), f.evidence.quote
    brands = {f.value for f in out.findings if f.attribute == "brand"}
    assert strip_end_period(name) in brands


@settings(max_examples=40, deadline=None)
@given(name=_names(), before=st.sampled_from(["", "Great jam. ", "Brand: "]))
def test_sentence_of_a_value_holds_the_whole_value(name: str, before: str) -> None:
    text = f"{before}{name} makes it. Try it."
    doc = Document(source="catalog", source_type="catalog", source_ref="catalog:d", text=text)
    start = text.index(name)
    holding = [(s, e) for s, e in sentence_spans(doc.text) if s <= start < e]
    assert len(holding) == 1 and holding[0][1] >= start + len(name)
