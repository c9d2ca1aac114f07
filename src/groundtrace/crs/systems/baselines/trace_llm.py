"""The optional LLM step of ``trace-hybrid``: rerank the tied head, phrase the reply, verify it.

One structured call per turn (``prompts/trace_hybrid.txt``, the core LLM client, JSON ``LLMAnswer``):

* **head** — the non-rejected candidates tied with the top on the hard filter (same share of constraints
  met), at most ``head`` of them, in ``trace-hybrid``'s order, shown as cards under keys ``P1..Pk`` with,
  per candidate, its *verified* evidence (``[Rn] sentence``); dialogue, cards and evidence sit in DATA
  blocks (data, never instructions);
* **rerank** (``rerank=true``) — the model's order of the head keys (unknown keys, ids or names of other
  POIs dropped; the rest of the head follows in the offline order), then the rest of the offline ranking:
  the model can never promote a candidate that meets fewer constraints, nor a rejected one;
* **phrasing** (``phrasing=true``) — the model's reply, through the same verification pass as the offline
  quotes (:func:`.trace_hybrid.verified`: found in the tagged review ≥ 0.80, a review of the recommended
  POI, non-negative stance, no negation cue, and expressing a tracked constraint — or, with none, positive).
  Failing quotes are removed with their tags, stray tags too. The reply is kept only when it still names
  the recommended POI and cites at least one verified quote whenever the offline answer has one;
  otherwise the offline template answer is used.

A call that fails (transport, or an answer that never validates) fails the turn, as for the LLM baselines
— unless ``trace-hybrid`` runs with ``llm_fallback=true``: then the turn gets the verified offline answer
and a ``note`` (``Prediction.note``, counted in ``run.json`` ``notes``). Tokens, cost and latency go to the
run ledger either way.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from groundtrace.core.llm.base import ChatMessage
from groundtrace.core.llm.factory import make_llm
from groundtrace.core.llm.fence import data_block
from groundtrace.crs.systems.base import SystemReply, usage_on_failure
from groundtrace.crs.systems.llm.base import (
    MAX_RESPONSE_CHARS,
    LLMAnswer,
    card_line,
    dialogue_text,
    fill,
    prompt_text,
    resolve_keys,
    usage_of,
)
from groundtrace.crs.systems.predictions import SystemOutput
from groundtrace.crs.systems.reference import render_response
from groundtrace.crs.systems.toolkit.base import Turn
from groundtrace.crs.systems.toolkit.verify import verified

if TYPE_CHECKING:
    from groundtrace.crs.systems.baselines.trace_hybrid import TraceHybridSystem

QUOTE_TAG = re.compile(r'"([^"]{2,})"\s*\[(R\d+)\]')
TAG = re.compile(r"\[(R\d+)\]")


class TraceLLM:
    """The LLM step (module docstring); ``spec`` as ``--llm`` (``local``, ``openai:M``, ``http://h:p/v1#M``)."""

    def __init__(
        self,
        spec: str | None,
        *,
        client: Any = None,
        rerank: bool = True,
        phrasing: bool = True,
        head: int = 5,
        max_tokens: int = 300,
        cache: bool = True,
    ) -> None:
        if head < 1 or max_tokens < 16:
            raise ValueError("llm_head must be >= 1 and max_tokens >= 16")
        if not (rerank or phrasing):
            raise ValueError("with llm set, at least one of llm_rerank / llm_phrasing must be true")
        self.spec, self._client = spec, client
        self.rerank, self.phrasing, self.head = rerank, phrasing, head
        self.max_tokens, self.cache = max_tokens, cache

    def config(self) -> dict[str, Any]:
        model = self.spec if self._client is None else getattr(self._client, "model", "client")
        return {"model": model, "rerank": self.rerank, "phrasing": self.phrasing, "head": self.head,
                "max_tokens": self.max_tokens}  # fmt: skip

    @property
    def client(self) -> Any:
        if self._client is None:
            self._client = make_llm(self.spec, no_cache=not self.cache)
        return self._client

    def head_of(self, system: TraceHybridSystem, turn: Turn, ranking: list[str]) -> list[str]:
        """The candidates the model may reorder (module docstring, *head*)."""
        keys = system.keys(turn)
        best = keys[ranking[0]][0]
        tied = [p for p in ranking if keys[p][0] == best and p not in turn.state.rejected]
        return tied[: self.head]

    def respond(self, system: TraceHybridSystem, turn: Turn, ranking: list[str]) -> SystemReply:
        head = self.head_of(system, turn, ranking) or ranking[:1]
        keys = {f"P{i + 1}": p for i, p in enumerate(head)}
        evidence = {p: system.evidence(turn, p) for p in head}
        lines = [f"{k} [{e.sentence.tag}] {e.sentence.text}" for k, p in keys.items() for e in evidence[p]]
        user = fill(
            "trace_hybrid",
            dialogue=data_block("DIALOGUE", dialogue_text(turn.inp)),
            candidates=data_block(
                "CANDIDATES", "\n".join(card_line(k, turn.cards[p]) for k, p in keys.items())
            ),
            evidence=data_block("EVIDENCE", "\n".join(lines) or "(none)"),
        )
        messages = [
            ChatMessage(role="system", content=prompt_text("system")),
            ChatMessage(role="user", content=user),
        ]
        with usage_on_failure(self.client):  # a failing call's tokens still reach the ledger
            done = self.client.complete(messages, schema=LLMAnswer, max_tokens=self.max_tokens)
        answer: LLMAnswer = done.parsed
        if self.rerank:
            ordered = [p for p in resolve_keys(answer.ranking, keys, turn.cards) if p in head]
            ordered += [p for p in head if p not in ordered]
            ranking = ordered + [p for p in ranking if p not in ordered]
        top = ranking[0]
        offline = [e.sentence for e in (evidence[top] if top in evidence else system.evidence(turn, top))]
        response = render_response(turn.cards.get(top), top, offline)
        if self.phrasing:
            reply = verify_reply(turn, top, answer.response, {(q.text, q.tag) for q in offline})
            if reply is not None and (not offline or QUOTE_TAG.search(reply)):
                response = reply
        return SystemReply(SystemOutput(ranking=ranking, response=response), usage_of([done]))


def verify_reply(turn: Turn, top: str, reply: str, offered: set[tuple[str, str]]) -> str | None:
    """``reply`` with every quote that fails the verification pass removed (with its tag), stray tags
    removed; None when it no longer names ``top`` (module docstring, *phrasing*). A quote passes when it is
    one of the ``offered`` (already verified) ``(text, tag)`` pairs, or passes ``verified`` for a tracked
    constraint (with none tracked: as positive praise)."""
    by_tag = {r.tag: r for r in turn.reviews.get(top, [])}
    constraints = turn.state.constraints

    def passes(quote: str, tag: str) -> bool:
        if (quote.strip(), tag) in offered:
            return True  # offered evidence passed the verification pass already
        if constraints:
            return any(verified(quote, tag, by_tag, top, c, turn.memo.understanding) for c in constraints)
        return verified(quote, tag, by_tag, top, None)

    def keep(m: re.Match[str]) -> str:
        quote, tag = m.group(1), m.group(2)
        return f"\x00{quote}\x01{tag}\x02" if passes(quote, tag) else ""

    out = QUOTE_TAG.sub(keep, reply[:MAX_RESPONSE_CHARS])
    out = TAG.sub("", out)
    out = re.sub("\x00([^\x01]*)\x01([^\x02]*)\x02", r'"\1" [\2]', out)
    out = re.sub(r"\s{2,}", " ", out).strip()
    name = (turn.cards[top].name or "").strip().lower()
    return out if name and name in out.lower() else None
