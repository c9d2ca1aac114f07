"""Evidence primitives: quote verification, citation parsing, value normalisation, the one tokenizer."""
