"""Entailment: the scorer contract and registry, local NLI checkpoints (transformers, ONNX), evaluation on NLI
data."""
