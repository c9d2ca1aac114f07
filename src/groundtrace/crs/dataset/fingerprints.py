"""Review fingerprints of a release: what ``release`` (redaction) and ``kb_files`` (the KB files shipped
beside a dataset) both record, in a module of its own so neither imports the other."""

from __future__ import annotations

import hashlib


def fingerprint(text: str) -> str:
    """First 16 hex digits of sha256 of the UTF-8 text (detects a changed review, reveals nothing useful)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
