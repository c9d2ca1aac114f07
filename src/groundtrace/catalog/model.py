"""TRACE-Catalog records (versioned pydantic models): SKUs, templates, evidence, candidates, verdicts,
decisions.

These are the contract between importers, evidence sources, the Scout, the Judge, the write policy,
the store and the evaluation. Field names follow the seed's JSON contracts (Appendix A of paper 003).
"""

from __future__ import annotations

from enum import Enum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from groundtrace.core.evidence.sanitize import clean_untrusted

MODEL_VERSION = "1.0"
#: Size limits of one SKU record (characters): a 50 MB description is refused with a one-line error
#: instead of costing minutes of matching.
MAX_TEXT_CHARS = 50_000  # the longest record line of the shared samples is 6.4k
MAX_TITLE_CHARS = 2_000


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


# -- inputs ------------------------------------------------------------------------------------------
class SKU(_Model):
    """A merchant catalog record."""

    schema_version: str = MODEL_VERSION
    sku_id: str = Field(max_length=200)
    title: str = Field(max_length=MAX_TITLE_CHARS)
    description: str = Field(
        default="",
        max_length=MAX_TEXT_CHARS,
        description=f"At most {MAX_TEXT_CHARS:,} characters: bounded work per SKU (issue 9).",
    )
    brand: str | None = Field(default=None, max_length=MAX_TITLE_CHARS)
    category: str = Field(
        max_length=MAX_TITLE_CHARS, description="Leaf category; selects the attribute template."
    )
    gtin: str | None = Field(
        default=None,
        max_length=20,
        description="UPC-A / EAN-13 / GTIN-14 as a digit STRING (leading zeros are part of it).",
    )
    mpn: str | None = Field(default=None, max_length=200)
    specs: dict[str, str] = Field(
        default_factory=dict, max_length=500, description="Structured catalog fields, verbatim."
    )
    images: list[str] = Field(default_factory=list, max_length=50, description="Image paths or URLs.")
    url: str | None = Field(default=None, max_length=4000)

    @field_validator("specs")
    @classmethod
    def _bounded_specs(cls, value: dict[str, str]) -> dict[str, str]:
        for key, text in value.items():
            if len(key) > MAX_TITLE_CHARS or len(text) > MAX_TEXT_CHARS:
                raise ValueError(f"spec {key[:40]!r} is longer than {MAX_TEXT_CHARS:,} characters")
        return value


AttributeType = Literal["enum", "bool", "number", "string"]


class AttributeSpec(_Model):
    """One priority attribute of a category template."""

    slug: str = Field(pattern=r"^[a-z0-9_]+$")
    name: str
    definition: str = ""
    type: AttributeType = "string"
    unit: str | None = Field(default=None, description="Canonical unit for number attributes (pint syntax).")
    allowed_values: list[str] = Field(default_factory=list, description="Closed set for enum attributes.")
    recommended_values: list[str] = Field(
        default_factory=list, description="Preferred vocabulary for strings."
    )
    examples: list[str] = Field(default_factory=list)
    multi_valued: bool = False
    safety_critical: bool = Field(default=False, description="Allergens, dietary labels: WRITE only on PASS.")
    image_friendly: bool = Field(default=False, description="Material, certifications, package print.")
    variant_invariant: bool = Field(
        default=False,
        description="The same for every variant of a product line (brand, manufacturer): a sibling-variant "
        "page may propose it, to REVIEW only.",
    )
    title_prefix: bool = Field(
        default=False,
        description="Values usually open the product title (a brand): the offline engine reads a "
        "recommended value at the start of the title as stated (templates from gold set it per category).",
    )


class CategoryTemplate(_Model):
    """Category → its priority attributes (Template(c_s; T) in the seed)."""

    schema_version: str = MODEL_VERSION
    category: str
    aliases: list[str] = Field(default_factory=list, description="Other leaf-category names mapped here.")
    description: str = ""
    keywords: list[str] = Field(
        default_factory=list,
        description="Words/phrases that route a free-text category path here (fallback).",
    )
    attributes: list[AttributeSpec]

    def attribute(self, slug: str) -> AttributeSpec:
        for spec in self.attributes:
            if spec.slug == slug:
                return spec
        raise KeyError(f"template {self.category!r} has no attribute {slug!r}")


# -- evidence ----------------------------------------------------------------------------------------
EvidenceSource = Literal["catalog", "syndicated", "image", "web"]
SourceType = Literal[
    "catalog",
    "hq",
    "image",
    "official_web",
    "official_doc",
    "major_retailer",
    "retailer",
    "aggregator",
    "other",
]
#: Preference order for web sources (lower is better); blogs/forums/UGC are never used at all.
SOURCE_TYPE_RANK: dict[str, int] = {
    "catalog": 0,
    "hq": 1,
    "image": 2,
    "official_web": 3,
    "official_doc": 3,
    "major_retailer": 4,
    "retailer": 5,
    "aggregator": 6,
    "other": 7,
}
#: Evidence priority of the seed: catalog > high-quality syndicated > image > web.
SOURCE_PRIORITY: dict[str, int] = {"catalog": 0, "syndicated": 1, "image": 2, "web": 3}


