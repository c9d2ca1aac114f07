"""The dataset format: files (JSONL + JSON Schema), difficulty tiers, validation, redacted release and
hydration."""
