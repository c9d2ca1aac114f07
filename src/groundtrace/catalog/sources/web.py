"""Web search providers and page fetching.

* :class:`LocalCorpusSearch` — offline search over a folder of ``.html``/``.txt`` pages or a JSONL file of
  ``{"url", "title", "html"|"text"}`` records, ranked with Okapi BM25::

      score(q, d) = Σ_{t ∈ q} idf(t) · tf(t,d)·(k1+1) / (tf(t,d) + k1·(1 − b + b·|d|/avgdl))
      idf(t)      = ln(1 + (N − df(t) + 0.5) / (df(t) + 0.5))            (k1 = 1.5, b = 0.75)

  Terms are the lower-cased word tokens of :func:`groundtrace.core.evidence.tokens.tokenize` (punctuation
  dropped); query terms count once per occurrence. Implemented with a scipy sparse term matrix.
* :class:`SearxngSearch` — any SearxNG-compatible JSON API: ``GET {base}/search?q=...&format=json``,
  results ``{"results": [{"url", "title", "content"}]}``; pages are fetched with httpx.
* :func:`page_document` — HTML → a web :class:`~groundtrace.catalog.model.Document` (text from
  :func:`html_to_text`; ``metadata["meta"]`` holds the page's meta tags, and ``gtin``/``mpn``/``brand``/
  ``title`` are lifted from them to the top level, where ``identity_match`` reads them).

Every hit is classified by :func:`classify_url` without a brand (the Scout re-classifies with the SKU's
brand, which can promote a hit to ``official_web``); blocked (UGC) hits come back with
``source_type=None`` and :meth:`fetch` refuses to return them, so they can never become evidence.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from scipy import sparse

from groundtrace.catalog.model import Document
from groundtrace.catalog.sources.base import SEARCH_PROVIDERS, SearchHit, SearchProvider, SourceError
from groundtrace.catalog.sources.classify import SourcePolicy, classify_url
from groundtrace.catalog.sources.html_text import html_to_text
from groundtrace.core.evidence.tokens import tokenize
from groundtrace.core.files.jsonl import iter_jsonl

_GTIN_META = (
    "gtin",
    "gtin8",
    "gtin12",
    "gtin13",
    "gtin14",
    "upc",
    "ean",
    "product:upc",
    "product:ean",
    "product:gtin",
    "og:upc",
    "product:retailer_item_id_gtin",
)
_MPN_META = ("mpn", "product:mpn", "og:mpn")
_BRAND_META = ("brand", "product:brand", "og:brand")


def terms(text: str) -> list[str]:
    """BM25 terms: lower-cased word tokens (punctuation tokens dropped)."""
    return [t.lower() for t in tokenize(text) if any(ch.isalnum() for ch in t)]


def page_document(url: str, html: str, *, source_type: str, is_html: bool = True) -> Document:
    """A web Document for a fetched page (``source="web"``, ``source_ref=url``)."""
    if is_html:
        page = html_to_text(html)
        title, text, meta = page.title, page.text, page.meta
    else:
        title, text, meta = (html.strip().splitlines() or [""])[0], html, {}
    metadata: dict[str, Any] = {"url": url, "meta": meta, "title": title}
    gtins = [meta[k] for k in _GTIN_META if meta.get(k)]
    if gtins:
        metadata["gtin"] = gtins
    for field, keys in (("mpn", _MPN_META), ("brand", _BRAND_META)):
        found = next((meta[k] for k in keys if meta.get(k)), None)
        if found:
            metadata[field] = found
    return Document(
        source="web",
        source_type=source_type,
        source_ref=url,
        text=text,
        title=title,  # type: ignore[arg-type]
        metadata=metadata,
    )


class BM25Index:
    """Okapi BM25 over a list of texts (formula in the module docstring)."""

    def __init__(self, texts: list[str], k1: float = 1.5, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        vocab: dict[str, int] = {}
        rows: list[int] = []
        cols: list[int] = []
        for i, text in enumerate(texts):
            for term in terms(text):
                rows.append(i)
                cols.append(vocab.setdefault(term, len(vocab)))
        self.vocab = vocab
        n_docs = len(texts)
        tf = sparse.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n_docs, max(1, len(vocab))))
        tf.sum_duplicates()
        self.tf = tf.tocsc()
        self.doc_len = np.asarray(tf.sum(axis=1)).ravel()
        self.avgdl = float(self.doc_len.mean()) if n_docs else 0.0
        df = np.asarray((self.tf > 0).sum(axis=0)).ravel()
        self.idf = np.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every document for ``query``."""
        out = np.zeros(len(self.doc_len))
        if not len(out) or self.avgdl == 0:
            return out
        norm = self.k1 * (1.0 - self.b + self.b * self.doc_len / self.avgdl)
        for term in terms(query):
            j = self.vocab.get(term)
            if j is None:
                continue
            col = self.tf.getcol(j)
            idx, tf = col.indices, col.data
            out[idx] += self.idf[j] * tf * (self.k1 + 1.0) / (tf + norm[idx])
        return out