class Document(_Model):
    """A piece of source text evidence can quote from (catalog field, feed record, OCR text, web page)."""

    source: EvidenceSource
    source_type: SourceType
    source_ref: str = Field(
        description="Where it came from: 'catalog:title', 'feed.csv#00012345678905', a URL..."
    )
    text: str = Field(
        description="Plain text: NFKC, invisible characters removed, mixed-script look-alikes mapped to "
        "Latin (core.evidence.sanitize.clean_untrusted), applied on creation."
    )
    title: str = ""
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("text", "title")
    @classmethod
    def _plain(cls, value: str) -> str:
        return clean_untrusted(value)


class Evidence(_Model):
    """A verbatim quote supporting a value, with where it sits in its source text."""

    source: EvidenceSource
    source_type: SourceType
    source_ref: str
    quote: str
    span: tuple[int, int] | None = Field(
        default=None, description="Character span of the quote in the source text."
    )
    url: str | None = None


class CandidateStatus(str, Enum):
    EXTRACTED = "extracted"
    NOT_FOUND = "not_found"
    NOT_APPLICABLE = "not_applicable"
    AMBIGUOUS = "ambiguous"
    CONFLICT = "conflict"
    IDENTITY_MISMATCH = "identity_mismatch"


class Candidate(_Model):
    """The Scout's proposal for one (SKU, attribute): a value with provenance, or an abstention."""

    sku_id: str
    attribute: str
    value: str | list[str] | None = None
    evidence: list[Evidence] = Field(default_factory=list)
    confidence: float = Field(default=0.0, ge=0.0, le=1.0)
    status: CandidateStatus = CandidateStatus.NOT_FOUND
    engine: str = ""
    note: str = ""

    @field_validator("value")
    @classmethod
    def _empty_is_none(cls, v: str | list[str] | None) -> str | list[str] | None:
        if v == "" or v == []:
            return None
        return v


class VerdictLabel(str, Enum):
    PASS = "PASS"
    FAIL = "FAIL"
    UNVERIFIED = "UNVERIFIED"
    UNCERTAIN = "UNCERTAIN"


class FailureType(str, Enum):
    INCORRECT_VALUE = "INCORRECT_VALUE"
    UNSUPPORTED_INFERENCE = "UNSUPPORTED_INFERENCE"
    HALLUCINATION = "HALLUCINATION"
    CONTRADICTION = "CONTRADICTION"
    SCHEMA_MALFORMED = "SCHEMA_MALFORMED"
    PARTIAL_EXTRACTION = "PARTIAL_EXTRACTION"
    INVALID_FORMAT = "INVALID_FORMAT"
    UNSAFE = "UNSAFE"
    MISSING_EXTRACTION = "MISSING_EXTRACTION"


class Verdict(_Model):
    """The Judge's verdict on one candidate."""

    sku_id: str
    attribute: str
    verdict: VerdictLabel
    failure_type: FailureType | None = None
    reasoning: str = Field(default="", description="At most 30 words.")
    url: str | None = None
    quote_verified: bool = Field(
        default=False, description="Every quote was found in its stored source (>= 0.80)."
    )
    judge: str = ""

    @field_validator("reasoning")
    @classmethod
    def _at_most_30_words(cls, v: str) -> str:
        words = v.split()
        return " ".join(words[:30])


class Action(str, Enum):
    WRITE = "WRITE"
    BLOCK = "BLOCK"
    REVIEW = "REVIEW"


class Decision(_Model):
    """The write policy's routing of one candidate."""

    sku_id: str
    attribute: str
    action: Action
    reason: str
    policy: str = "default"


class AttributeResult(_Model):
    """Everything decided about one (SKU, attribute): the line format of ``enrich`` results."""

    sku_id: str
    category: str
    attribute: str
    candidate: Candidate
    verdict: Verdict
    decision: Decision


class GoldLabel(_Model):
    """A gold value for one (SKU, attribute); ``value=None`` with ``not_applicable`` means n/a gold (the
    attribute does not apply). An attribute without a GoldLabel is *unknown* (partial annotation): it is
    scored as gold ``none`` and never counts for or against abstention."""

    sku_id: str
    attribute: str
    value: str | list[str] | None = None
    alternatives: list[str] = Field(
        default_factory=list,
        description="Other accepted surface forms of a single value (datasets list several).",
    )
    not_applicable: bool = False
    source: str = ""
    in_text: bool | None = Field(
        default=None,
        description="Whether the value's surface form occurs in the SKU's input text (set by the importers; "
        "None: not checked or no value). A gold value not in the text can only be found from other evidence.",
    )
