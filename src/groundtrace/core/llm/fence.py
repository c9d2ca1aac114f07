"""Untrusted text inside a prompt: DATA blocks whose delimiters the text cannot forge.

Prompts put every piece of untrusted text (catalog copy, feed records, OCR, web pages, reviews) in a block::

    <<<DATA LABEL key="value" ...>>>
    ...text...
    <<<END DATA>>>

:func:`neutralise` makes forging a delimiter impossible: the text is first made plain
(:func:`~groundtrace.core.evidence.sanitize.clean_untrusted`: NFKC folds full-width ``＜＜＜``, invisible
characters go, Cyrillic/Greek look-alikes in Latin words become Latin), then every run of two or more
angle brackets or their look-alikes (``<``, ``>``, ``‹``, ``›``, ``«``, ``»``, ``〈``, ``〉``, ``⟨``, ``⟩``,
``﹤``, ``﹥``) becomes the same number of ``‹`` / ``›``. No ``<<`` or ``>>`` can then appear inside a block,
so ``<<<END DATA>>>`` written on a page reaches the model as ``‹‹‹END DATA›››`` and cannot close the block.
Header values also lose their double quotes. Work is linear in the text length.
"""

from __future__ import annotations

import re

from groundtrace.core.evidence.sanitize import clean_untrusted

_OPEN = "<‹«〈⟨﹤"
_ANGLES = re.compile("[<>‹›«»〈〉⟨⟩﹤﹥]{2,}")


def neutralise(text: str) -> str:
    """``text`` with no delimiter look-alike left (module docstring)."""
    text = clean_untrusted(text)
    return _ANGLES.sub(lambda m: "".join("‹" if c in _OPEN else "›" for c in m.group(0)), text)


def data_block(label: str, body: str, **attrs: str) -> str:
    """``<<<DATA LABEL k="v" ...>>>`` + neutralised ``body`` + ``<<<END DATA>>>``."""
    head = " ".join([label, *(f'{k}="{neutralise(v).replace(chr(34), chr(39))}"' for k, v in attrs.items())])
    return f"<<<DATA {head}>>>\n{neutralise(body)}\n<<<END DATA>>>"
