"""HTML → plain text for evidence (stdlib ``html.parser``; no extra dependency).

``html_to_text(html) -> PageText(title, text, meta)``: drops ``script``, ``style``, ``nav``, ``header``,
``footer``, ``noscript``, ``template``, ``svg``, ``iframe``, ``form`` and ``aside`` subtrees and every
element a reader cannot see — invisible text is a classic prompt-injection carrier: the ``hidden``
attribute, ``aria-hidden="true"``, and inline styles or ``<style>`` class/id rules that hide
(:func:`style_hides`: display:none, visibility:hidden, opacity 0, font-size <= 1 px, white or transparent
text, off-screen positioning, clip, zero-size overflow, scale(0)); block
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


_DECL = re.compile(r"([a-z-]+)\s*:\s*([^;]+)", re.IGNORECASE)
_LENGTH = re.compile(r"^(-?\d*\.?\d+)\s*(px|pt|em|rem|%|vw|vh)?", re.IGNORECASE)
_RGB = re.compile(r"rgba?\(\s*(\d+)%?\s*[, ]\s*(\d+)%?\s*[, ]\s*(\d+)%?\s*(?:[,/]\s*([\d.]+%?))?\s*\)")
_RULE = re.compile(r"([^{}]+)\{([^{}]*)\}")
_SIMPLE_SELECTOR = re.compile(r"([#.])([\w-]+)")
#: pixels per unit for the tiny-text check (em/rem against a 16 px body)
_PX = {"px": 1.0, "pt": 4 / 3, "em": 16.0, "rem": 16.0}


def _length_px(value: str) -> float | None:
    m = _LENGTH.match(value.strip())
    if not m:
        return None
    number, unit = float(m.group(1)), (m.group(2) or "px").lower()
    if unit == "%":
        return number * 0.16
    return number * _PX.get(unit, 1.0)


def _invisible_colour(value: str) -> bool:
    """White-ish (every channel >= 240) or fully transparent text: invisible on the usual white page."""
    v = value.strip().lower().replace("!important", "").strip()
    if v in ("white", "transparent", "snow", "ghostwhite", "whitesmoke", "ivory", "azure", "mintcream"):
        return True
    if v.startswith("#") and len(v) in (4, 5, 7, 9):
        digits = v[1:]
        if len(digits) in (3, 4):
            digits = "".join(c * 2 for c in digits)
        try:
            channels = [int(digits[i : i + 2], 16) for i in range(0, len(digits), 2)]
        except ValueError:
            return False
        return min(channels[:3]) >= 240 or (len(channels) == 4 and channels[3] == 0)
    m = _RGB.search(v)
    if m:
        alpha = m.group(4)
        if alpha is not None and float(alpha.rstrip("%")) == 0:
            return True
        return min(int(m.group(i)) for i in (1, 2, 3)) >= 240
    return v.startswith("hsl") and ("100%)" in v.replace(" ", "") or v.replace(" ", "").endswith(",0)"))


def style_hides(style: str) -> bool:
    """Does an inline style (or a CSS rule's declarations) make its text invisible to a reader?

    display:none, visibility:hidden/collapse, opacity <= 0.05, font-size <= 1 px, white-ish or transparent
    text colour (without a non-white background on the same element), off-screen positioning (left/top/
    right/bottom/text-indent/margin <= -500 px), clip rect(0 ...)/clip-path inset(50 %+), zero height or
    width with overflow hidden, transform: scale(0)."""
    decls = {k.lower(): v.strip().lower() for k, v in _DECL.findall(style)}
    if decls.get("display", "").startswith("none") or decls.get("visibility", "").startswith(
        ("hidden", "collapse")
    ):
        return True
    opacity = _length_px(decls.get("opacity", "1"))
    if opacity is not None and opacity <= 0.05:
        return True
    size = _length_px(decls["font-size"]) if "font-size" in decls else None
    if size is not None and size <= 1.0:
        return True
    if "color" in decls and _invisible_colour(decls["color"]):
        background = decls.get("background-color") or decls.get("background") or ""
        if not background or _invisible_colour(background.split()[0]):
            return True
    for key in ("left", "top", "right", "bottom", "text-indent", "margin-left", "margin-top"):
        offset = _length_px(decls[key]) if key in decls else None
        if offset is not None and offset <= -500:
            return True
    if re.search(r"rect\(\s*0(?:px)?[\s,]+0", decls.get("clip", "")) or re.search(
        r"inset\(\s*(?:[5-9]\d|100)%", decls.get("clip-path", "")
    ):
        return True
    if decls.get("overflow", "").startswith("hidden") or "hidden" in decls.get("overflow-y", ""):
        for key in ("height", "max-height", "width", "max-width"):
            extent = _length_px(decls[key]) if key in decls else None
            if extent is not None and extent <= 1.0:
                return True
    return bool(re.search(r"scale\(\s*0(?:\.0+)?\s*[,)]", decls.get("transform", "")))


@dataclass
class HiddenRules:
    """Classes and ids a page's ``<style>`` rules hide (simple selectors: ``.a``, ``p.a.b``, ``#id``)."""

    classes: list[frozenset[str]] = field(default_factory=list)
    ids: set[str] = field(default_factory=set)

    def hides(self, attrs: dict[str, str]) -> bool:
        own = set(attrs.get("class", "").split())
        return attrs.get("id", "") in self.ids or any(c <= own for c in self.classes if c)


def hidden_rules(html: str) -> HiddenRules:
    """The hiding class/id selectors of every ``<style>`` element of ``html`` (wherever it stands)."""
    rules = HiddenRules()
    for css in re.findall(r"<style[^>]*>(.*?)</style\s*>", html, flags=re.IGNORECASE | re.DOTALL):
        css = re.sub(r"/\*.*?\*/", "", css, flags=re.DOTALL)
        for selectors, body in _RULE.findall(css):
            if not style_hides(body):
                continue
            for selector in selectors.split(","):
                last = selector.strip().split()[-1] if selector.strip() else ""
                parts = _SIMPLE_SELECTOR.findall(last)
                classes = frozenset(name for kind, name in parts if kind == ".")
                rules.ids.update(name for kind, name in parts if kind == "#")
                if classes:
                    rules.classes.append(classes)
    return rules


def _is_hidden(attrs: list[tuple[str, str | None]], rules: HiddenRules | None = None) -> bool:
    a = {k.lower(): (v or "") for k, v in attrs}
    return (
        "hidden" in a
        or a.get("aria-hidden", "").lower() == "true"
        or style_hides(a.get("style", ""))
        or (rules is not None and rules.hides(a))
    )


class _Extractor(HTMLParser):
    def __init__(self, rules: HiddenRules | None = None) -> None:
        super().__init__(convert_charrefs=True)
        self.rules = rules
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
        if _is_hidden(attrs, self.rules):  # hidden text is a classic prompt-injection carrier: never evidence
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
    parser = _Extractor(hidden_rules(html))
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
