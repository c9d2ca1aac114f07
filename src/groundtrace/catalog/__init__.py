"""TRACE-Catalog: templates, evidence sources, identity, Scout, Judge, write policy, evaluation."""
