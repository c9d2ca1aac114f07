"""The skeleton of an LLM baseline: prefilter → prompt from package files → structured call → clean-up.

One turn of an :class:`LLMSystem`:

1. **prefilter** — the pool ranked by the ``tfidf`` (default) or ``dense`` offline system (or kept in
   pool order with ``none``), POIs the user rejected last (the toolkit's rejection memory); the first
   ``max_candidates`` form the *shortlist* the model sees (closed pools of 8 are shown whole by default;
   open pools of 50–100 are cut);
2. **prompt** — ``prompts/system.txt`` plus the system's user template (``prompts/*.txt``,
   :class:`string.Template`); the dialogue, the candidate cards and every review text go in
   ``core.llm.fence.data_block`` blocks (data, never instructions). Candidates are shown under short keys
   ``P1..Pn`` (fewer tokens than POI ids). **Context budget** (:meth:`LLMSystem.fit`): when the context
   size is known — ``context_tokens``, else the client's ``n_ctx`` (the bundled local model: 2,048) —
   the shortlist shown is cut from its end until ``estimate_tokens(system) + estimate_tokens(user) +
   max_tokens`` fits (``core.llm.budget``), at least one candidate kept; the cut candidates follow in
   prefilter order. Room for a re-ask (the failed answer and the error appended) is not kept: reserving
   it cut the shortlist on most turns, and the bundled 135M model then looped to the token cap on 7 of
   9 turns instead of 2 (docs/crs-baselines.md); a re-ask that overflows fails the turn. Endpoints of
   unknown size get the whole shortlist;
3. **call** — ``client.complete(messages, schema=LLMAnswer)`` (re-asks on invalid JSON are the core
   client's; an answer that never validates raises ``SchemaMalformedError`` and the runner records the
   turn as failed — nothing is guessed);
4. **ranking** — the answer's keys mapped back to POI ids (a key ``P3``, a POI id or an exact name is
   accepted; anything else, e.g. an id outside the pool, is dropped), duplicates dropped, then the rest of
   the shortlist and of the pool in prefilter order: always a permutation of the pool;
5. **response** — :meth:`LLMSystem.finish` (identity here: the metrics judge the model's own citations;
   ``rag-citation`` overrides it with its verification).

The turn's usage (prompt/completion tokens and cost of every call, re-asks included) is returned as
:class:`~groundtrace.crs.systems.base.TurnUsage`; the runner records it with the latency per turn.

Options (``--system-arg``): ``llm`` (spec, as ``--llm``: ``local``, ``openai:MODEL``,
``http://host:port/v1#MODEL``; default ``$GROUNDTRACE_LLM``), ``prefilter`` (``tfidf|dense|none``),
``max_candidates`` (8), ``review_chars`` (160: characters of review text per snippet), ``max_tokens``
(300: completion cap), ``llm_cache`` (``true``: the core response cache; ``false`` to disable),
``context_tokens`` (the endpoint's context size for the budget; default: the client's ``n_ctx``, unknown
for remote endpoints).
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from groundtrace.core.llm.base import ChatMessage, Completion, LLMClient
from groundtrace.core.llm.budget import context_window, estimate_tokens
from groundtrace.core.llm.factory import make_llm
from groundtrace.core.llm.fence import data_block
from groundtrace.crs.systems.base import CRSSystem, SystemReply, TurnUsage, usage_on_failure
from groundtrace.crs.systems.baselines.dense import DenseSystem
from groundtrace.crs.systems.baselines.lexical import TfidfSystem
from groundtrace.crs.systems.predictions import CandidateCard, SystemInput, SystemOutput
from groundtrace.crs.systems.toolkit.base import RankingSystem, Turn, move_rejected_last
from groundtrace.crs.systems.toolkit.learning import Learns
from groundtrace.crs.systems.toolkit.memo import Memo
from groundtrace.crs.systems.toolkit.scoring import rank_by
from groundtrace.crs.systems.toolkit.state import track_state

PREFILTERS = ("tfidf", "dense", "none")
#: The reply is "at most two sentences"; the bound also lets a grammar-constrained local model stop.
MAX_RESPONSE_CHARS = 1000
#: Keys the model may rank (the shortlist's rest follows in prefilter order); bounds a looping model too.
MAX_RANKED = 10


class LLMAnswer(BaseModel):
    """What every LLM baseline asks the model for: candidate keys best first, and the reply."""

    model_config = ConfigDict(extra="ignore")
    ranking: list[str] = Field(max_length=MAX_RANKED, description="Candidate keys (P1, P2, ...), best first.")
    response: str = Field(
        max_length=MAX_RESPONSE_CHARS,
        description="The reply to the user; quotes copied exactly, each with its [Rn] tag.",
    )


@cache
def prompt_text(name: str) -> str:
    """The package prompt file ``prompts/NAME.txt``."""
    return (
        resources.files("groundtrace.crs.systems.llm").joinpath("prompts", f"{name}.txt").read_text("utf-8")
    )


def fill(name: str, **values: str) -> str:
    """``prompts/NAME.txt`` with ``$key`` placeholders replaced (unused placeholders become empty)."""
    text = string.Template(prompt_text(name)).safe_substitute(values)
    text = re.sub(r"\$[a-z_]+", "", text)
    return re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"


def attribute_text(key: str, value: object) -> str | None:
    """One attribute as shown on a card: ``wifi free``, ``kids`` (true flags), ``ambience casual``;
    ``None`` for false/empty values."""
    if value in (None, False, "", "no", "none", "False", [], {}):
        return None
    if value is True:
        return key
    if isinstance(value, list | tuple):
        return f"{key} {'/'.join(map(str, value[:3]))}"
    if isinstance(value, dict):
        on = [k for k, v in value.items() if v is True][:3]
        return f"{key} {'/'.join(on)}" if on else None
    return f"{key} {value}"


def card_line(key: str, card: CandidateCard) -> str:
    """``P1 | Name | Cat, Cat | $$ | 4.5 stars | wifi free, noise quiet`` (set attributes only, first 6)."""
    attrs = [t for t in (attribute_text(k, v) for k, v in card.attributes.items()) if t][:6]
    price = "$" * card.price_level if card.price_level else "-"
    parts = [key, card.name, ", ".join(card.categories[:3]), price, f"{card.stars:g} stars", ", ".join(attrs)]
    return " | ".join(p for p in parts if p)


def dialogue_text(inp: SystemInput) -> str:
    """The history as ``User: ...`` / ``Assistant: ...`` lines."""
    return "\n".join(f"{'User' if t.role == 'user' else 'Assistant'}: {t.text}" for t in inp.history)


@dataclass
class Shortlist:
    """The candidates the model sees, under their keys, and the pool in prefilter order."""

    keys: dict[str, str]  # key -> poi id
    order: list[str]  # the whole pool in prefilter order

    @property
    def ids(self) -> list[str]:
        return list(self.keys.values())

    def head(self, n: int) -> Shortlist:
        """The first ``n`` candidates under their keys (the pool order unchanged)."""
        return Shortlist(dict(list(self.keys.items())[:n]), self.order)


def resolve_keys(answer: list[str], keys: dict[str, str], cards: dict[str, CandidateCard]) -> list[str]:
    """The POI ids ``answer`` names, in order, once each: a key (``P3``), a pool id or an exact name;
    anything else (an id outside the pool, free text) is dropped."""
    by_name = {c.name.strip().lower(): pid for pid, c in cards.items() if c.name}
    ids: list[str] = []
    for raw in answer:
        item = str(raw).strip().strip("[]\"'").strip()
        pid = keys.get(item.upper()) or (item if item in cards else by_name.get(item.lower()))
        if pid is not None and pid not in ids:
            ids.append(pid)
    return ids


def map_ranking(answer: list[str], shortlist: Shortlist, cards: dict[str, CandidateCard]) -> list[str]:
    """The answer's keys as POI ids (module docstring step 4): a permutation of the pool."""
    ranked = resolve_keys(answer, shortlist.keys, cards)
    ranked += [p for p in shortlist.ids if p not in ranked]
    return ranked + [p for p in shortlist.order if p not in ranked]


