"""The JudgeAgent: rule judge, LLM judge, and the statement check they share."""
