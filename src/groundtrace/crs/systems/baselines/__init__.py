"""The nine offline (non-LLM) baselines and ``trace-hybrid``, all on the shared toolkit
(``crs/systems/toolkit``). Documented in docs/crs-baselines.md; registered lazily in ``crs.systems``."""
