"""HTML → plain text for evidence (stdlib ``html.parser``; no extra dependency).

``html_to_text(html) -> PageText(title, text, meta)``: drops ``script``, ``style``, ``nav``, ``header``,
``footer``, ``noscript``, ``template``, ``svg``, ``iframe``, ``form`` and ``aside`` subtrees and every
element a reader cannot see (``hidden``, ``aria-hidden="true"``, ``display:none``, ``visibility:hidden``,
``font-size:0`` — invisible text is a classic prompt-injection carrier); block
elements (p, div, li, tr, h1-h6, br ...) end a line; the cells of a table row are joined with ``": "``,
so a row "Net Wt | 16 oz" becomes the line "Net Wt: 16 oz" (a field a reader can quote); whitespace is
collapsed per line. The page
``<title>`` and ``<meta name|property|itemprop=... content=...>`` pairs (description, og:*, gtin, mpn ...)
are kept in ``meta`` (plus ``canonical`` from ``<link rel="canonical">``); the title and the meta
description are prepended to ``text`` so they can be quoted too.
Entities are decoded (``convert_charrefs``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser

_DROP = {
    "script",
    "style",
    "nav",
    "header",
    "footer",
    "noscript",
    "template",
    "svg",
    "iframe",
    "form",
    "aside",
}
_BLOCK = {
    "p",
    "div",
    "li",
    "ul",
    "ol",
    "tr",
    "table",
    "section",
    "article",
    "main",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "br",
    "dt",
    "dd",
    "dl",
    "blockquote",
    "pre",
    "hr",
    "caption",
    "thead",
    "tbody",
    "figcaption",
}
_VOID = {"br", "hr", "img", "meta", "link", "input", "area", "base", "col", "embed", "source", "track", "wbr"}


@dataclass
class PageText:
    """The readable content of a page."""

    title: str
    text: str
    meta: dict[str, str] = field(default_factory=dict)


_HIDDEN_STYLE = re.compile(
    r"display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0(?:px|pt|em)?\s*(?:;|$)", re.IGNORECASE
)


def _is_hidden(attrs: list[tuple[str, str | None]]) -> bool:
    a = {k.lower(): (v or "") for k, v in attrs}
    return (
        "hidden" in a
        or a.get("aria-hidden", "").lower() == "true"
        or bool(_HIDDEN_STYLE.search(a.get("style", "")))
    )


class _Extractor(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title_parts: list[str] = []
        self.meta: dict[str, str] = {}
        self._drop_depth = 0
        self._in_title = False
        self._cell = 0
        self._hidden_tag: str | None = None
        self._hidden_level = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        tag = tag.lower()
        if tag == "meta":
            a = {k.lower(): (v or "") for k, v in attrs}
            key = a.get("name") or a.get("property") or a.get("itemprop")
            if key and a.get("content"):
                self.meta[key.lower()] = a["content"].strip()
            return
        if tag == "link":
            a = {k.lower(): (v or "") for k, v in attrs}
            if "canonical" in a.get("rel", "").lower().split() and a.get("href"):
                self.meta["canonical"] = a["href"].strip()
            return
        if tag in _VOID:
            if tag in _BLOCK and not self._drop_depth:
                self.parts.append("\n")
            return
        if self._hidden_tag is not None:
            if tag == self._hidden_tag:
                self._hidden_level += 1
            return
        if tag in _DROP:
            self._drop_depth += 1
            return
        if _is_hidden(attrs):  # hidden text is a classic prompt-injection carrier: never evidence
            self._hidden_tag, self._hidden_level = tag, 1
            return
        if tag == "title":
            self._in_title = True
        if tag == "tr":
            self._cell = 0
        if tag in ("td", "th") and not self._drop_depth:
            self.parts.append(": " if self._cell else " ")
            self._cell += 1
        if tag in _BLOCK and not self._drop_depth:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        tag = tag.lower()
        if self._hidden_tag is not None:
            if tag == self._hidden_tag:
                self._hidden_level -= 1
                if self._hidden_level == 0:
                    self._hidden_tag = None
            return
        if tag in _DROP:
            self._drop_depth = max(0, self._drop_depth - 1)
            return
        if tag == "title":
            self._in_title = False
        if tag in _BLOCK and not self._drop_depth:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self._hidden_tag is not None:
            return
        if self._in_title:
            self.title_parts.append(data)
            return
        if not self._drop_depth:
            self.parts.append(data)


def _clean_lines(text: str) -> str:
    lines = (re.sub(r"[ \t\r\f\v\u00a0]+", " ", line).strip() for line in text.split("\n"))
    return "\n".join(line for line in lines if line)


def html_to_text(html: str) -> PageText:
    """Readable text, title and meta of an HTML page (see module docstring)."""
    parser = _Extractor()
    parser.feed(html)
    parser.close()
    title = re.sub(r"\s+", " ", "".join(parser.title_parts)).strip()
    body = _clean_lines("".join(parser.parts))
    head = [title] if title else []
    description = parser.meta.get("description") or parser.meta.get("og:description")
    if description:
        head.append(description)
    text = "\n".join([*head, body]) if body else "\n".join(head)
    return PageText(title=title, text=text, meta=parser.meta)
