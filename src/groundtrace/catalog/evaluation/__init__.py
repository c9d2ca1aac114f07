"""Evaluating enrichment results against gold labels."""