def usage_of(completions: list[Completion]) -> TurnUsage:
    """The summed token and cost usage of a turn's calls."""
    return TurnUsage(
        prompt_tokens=sum(c.usage.prompt_tokens for c in completions),
        completion_tokens=sum(c.usage.completion_tokens for c in completions),
        cost_usd=sum(c.usage.cost_usd for c in completions),
    )


class LLMSystem(Learns, CRSSystem):
    """Base of the four LLM baselines (module docstring). Subclasses build :meth:`user_prompt`."""

    #: One client per worker (the local llama.cpp model is not thread-safe).
    thread_safe: ClassVar[bool] = False
    template: ClassVar[str] = "zero_shot"

    def __init__(
        self,
        *,
        llm: str | None = None,
        prefilter: str = "tfidf",
        max_candidates: int = 8,
        review_chars: int = 160,
        max_tokens: int = 300,
        llm_cache: bool = True,
        client: LLMClient | None = None,
        encoder: Any = None,
        context_tokens: int | None = None,
    ) -> None:
        if prefilter not in PREFILTERS:
            raise ValueError(f"prefilter must be one of {', '.join(PREFILTERS)}, got {prefilter!r}")
        if max_candidates < 1 or review_chars < 20 or max_tokens < 16:
            raise ValueError("max_candidates must be >= 1, review_chars >= 20, max_tokens >= 16")
        if context_tokens is not None and context_tokens < 256:
            raise ValueError("context_tokens must be >= 256")
        self.context_tokens = context_tokens
        self.llm, self.prefilter, self.max_candidates = llm, prefilter, max_candidates
        self.review_chars, self.max_tokens, self.llm_cache = review_chars, max_tokens, llm_cache
        self._client = client
        self._encoder = encoder
        self._ranker: RankingSystem | None = None
        self.memo = Memo()  # shared with the prefilter: sentences and term vectors computed once

    def config(self) -> dict[str, Any]:
        out = {
            "llm": self.llm if self._client is None else getattr(self._client, "model", "client"),
            "prefilter": self.prefilter,
            "max_candidates": self.max_candidates,
            "review_chars": self.review_chars,
            "max_tokens": self.max_tokens,
        }
        if self.context_tokens is not None:  # only when set: earlier run keys stay valid
            out["context_tokens"] = self.context_tokens
        return {**out, **self.understanding_config()}

    # -- pieces ----------------------------------------------------------------------------------------
    @property
    def client(self) -> LLMClient:
        if self._client is None:
            self._client = make_llm(self.llm, no_cache=not self.llm_cache)
        return self._client

    def ranker(self) -> RankingSystem | None:
        """The prefilter's offline system (built once)."""
        if self.prefilter == "none":
            return None
        if self._ranker is None:
            if self.prefilter == "dense":
                self._ranker = DenseSystem(encoder=self._encoder)
            else:
                self._ranker = TfidfSystem()
            self._ranker.memo = self.memo
        return self._ranker

    def shortlist(self, turn: Turn) -> Shortlist:
        """Module docstring step 1 (POIs the user rejected go last, as in the prefilter system's ranking)."""
        ranker = self.ranker()
        order = rank_by(ranker.score(turn), turn.pool) if ranker is not None else list(turn.pool)
        order = move_rejected_last(order, turn.state.rejected)
        return Shortlist({f"P{i + 1}": pid for i, pid in enumerate(order[: self.max_candidates])}, order)

    def snippet(self, text: str) -> str:
        text = " ".join(text.split())
        return (
            text if len(text) <= self.review_chars else text[: self.review_chars].rsplit(" ", 1)[0] + " ..."
        )

    def blocks(self, turn: Turn, shortlist: Shortlist) -> dict[str, str]:
        """The shared prompt pieces: ``dialogue`` and ``candidates`` DATA blocks."""
        cards = "\n".join(card_line(k, turn.cards[p]) for k, p in shortlist.keys.items())
        return {
            "dialogue": data_block("DIALOGUE", dialogue_text(turn.inp)),
            "candidates": data_block("CANDIDATES", cards),
        }

    def user_prompt(self, turn: Turn, shortlist: Shortlist) -> str:
        """The user message of the generation call (override per system)."""
        return fill(self.template, **self.blocks(turn, shortlist))

    def fit(
        self, build: Callable[[Shortlist], str], shortlist: Shortlist, system: str = "system"
    ) -> tuple[str, Shortlist]:
        """``(user message, shortlist shown)`` within the context budget (module docstring, step 2):
        ``build(shortlist)`` on ever shorter heads of ``shortlist`` until it fits or one is left."""
        user = build(shortlist)
        limit = self.context_tokens or context_window(self.client)
        if limit is None:
            return user, shortlist
        reserved = estimate_tokens(prompt_text(system)) + self.max_tokens
        while reserved + estimate_tokens(user) > limit and len(shortlist.keys) > 1:
            shortlist = shortlist.head(len(shortlist.keys) - 1)
            user = build(shortlist)
        return user, shortlist

    def ask(self, user: str, completions: list[Completion], system: str = "system") -> LLMAnswer:
        """One structured call; its completion is appended to ``completions`` (the turn's usage)."""
        messages = [
            ChatMessage(role="system", content=prompt_text(system)),
            ChatMessage(role="user", content=user),
        ]
        done = self.client.complete(messages, schema=LLMAnswer, max_tokens=self.max_tokens)
        completions.append(done)
        return done.parsed

    def finish(self, turn: Turn, shortlist: Shortlist, ranking: list[str], response: str) -> str:
        """The response as returned (override to post-process)."""
        return response

    def respond(self, inp: SystemInput) -> SystemReply:
        """:meth:`answer_turn`, with the usage of a failing turn attached to its exception (the ledger)."""
        with usage_on_failure(self.client):
            return self.answer_turn(inp)

    def answer_turn(self, inp: SystemInput) -> SystemReply:
        """One turn (module docstring); subclasses with other steps override this."""
        turn = Turn(inp, track_state(inp, self.memo.understanding), self.memo)
        user, shortlist = self.fit(lambda s: self.user_prompt(turn, s), self.shortlist(turn))
        completions: list[Completion] = []
        answer = self.ask(user, completions)
        ranking = map_ranking(answer.ranking, shortlist, turn.cards)
        response = self.finish(turn, shortlist, ranking, answer.response)
        return SystemReply(SystemOutput(ranking=ranking, response=response), usage_of(completions))
