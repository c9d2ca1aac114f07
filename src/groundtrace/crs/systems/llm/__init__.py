"""The four LLM baselines through the core LLM client (docs/crs-baselines.md, LLM section).

* :mod:`.base` — :class:`~.base.LLMSystem`: prefilter (TF-IDF / dense), prompts from ``prompts/*.txt``
  with untrusted text in DATA blocks, structured answer (:class:`~.base.LLMAnswer`), ranking clean-up,
  token/cost usage per turn;
* :mod:`.systems` — ``llm-zero-shot`` (optional proximity graph), ``llm-dst``, ``rag-citation``,
  ``multi-review-synthesis``.
"""
