"""The learned offline Scout engine (registered as ``learned``): a BIO sequence tagger (CRF,
``python-crfsuite``) over title + description tokens and per-category value lexicons, trained from
labelled SKUs (``groundtrace catalog train``), with a confidence threshold θ per attribute calibrated on a
held-out part of the training data for a target precision (``groundtrace catalog calibrate``).

It is a Scout engine, not a shortcut: every value it proposes carries a verbatim quote of its Document and
then goes through identity, reconciliation, the Judge and the write policy like any other finding.

Modules: :mod:`.tokens` (tokeniser, features, BIO labels), :mod:`.model` (the versioned model file),
:mod:`.train` (training and calibration), :mod:`.engine` (:class:`~.engine.LearnedEngine`).
"""
