"""The review page (``groundtrace catalog serve``, extra ``[web]``): reviewers log in, filter the open
REVIEW items of a catalog store, read each candidate with its evidence highlighted inside its source text,
and approve, reject or edit it; decisions go to the store (published value + audit log). Also the review
queue's exchange with Label Studio and Argilla (:mod:`.exchange`). See docs/catalog-review.md.

Modules: :mod:`.auth` (argon2 passwords, login rate limit, session secret), :mod:`.csrf` (per-session
token), :mod:`.queue` (filters, counts, evidence highlighting — no web framework), :mod:`.app` (the
FastAPI application), :mod:`.exchange` (Label Studio / Argilla JSON).
"""
