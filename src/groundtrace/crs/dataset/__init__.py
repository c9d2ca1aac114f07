"""The dataset format: files (JSONL + JSON Schema), the dataset rules and their checks, validation,
difficulty tiers, redacted release and hydration."""
