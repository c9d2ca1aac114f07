"""The ScoutAgent: extraction engines (offline lexicon, LLM), reconciliation, prompt budgets."""
