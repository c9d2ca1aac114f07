"""Stage 2 — the five-stage builder: personas → candidate pools → plan + realiser → QC → tiers."""
