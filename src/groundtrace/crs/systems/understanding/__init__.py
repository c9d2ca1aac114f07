"""Constraint understanding shared by the structured systems: a parser, an evidence model and priors
learned from a dataset's train split (:mod:`.model`), with generic keyword rules as the fallback."""

from groundtrace.crs.systems.understanding.model import (
    GENERIC,
    ModelFileError,
    TrainingData,
    Understanding,
    load_understanding,
    save_understanding,
    train_understanding,
    training_data,
    understanding_for,
)

__all__ = [
    "GENERIC",
    "ModelFileError",
    "TrainingData",
    "Understanding",
    "load_understanding",
    "save_understanding",
    "train_understanding",
    "training_data",
    "understanding_for",
]
