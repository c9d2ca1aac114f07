"""Reading files once, the same way everywhere: per-line UTF-8 decoding and per-line errors (``text``),
the JSONL reader (``jsonl``), the safe YAML + pydantic loader (``yaml_loader``), the pydantic error
formatter (``validation``) and the ``file:line: message`` error record (``errors``)."""
