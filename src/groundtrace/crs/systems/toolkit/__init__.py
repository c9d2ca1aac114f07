"""The shared toolkit of the offline CRS systems (and of the LLM ones to come).

* :mod:`.state` — the dialogue state read from the history: stated constraints (lexicon parser), negative
  preferences, rejected POIs (rejection memory), the query text;
* :mod:`.documents` — POI documents (name, categories, attributes, reviews) and quotable sentences;
* :mod:`.sparse` — a TF-IDF index over POI documents (scikit-learn ``HashingVectorizer``, IDF over the pool);
* :mod:`.scoring` — the hand-checkable scoring pieces: Bayesian-prior rating, reciprocal rank fusion,
  haversine filter, greedy nearest-neighbour order;
* :mod:`.citing` — extractive citation selection (best-matching review sentences, stance-aware), the
  verification pass (``core.evidence.quotes.quote_score``) and the answer template;
* :mod:`.base` — :class:`~.base.RankingSystem`, the skeleton every offline system fills with one
  ``score`` method (rejection handling, citations and the response are shared);
* :mod:`.dense` — the optional bi-encoder (extra ``[dense]``) with its on-disk embedding cache.
"""
