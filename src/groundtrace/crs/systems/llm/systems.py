"""The four LLM baselines: ``llm-zero-shot``, ``llm-dst``, ``rag-citation``, ``multi-review-synthesis``.

Each is an :class:`~.base.LLMSystem` (prefilter, package prompts, structured answer, usage per turn);
what differs is what the model is shown and what happens to its answer — see each class.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from groundtrace.core.evidence.quotes import GROUNDED_THRESHOLD, quote_score
from groundtrace.core.llm.base import ChatMessage, Completion
from groundtrace.core.llm.fence import data_block
from groundtrace.crs.kb.geo import haversine_km
from groundtrace.crs.systems.base import SystemReply
from groundtrace.crs.systems.llm.base import (
    LLMSystem,
    Shortlist,
    fill,
    map_ranking,
    prompt_text,
    resolve_keys,
    usage_of,
)
from groundtrace.crs.systems.predictions import SystemInput, SystemOutput
from groundtrace.crs.systems.reference import TaggedSentence
from groundtrace.crs.systems.toolkit.base import Turn, move_rejected_last
from groundtrace.crs.systems.toolkit.state import parse_constraints, track_state
from groundtrace.crs.systems.toolkit.structured import anchor_of, constraint_match
from groundtrace.crs.systems.understanding.language import NEGATION_RE

QUOTE_TAG = re.compile(r'"([^"]{2,})"\s*\[(R\d+)\]')
TAG = re.compile(r"\[(R\d+)\]")


class LLMZeroShotSystem(LLMSystem):
    """Cards + dialogue + one review excerpt per candidate, minimal prompt (``prompts/zero_shot.txt``).

    ``proximity_graph=true`` (the paper's ablation) adds, per candidate, its ``graph_k`` (2) nearest
    other candidates with their haversine distance: ``P1 -> P4 0.3 km, P2 0.8 km``.
    """

    template = "zero_shot"

    def __init__(self, *, proximity_graph: bool = False, graph_k: int = 2, **kw: Any) -> None:
        super().__init__(**kw)
        self.proximity_graph, self.graph_k = proximity_graph, graph_k

    def config(self) -> dict[str, Any]:
        return {**super().config(), "proximity_graph": self.proximity_graph, "graph_k": self.graph_k}

    def graph(self, turn: Turn, shortlist: Shortlist) -> str:
        """The proximity-graph DATA block (class docstring)."""
        lines = []
        for key, pid in shortlist.keys.items():
            a = turn.cards[pid]
            near = sorted(
                (haversine_km(a.lat, a.lon, turn.cards[q].lat, turn.cards[q].lon), k)
                for k, q in shortlist.keys.items()
                if q != pid
            )[: self.graph_k]
            lines.append(f"{key} -> " + ", ".join(f"{k} {d:.1f} km" for d, k in near))
        return data_block("PROXIMITY", "\n".join(lines))

    def user_prompt(self, turn: Turn, shortlist: Shortlist) -> str:
        excerpts = []
        for key, pid in shortlist.keys.items():
            reviews = turn.reviews.get(pid, [])
            if reviews:
                excerpts.append(f"{key} [{reviews[0].tag}] {self.snippet(reviews[0].text)}")
        blocks = self.blocks(turn, shortlist)
        blocks["candidates"] += "\n" + data_block("REVIEWS", "\n".join(excerpts))
        if self.proximity_graph:
            blocks["graph"] = self.graph(turn, shortlist)
        return fill(self.template, **blocks)


def retrieve_snippets(turn: Turn, pid: str, k: int, query: str | None = None) -> list[TaggedSentence]:
    """The ``k`` review sentences of ``pid`` most similar (TF-IDF) to the user's positive text."""
    sentences = turn.sentences(pid)
    if not sentences or k <= 0:
        return []
    sims = turn.memo.index.scores_texts(
        [s.text for s in sentences], query if query is not None else turn.query
    )
    order = sorted(range(len(sentences)), key=lambda i: (-sims[i], i))
    return [sentences[i] for i in order[:k]]


def verify_citations(response: str, allowed: dict[str, str]) -> str:
    """``response`` keeping only citations of the offered snippets, verbatim.

    ``allowed`` maps tag → the text the model may quote under it. A ``"quote" [Rn]`` whose tag is not
    offered, or whose quote scores below ``GROUNDED_THRESHOLD`` (``core.evidence.quotes.quote_score``)
    against that text, is removed with its tag; a bare ``[Rn]`` left without a quote is removed too.
    """

    def keep_pair(m: re.Match[str]) -> str:
        text = allowed.get(m.group(2))
        if text is not None and quote_score(m.group(1), text) >= GROUNDED_THRESHOLD:
            return f"\x00{m.group(1)}\x01{m.group(2)}\x02"
        return ""

    out = QUOTE_TAG.sub(keep_pair, response)
    out = TAG.sub("", out)
    out = re.sub("\x00([^\x01]*)\x01([^\x02]*)\x02", r'"\1" [\2]', out)
    return re.sub(r"\s{2,}", " ", out).strip()


class RagCitationSystem(LLMSystem):
    """Retrieves ``snippets`` (2) review sentences per shortlisted candidate (TF-IDF vs the user's turns)
    and asks for an answer citing only them verbatim (``prompts/rag_citation.txt``); the constraint is
    enforced after the call by :func:`verify_citations` (unverifiable quotes and stray tags removed)."""

    template = "rag_citation"

    def __init__(self, *, snippets: int = 2, **kw: Any) -> None:
        super().__init__(**kw)
        self.snippets = snippets

    def config(self) -> dict[str, Any]:
        return {**super().config(), "snippets": self.snippets}

    def offered(self, turn: Turn, shortlist: Shortlist) -> list[tuple[str, TaggedSentence]]:
        key = "rag:offered:" + ",".join(shortlist.keys)  # per shortlist shown (the context budget cuts it)
        if key not in turn.cache:
            turn.cache[key] = [
                (k, s)
                for k, pid in shortlist.keys.items()
                for s in retrieve_snippets(turn, pid, self.snippets)
            ]
        return turn.cache[key]

    def user_prompt(self, turn: Turn, shortlist: Shortlist) -> str:
        lines = [f"{k} [{s.tag}] {s.text}" for k, s in self.offered(turn, shortlist)]
        return fill(
            self.template, **self.blocks(turn, shortlist), snippets=data_block("SNIPPETS", "\n".join(lines))
        )

    def finish(self, turn: Turn, shortlist: Shortlist, ranking: list[str], response: str) -> str:
        allowed: dict[str, str] = {}
        for _k, s in self.offered(turn, shortlist):
            allowed[s.tag] = (allowed.get(s.tag, "") + " " + s.text).strip()
        return verify_citations(response, allowed)


GENERIC_ASPECTS: dict[str, re.Pattern[str]] = {
    "food": re.compile(r"\b(?:food|dish|dishes|menu|taste|tasty|delicious|flavou?r)", re.IGNORECASE),
    "service": re.compile(r"\b(?:service|staff|friendly|rude|waiter|waitress|server)", re.IGNORECASE),
    "atmosphere": re.compile(r"\b(?:atmosphere|ambien|quiet|noisy|loud|cozy|cosy|vibe|decor)", re.IGNORECASE),
    "value": re.compile(r"\b(?:price|cheap|expensive|value|worth|overpriced)", re.IGNORECASE),
}


def aspect_summary(turn: Turn, pid: str, aspects: dict[str, Callable[[str], bool]]) -> list[str]:
    """Per aspect: ``name +pos/-neg e.g. "sentence" [Rn]`` over all of ``pid``'s review sentences.

    ``aspects``: name → whether a sentence mentions it. A sentence mentioning the aspect counts negative
    when its stored stance is negative or it carries a
    negation cue, else positive; the example (provenance) is the first positive one, else the first.
    """
    sentences = turn.sentences(pid)
    out = []
    for name, mentions in aspects.items():
        hits = [s for s in sentences if mentions(s.text)]
        if not hits:
            continue
        neg = [s for s in hits if s.polarity < 0 or NEGATION_RE.search(s.text)]
        pos = [s for s in hits if s not in neg]
        example = (pos or neg)[0]
        out.append(f'{name} +{len(pos)}/-{len(neg)} e.g. "{example.text}" [{example.tag}]')
    return out


def _mentions(understanding: Any, c: Any, text: str) -> bool:
    return bool(understanding.mentions(text, c))


class MultiReviewSynthesisSystem(LLMSystem):
    """Aspect summaries synthesised across all of a candidate's reviews, each with its provenance tag
    (:func:`aspect_summary`: the user's stated aspects plus food, service, atmosphere, value), then one
    call that ranks and explains from the summaries (``prompts/synthesis.txt``)."""

    template = "synthesis"

    def user_prompt(self, turn: Turn, shortlist: Shortlist) -> str:
        understanding = turn.memo.understanding
        aspects: dict[str, Callable[[str], bool]] = {}
        for c in turn.state.constraints:
            if understanding.addressable(c):
                aspects[c.label or str(c.value)] = partial(_mentions, understanding, c)
        aspects.update({k: v.search for k, v in GENERIC_ASPECTS.items() if k not in aspects})  # type: ignore[misc]
        lines = []
        for key, pid in shortlist.keys.items():
            summary = aspect_summary(turn, pid, aspects)[:4]
            lines.append(f"{key}: " + ("; ".join(summary) if summary else "no aspect mentioned"))
        return fill(
            self.template, **self.blocks(turn, shortlist), aspects=data_block("ASPECTS", "\n".join(lines))
        )


#: Bounds of the tracking answer: like ``LLMAnswer``'s, they let a grammar-constrained local model stop
#: (unbounded lists of unbounded strings made SmolLM2-135M loop to the token cap on every ``llm-dst``
#: turn); at most 11 phrases of 48 characters fit a 200-token completion.
PHRASE_CHARS, MAX_WANTS, MAX_AVOID, MAX_REJECTED = 48, 5, 3, 3
Phrase = Annotated[str, Field(max_length=PHRASE_CHARS)]


class TrackedState(BaseModel):
    """The ``llm-dst`` tracking call's answer (bounded: see ``PHRASE_CHARS``)."""

    model_config = ConfigDict(extra="ignore")
    wants: list[Phrase] = Field(
        default_factory=list, max_length=MAX_WANTS, description="Short phrases the user asks for now."
    )
    avoid: list[Phrase] = Field(
        default_factory=list, max_length=MAX_AVOID, description="Short phrases the user does not want."
    )
    rejected: list[Phrase] = Field(
        default_factory=list, max_length=MAX_REJECTED, description="Candidate keys or names turned down."
    )


class LLMDSTSystem(LLMSystem):
    """Two calls per turn. (1) dialogue-state tracking into slots — ``wants``, ``avoid``, ``rejected``
    (:class:`TrackedState`, ``prompts/dst.txt``); (2) generation over the candidates left after
    filtering (``prompts/dst_generate.txt``).

    Filtering: the tracked rejected candidates go; the ``wants`` phrases are parsed into constraints by
    the toolkit's lexicon parser and the candidates meeting the largest share of them
    (``constraint_match`` on the cards: price, attributes, distance, categories) are kept. Ranking: the
    model's order of the kept ones, then the other shortlisted, then the rest of the pool, rejected last.
    """

    template = "dst_generate"

    def track(self, turn: Turn, shortlist: Shortlist, completions: list[Completion]) -> TrackedState:
        """Call 1 (class docstring)."""
        user, _shown = self.fit(lambda s: fill("dst_user", **self.blocks(turn, s)), shortlist, system="dst")
        messages = [
            ChatMessage(role="system", content=prompt_text("dst")),
            ChatMessage(role="user", content=user),
        ]
        done = self.client.complete(messages, schema=TrackedState, max_tokens=self.max_tokens)
        completions.append(done)
        return done.parsed

    def answer_turn(self, inp: SystemInput) -> SystemReply:
        turn = Turn(inp, track_state(inp, self.memo.understanding), self.memo)
        shortlist = self.shortlist(turn)
        completions: list[Completion] = []
        state = self.track(turn, shortlist, completions)
        rejected = set(resolve_keys(state.rejected, shortlist.keys, turn.cards))
        constraints = parse_constraints(" ; ".join(state.wants), turn.inp.candidates, self.memo.understanding)
        anchor = anchor_of(turn.inp.anchor)
        alive = [p for p in shortlist.ids if p not in rejected] or shortlist.ids
        match = {p: constraint_match(turn.cards[p], constraints, anchor) for p in alive}
        best = max(match.values())
        kept = Shortlist({f"P{i + 1}": p for i, p in enumerate(p for p in alive if match[p] == best)}, [])
        summary = "\n".join(
            [f"wants: {', '.join(state.wants) or '-'}", f"avoid: {', '.join(state.avoid) or '-'}"]
        )
        user, kept = self.fit(
            lambda s: fill(self.template, **self.blocks(turn, s), state=data_block("STATE", summary)), kept
        )
        answer = self.ask(user, completions)
        ranking = map_ranking(answer.ranking, kept, turn.cards)
        ranking += [p for p in shortlist.order if p not in ranking]
        ranking = move_rejected_last(ranking, rejected)
        return SystemReply(SystemOutput(ranking=ranking, response=answer.response), usage_of(completions))
