"""Shared evidence core: quotes, citations, tokens, normalisation, entailment, LLM client, registry.

This package must never import ``groundtrace.crs`` or ``groundtrace.catalog``.
"""
