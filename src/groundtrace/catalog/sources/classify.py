"""Source-type classification of web URLs, and the blocklist of user-generated content.

``classify_url(url, brand=..., policy=...)`` returns a :data:`~groundtrace.catalog.model.SourceType` or
``None`` when the page must never be used. Rules, first match wins:

1. blocked (``None``): a host or parent domain in ``policy.blocked_domains`` (reddit, quora, medium,
   blogspot, wordpress, tumblr, ...), a host starting with ``forum.``/``forums.``/``community.``/``blog.``,
   a path segment in ``policy.blocked_path_segments`` (``/community/``, ``/forum/``, ``/reviews/``,
   ``/blog/``, ``/questions/`` ...), or a path segment of at most three ``-``/``_``/``.``-separated words
   whose last word is in ``policy.blocked_path_suffixes`` (``/product-reviews/``, ``/customer-questions/``,
   ``/community-qa/``, ``/acme-blog/``, ``reviews.html``) — review and Q&A pages are user content on any
   domain, a major retailer's included (``amazon.com/product-reviews/B000123``). UGC is never evidence.
2. ``official_doc``: an official domain (below) serving a manual/spec sheet — a ``.pdf`` path or a
   path segment like ``manual``, ``manuals``, ``spec-sheet``, ``datasheet``, ``support/docs``.
3. ``official_web``: the host is (a subdomain of) a domain in ``policy.official_domains[brand]``, or
   the brand name, squashed to ``[a-z0-9]``, equals the registrable label of the host (``acme.com``
   for brand "ACME").
4. ``major_retailer`` / ``retailer`` / ``aggregator``: the host is in the configured lists.
5. ``other`` for everything else (``.pdf`` on an unknown domain stays ``other``).
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field

from groundtrace.catalog.model import SourceType
from groundtrace.core.files.yaml_loader import YamlError, load_yaml_model

DEFAULT_BLOCKED_DOMAINS = (
    "reddit.com",
    "quora.com",
    "medium.com",
    "blogspot.com",
    "wordpress.com",
    "tumblr.com",
    "substack.com",
    "pinterest.com",
    "facebook.com",
    "instagram.com",
    "tiktok.com",
    "twitter.com",
    "x.com",
    "youtube.com",
    "stackexchange.com",
    "fandom.com",
    "wikihow.com",
    "answers.com",
    "yelp.com",
)
DEFAULT_BLOCKED_HOST_PREFIXES = ("forum.", "forums.", "community.", "blog.", "blogs.", "answers.", "discuss.")
DEFAULT_BLOCKED_PATH_SEGMENTS = (
    "community",
    "communities",
    "forum",
    "forums",
    "blog",
    "blogs",
    "reviews",
    "review",
    "questions",
    "answers",
    "qa",
    "discussion",
    "discussions",
    "threads",
    "ugc",
    "customer-reviews",
    "product-reviews",
    "user-reviews",
    "customer-questions",
    "questions-and-answers",
    "q-and-a",
    "qanda",
)
# last word of a compound segment ("product-reviews", "community-qa"); "threads" or "answers" are not here:
# "sewing-threads" is a product
DEFAULT_BLOCKED_PATH_SUFFIXES = (
    "review",
    "reviews",
    "questions",
    "qa",
    "qanda",
    "forum",
    "forums",
    "community",
    "communities",
    "discussion",
    "discussions",
    "blog",
    "blogs",
    "ugc",
)
_MAX_SUFFIX_WORDS = 3  # a longer slug ending in "review(s)" is more likely a product name than a review page
DEFAULT_MAJOR_RETAILERS = (
    "amazon.com",
    "walmart.com",
    "target.com",
    "costco.com",
    "kroger.com",
    "bestbuy.com",
    "homedepot.com",
    "lowes.com",
    "wholefoodsmarket.com",
    "instacart.com",
    "samsclub.com",
    "cvs.com",
    "walgreens.com",
)
DEFAULT_AGGREGATORS = (
    "openfoodfacts.org",
    "upcitemdb.com",
    "barcodelookup.com",
    "google.com",
    "shopping.com",
    "pricegrabber.com",
    "camelcamelcamel.com",
    "fooducate.com",
)
_DOC_SEGMENTS = (
    "manual",
    "manuals",
    "spec-sheet",
    "specsheet",
    "datasheet",
    "datasheets",
    "docs",
    "documentation",
)


class SourcePolicy(BaseModel):
    """Configurable lists behind :func:`classify_url` (all lower-case domains, no ``www.``)."""

    model_config = ConfigDict(extra="forbid")

    official_domains: dict[str, list[str]] = Field(
        default_factory=dict, description="brand (any case) → domains"
    )
    major_retailers: list[str] = Field(default_factory=lambda: list(DEFAULT_MAJOR_RETAILERS))
    retailers: list[str] = Field(default_factory=list)
    aggregators: list[str] = Field(default_factory=lambda: list(DEFAULT_AGGREGATORS))
    blocked_domains: list[str] = Field(default_factory=lambda: list(DEFAULT_BLOCKED_DOMAINS))
    blocked_host_prefixes: list[str] = Field(default_factory=lambda: list(DEFAULT_BLOCKED_HOST_PREFIXES))
    blocked_path_segments: list[str] = Field(default_factory=lambda: list(DEFAULT_BLOCKED_PATH_SEGMENTS))
    blocked_path_suffixes: list[str] = Field(
        default_factory=lambda: list(DEFAULT_BLOCKED_PATH_SUFFIXES),
        description="Last word of a compound path segment that marks user content (product-reviews).",
    )

    def official_for(self, brand: str | None) -> list[str]:
        if not brand:
            return []
        key = brand.strip().lower()
        for name, domains in self.official_domains.items():
            if name.strip().lower() == key:
                return [d.lower() for d in domains]
        return []


def host_of(url: str) -> str:
    """Lower-case host without ``www.`` and port ('' for a URL with no host)."""
    host = (urlsplit(url).hostname or "").lower()
    return host.removeprefix("www.")


def _in_domains(host: str, domains: list[str] | tuple[str, ...]) -> bool:
    return any(host == d or host.endswith("." + d) for d in domains)


def _squash(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def is_blocked(url: str, policy: SourcePolicy | None = None) -> bool:
    """True for blogs, forums and user-generated content (never used as evidence)."""
    policy = policy or SourcePolicy()
    host = host_of(url)
    if _in_domains(host, policy.blocked_domains):
        return True
    if any(host.startswith(prefix) for prefix in policy.blocked_host_prefixes):
        return True
    segments = [s.lower() for s in urlsplit(url).path.split("/") if s]
    return any(_ugc_segment(s, policy) for s in segments)


def _ugc_segment(segment: str, policy: SourcePolicy) -> bool:
    if segment in policy.blocked_path_segments:
        return True
    words = [w for w in re.split(r"[-_.+]", segment) if w]
    if words and words[-1] in ("html", "htm", "php", "aspx", "jsp"):
        words = words[:-1]
    return 1 <= len(words) <= _MAX_SUFFIX_WORDS and words[-1] in policy.blocked_path_suffixes


def classify_url(url: str, brand: str | None = None, policy: SourcePolicy | None = None) -> SourceType | None:
    """Source type of ``url`` for a SKU of ``brand`` (``None`` = blocked, never use). See module doc."""
    policy = policy or SourcePolicy()
    if is_blocked(url, policy):
        return None
    host = host_of(url)
    path = urlsplit(url).path.lower()
    official = _in_domains(host, policy.official_for(brand))
    if not official and brand and host:
        labels = host.split(".")
        registrable = labels[-2] if len(labels) >= 2 else labels[0]
        official = bool(_squash(brand)) and _squash(brand) == registrable
    if official:
        segments = [s for s in path.split("/") if s]
        if path.endswith(".pdf") or any(s in _DOC_SEGMENTS for s in segments):
            return "official_doc"
        return "official_web"
    if _in_domains(host, policy.major_retailers):
        return "major_retailer"
    if _in_domains(host, policy.retailers):
        return "retailer"
    if _in_domains(host, policy.aggregators):
        return "aggregator"
    return "other"


def load_policy(path: str | Path) -> SourcePolicy:
    """A :class:`SourcePolicy` from a YAML/JSON file (keys as the model's fields; missing keys keep the
    defaults; an empty file is the default policy). Errors are ``ValueError`` naming ``file:line``
    (``core.files.yaml_loader``)."""
    try:
        return load_yaml_model(path, SourcePolicy, empty={})
    except YamlError as exc:
        raise ValueError(str(exc)) from None
