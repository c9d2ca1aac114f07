"""TRACE-CRS: knowledge base, dataset builder, systems, metrics, evaluation and reports."""