class LocalCorpusSearch(SearchProvider):
    """Offline search over stored pages; :meth:`fetch` serves the stored page."""

    name = "local"

    def __init__(self, path: str | Path, *, policy: SourcePolicy | None = None) -> None:
        self.path = Path(path)
        self.policy = policy or SourcePolicy()
        self.errors: list[str] = []
        self.pages: list[tuple[str, str, bool]] = []  # (url, raw, is_html)
        if self.path.is_dir():
            for file in sorted(self.path.rglob("*")):
                if file.suffix.lower() in (".html", ".htm", ".txt"):
                    self._add_file(file)
                elif file.suffix.lower() == ".jsonl":
                    self._add_jsonl(file)
        elif self.path.exists():
            self._add_jsonl(self.path)
        else:
            raise SourceError(f"local search corpus not found: {self.path}")
        self._docs = [
            page_document(url, raw, source_type="other", is_html=is_html) for url, raw, is_html in self.pages
        ]
        self._by_url = {url: i for i, (url, _, _) in enumerate(self.pages)}
        self.index = BM25Index([d.text for d in self._docs])

    def _add_file(self, file: Path) -> None:
        raw = file.read_text(encoding="utf-8", errors="replace")
        is_html = file.suffix.lower() != ".txt"
        url = html_to_text(raw).meta.get("canonical") if is_html else None
        if not url:
            meta = html_to_text(raw).meta if is_html else {}
            url = meta.get("og:url") or file.resolve().as_uri()
        self.pages.append((url, raw, is_html))

    def _add_jsonl(self, file: Path) -> None:
        for line_no, rec, error in iter_jsonl(file, objects_only=True):
            if error is not None:
                self.errors.append(str(error))
                continue
            if "url" not in rec:
                self.errors.append(f"{file}:{line_no}: bad page record (no 'url')")
                continue
            url = str(rec["url"])
            if "html" in rec:
                self.pages.append((url, str(rec["html"]), True))
            elif "text" in rec:
                title = str(rec.get("title", ""))
                self.pages.append((url, f"{title}\n{rec['text']}" if title else str(rec["text"]), False))
            else:
                self.errors.append(f"{file}:{line_no}: page record has neither 'html' nor 'text'")

    def search(self, query: str, k: int = 10) -> list[SearchHit]:
        scores = self.index.scores(query)
        order = [int(i) for i in np.argsort(-scores, kind="stable") if scores[i] > 0][:k]
        hits = []
        for i in order:
            doc = self._docs[i]
            hits.append(
                SearchHit(
                    url=doc.source_ref,
                    title=doc.title,
                    snippet=doc.text[:200],
                    source_type=classify_url(doc.source_ref, None, self.policy),
                    score=float(scores[i]),
                )
            )
        return hits

    def fetch(self, url: str) -> Document | None:
        i = self._by_url.get(url)
        if i is None:
            return None
        source_type = classify_url(url, None, self.policy)
        if source_type is None:
            return None
        return self._docs[i].model_copy(update={"source_type": source_type})


def fetch_page(
    url: str,
    *,
    client: Any = None,
    timeout_s: float = 20.0,
    source_type: str = "other",
    max_bytes: int = 5_000_000,
) -> Document | None:
    """GET ``url`` with httpx and convert it to a web Document (``None`` on HTTP error/non-text)."""
    import httpx  # deferred: httpx (~60 ms), only fetching a live page needs it

    own = client is None
    client = client or httpx.Client(
        timeout=timeout_s, follow_redirects=True, headers={"User-Agent": "groundtrace-catalog-scout/0.1"}
    )
    try:
        response = client.get(url)
        response.raise_for_status()
    except httpx.HTTPError:
        return None
    finally:
        if own:
            client.close()
    ctype = response.headers.get("content-type", "text/html").lower()
    if not ("html" in ctype or "text" in ctype):
        return None
    body = response.content[:max_bytes].decode(response.encoding or "utf-8", errors="replace")
    return page_document(url, body, source_type=source_type, is_html="html" in ctype)


class SearxngSearch(SearchProvider):
    """``GET {base_url}/search?q=...&format=json``; pages fetched with httpx."""

    name = "searxng"

    def __init__(
        self,
        base_url: str,
        *,
        policy: SourcePolicy | None = None,
        timeout_s: float = 20.0,
        transport: Any = None,
    ) -> None:
        import httpx  # deferred: httpx (~60 ms), only a live search needs it

        self.base_url = base_url.rstrip("/")
        self.policy = policy or SourcePolicy()
        self.client = httpx.Client(
            timeout=timeout_s,
            follow_redirects=True,
            transport=transport,
            headers={"User-Agent": "groundtrace-catalog-scout/0.1"},
        )

    def search(self, query: str, k: int = 10) -> list[SearchHit]:
        import httpx  # deferred: httpx (~60 ms), only a live search needs it

        try:
            response = self.client.get(f"{self.base_url}/search", params={"q": query, "format": "json"})
            response.raise_for_status()
            payload = response.json()
        except (httpx.HTTPError, ValueError) as exc:
            raise SourceError(f"SearxNG search failed for {query!r} at {self.base_url}: {exc}") from exc
        hits = []
        for rank, item in enumerate(payload.get("results", [])[:k]):
            url = item.get("url")
            if not url:
                continue
            hits.append(
                SearchHit(
                    url=url,
                    title=item.get("title", ""),
                    snippet=item.get("content", ""),
                    source_type=classify_url(url, None, self.policy),
                    score=float(item.get("score", 1.0 / (rank + 1)) or 0.0),
                    metadata={"engine": item.get("engine")},
                )
            )
        return hits

    def fetch(self, url: str) -> Document | None:
        source_type = classify_url(url, None, self.policy)
        if source_type is None:
            return None
        return fetch_page(url, client=self.client, source_type=source_type)

    def close(self) -> None:
        self.client.close()


def make_search(spec: str | None, policy: SourcePolicy | None = None) -> SearchProvider | None:
    """A search provider from a spec string: ``local:PATH``, ``searxng:URL`` (any registered name with
    its argument), or ``None``/``""``/``none`` for no web search."""
    if spec is None or spec.strip().lower() in ("", "none", "off"):
        return None
    name, _, arg = spec.strip().partition(":")
    cls = SEARCH_PROVIDERS.get(name)
    if not arg:
        raise ValueError(
            f"search spec {spec!r} needs an argument, e.g. 'local:pages/' or 'searxng:http://host:8080'"
        )
    return cls(arg, policy=policy)
