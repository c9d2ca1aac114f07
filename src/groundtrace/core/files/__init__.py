"""Reading files once, the same way everywhere: per-line UTF-8 decoding and per-line errors."""
