"""``trace-hybrid``: the lexicographic ranking by hand, the verification pass, evidence without filler, and
the optional LLM step end to end against the local OpenAI-wire server (rerank inside the tied head only;
replies verified: paraphrases, wrong tags, unknown tags and other POIs' quotes removed)."""

from __future__ import annotations

import json
import re

import pytest

from groundtrace.core.llm.wire_server import Reply, WireServer
from groundtrace.crs.evaluation.inputs import system_inputs
from groundtrace.crs.evaluation.runner import run_system
from groundtrace.crs.schema import Constraint
from groundtrace.crs.systems import build_system
from groundtrace.crs.systems.baselines.trace_hybrid import verified
from groundtrace.crs.systems.predictions import CandidateCard, HistoryTurn, SystemInput, TaggedReview
from tests.crs.report.demo_data import make_demo

QUOTE_TAG = re.compile(r'"([^"]+)" \[(R\d+)\]')


def _card(pid: str, stars: float, noise: str, outdoor: bool) -> CandidateCard:
    return CandidateCard(
        poi_id=pid,
        name=f"Place {pid.upper()}",
        city="X",
        poi_type="restaurant",
        categories=["Restaurants"],
        stars=stars,
        lat=0.0,
        lon=0.0,
        attributes={"noise": noise, "outdoor_seating": outdoor},
    )


def _review(tag: str, pid: str, sentences: list[tuple[str, int]]) -> TaggedReview:
    text, stance, at = "", [], 0
    for s, polarity in sentences:
        stance.append((at, at + len(s), polarity))
        text += s + " "
        at = len(text)
    return TaggedReview(tag=tag, review_id=f"rev-{tag}", poi_id=pid, text=text.strip(), stance=stance)


QUIET_OK = ("A calm and quiet dining room.", 1)
PATIO_OK = ("We loved the sunny patio.", 1)
FOOD = ("The soup was fine.", 0)

# a, b, d meet both stated constraints (quiet, outdoor); c meets one. Reviews back both constraints for
# a and d, only one for b (b has the most stars). Expected: d (backed, 4.5) > a (backed, 4.0) > b > c.
CARDS = [
    _card("a", 4.0, "quiet", True),
    _card("b", 5.0, "quiet", True),
    _card("c", 5.0, "loud", True),
    _card("d", 4.5, "quiet", True),
]
REVIEWS = [
    _review("R1", "a", [QUIET_OK, PATIO_OK, FOOD]),
    _review("R2", "b", [QUIET_OK, FOOD]),
    _review("R3", "c", [QUIET_OK, PATIO_OK]),
    _review("R4", "d", [("Quiet enough to talk, no music at all.", 0), QUIET_OK, PATIO_OK]),
    _review("R5", "d", [("The patio was dirty and the service rude.", -1)]),
]


def _input(history: list[tuple[str, str, str]]) -> SystemInput:
    return SystemInput(
        dialogue_id="d1",
        turn_index=len(history),
        setting="closed",
        city="X",
        poi_type="restaurant",
        history=[HistoryTurn(role=r, act=a, text=t) for r, a, t in history],
        candidates=CARDS,
        reviews=REVIEWS,
    )


ASK = ("user", "request", "A quiet restaurant with outdoor seating, please.")


def test_ranking_is_met_then_backed_then_stars_and_rejected_last() -> None:
    system = build_system("trace-hybrid", dense=False)
    assert system.respond(_input([ASK])).ranking == ["d", "a", "b", "c"]
    rejected = [ASK, ("system", "recommend", "Try Place D."), ("user", "reject_and_refine", "Not Place D.")]
    assert system.respond(_input(rejected)).ranking == ["a", "b", "c", "d"]


def test_answer_quotes_one_supporting_sentence_per_constraint_never_a_complaint() -> None:
    out = build_system("trace-hybrid", dense=False).respond(_input([ASK]))
    quotes = QUOTE_TAG.findall(out.response)
    # d: quiet -> the positive "calm and quiet" (not the neutral, negated "no music" one); outdoor -> patio
    assert sorted(quotes) == sorted([(QUIET_OK[0], "R4"), (PATIO_OK[0], "R4")])
    assert "dirty" not in out.response


def test_no_filler_quotes_and_praise_only_without_support() -> None:
    system = build_system("trace-hybrid", dense=False, max_quotes=3)
    wifi = ("user", "request", "Somewhere with free wifi and outdoor seating.")
    quotes = QUOTE_TAG.findall(system.respond(_input([wifi])).response)
    assert [q for q, _t in quotes] == [PATIO_OK[0]]  # wifi has no support: no third, unrelated quote
    plain = ("user", "request", "Any good place to eat?")
    out = system.respond(_input([plain]))
    assert len(QUOTE_TAG.findall(out.response)) == 1  # nothing stated: one positive sentence


def test_verification_pass_by_hand() -> None:
    by_tag = {r.tag: r for r in REVIEWS}
    quiet = Constraint(kind="noise_max", value="quiet", label="quiet")
    assert verified(QUIET_OK[0], "R4", by_tag, "d", quiet)
    assert not verified(QUIET_OK[0], "R1", by_tag, "d", quiet)  # a review of another POI
    assert not verified("A calm, peaceful and silent hall.", "R4", by_tag, "d", quiet)  # not in the review
    assert not verified("Quiet enough to talk, no music at all.", "R4", by_tag, "d", quiet)  # negation cue
    assert not verified("The patio was dirty and the service rude.", "R5", by_tag, "d", None)  # negative
    assert not verified(PATIO_OK[0], "R4", by_tag, "d", quiet)  # does not express the constraint
    assert verified(PATIO_OK[0], "R4", by_tag, "d", None)  # positive praise
    assert not verified(QUIET_OK[0], "R9", by_tag, "d", quiet)  # unknown tag


# -- the LLM step ----------------------------------------------------------------------------------------
KEYS = re.compile(r"^(P\d+) \| ([^|]+) \|", re.MULTILINE)
EVIDENCE = re.compile(r"^(P\d+) \[(R\d+)\] (.+)$", re.MULTILINE)


def _user(request: dict) -> str:
    return request["messages"][-1]["content"]


def _llm(server: WireServer, **kw):
    return build_system("trace-hybrid", dense=False, llm=f"{server.base_url}#scripted", llm_cache=False, **kw)


def reverse_and_quote(request: dict) -> str:
    """Reverses the head and recommends its new first choice with one offered quote, a paraphrase, a
    quote under another candidate's tag and an unknown tag."""
    text = _user(request)
    keys = KEYS.findall(text)
    order = [k for k, _ in reversed(keys)]
    first_name = dict(keys)[order[0]].strip()
    mine = [(t, s) for k, t, s in EVIDENCE.findall(text) if k == order[0]]
    other = [(t, s) for k, t, s in EVIDENCE.findall(text) if k != order[0]]
    parts = [f"Go for {first_name}."]
    if mine:
        parts.append(f'"{mine[0][1]}" [{mine[0][0]}].')
        parts.append(f'"Reviewers adore the calm, peaceful mood" [{mine[0][0]}].')
    if other:
        parts.append(f'"{other[0][1]}" [{other[0][0]}].')
    parts.append("See [R999].")
    return json.dumps({"ranking": order, "response": " ".join(parts)})


def test_llm_reranks_only_the_tied_head_and_its_reply_is_verified() -> None:
    with WireServer(reverse_and_quote) as server:
        reply = _llm(server).respond(_input([ASK]))
        request = _user(server.requests[0])
    # head = d, a, b (all meet both constraints); c (meets one) is never shown nor promoted
    assert [k for k, _ in KEYS.findall(request)] == ["P1", "P2", "P3"]
    assert "<<<DATA EVIDENCE>>>" in request and "<<<DATA DIALOGUE>>>" in request
    out = reply.output
    assert out.ranking == ["b", "a", "d", "c"]
    assert out.response.startswith("Go for Place B.")
    assert QUOTE_TAG.findall(out.response) == [(QUIET_OK[0], "R2")]  # only the verified, own quote
    assert "[R999]" not in out.response and "adore" not in out.response
    assert reply.usage.prompt_tokens > 0 and reply.usage.completion_tokens > 0


def test_llm_reply_not_naming_the_pick_falls_back_to_the_template() -> None:
    answer = json.dumps({"ranking": ["P2"], "response": "Somewhere nice."})
    with WireServer(lambda r: answer) as server:
        out = _llm(server, llm_rerank=True).respond(_input([ASK])).output
    assert out.ranking[0] == "a" and out.response.startswith("I recommend Place A.")
    assert QUOTE_TAG.findall(out.response)  # the template answer with its verified quotes
    with WireServer(lambda r: answer) as server:
        out = _llm(server, llm_rerank=False).respond(_input([ASK])).output
    assert out.ranking == ["d", "a", "b", "c"]  # phrasing only: the offline order stays


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return make_demo(tmp_path_factory.mktemp("trace"), n_dialogues=4)


@pytest.mark.slow
def test_llm_trace_hybrid_through_the_runner_closed_and_open(demo, tmp_path) -> None:
    with WireServer(reverse_and_quote) as server:
        closed = run_system(_llm(server), demo.dialogues, demo.kb, tmp_path / "c", split="all")
        opened = run_system(
            _llm(server), demo.dialogues, demo.kb, tmp_path / "o", setting="open", split="all"
        )
    for result in (closed, opened):
        assert result.table.predictions.errored == 0 and result.table.n_turns > 0
        assert result.table.aggregate["gs"] == 1.0  # every quote kept is verbatim from its review
        assert result.info["usage"]["prompt_tokens"] > 0
    assert closed.info["config"]["llm"]["model"].endswith("#scripted")
    # a model that never answers valid JSON fails the turn (recorded, not guessed)
    with WireServer(lambda r: Reply(content="{oops")) as server:
        bad = run_system(_llm(server), demo.dialogues[:1], demo.kb, tmp_path / "b", split="all")
    assert bad.table.predictions.errored == bad.table.n_turns > 0
    _turn, inp = next(iter(system_inputs(demo.dialogues[0], demo.kb, "closed")))
    assert sorted(build_system("trace-hybrid", dense=False).respond(inp).ranking) == sorted(
        c.poi_id for c in inp.candidates
    )


def test_llm_fallback_answers_offline_and_says_so(demo, tmp_path) -> None:
    """``llm_fallback=true``: a turn whose LLM step fails gets the offline trace-hybrid answer (scored as
    answered), the failed calls' tokens, and a note in predictions.jsonl and run.json; without it the turn
    fails. A run where nothing failed writes no note and keeps its old run key."""
    dialogues = demo.dialogues[:2]
    offline = run_system(
        build_system("trace-hybrid", dense=False), dialogues, demo.kb, tmp_path / "off", split="all"
    )
    with WireServer(lambda r: Reply(content="{oops")) as server:
        fb = run_system(_llm(server, llm_fallback=True), dialogues, demo.kb, tmp_path / "fb", split="all")
    assert fb.table.predictions.errored == 0 and fb.table.n_turns == offline.table.n_turns > 0
    lines = [json.loads(x) for x in (tmp_path / "fb" / "predictions.jsonl").read_text().splitlines()]
    base = [json.loads(x) for x in (tmp_path / "off" / "predictions.jsonl").read_text().splitlines()]
    assert [(p["ranking"], p["response"]) for p in lines] == [(p["ranking"], p["response"]) for p in base]
    assert all(p["note"].startswith("llm step failed (SchemaMalformedError") for p in lines)
    assert all(p["prompt_tokens"] > 0 for p in lines)  # the failed calls are in the ledger
    assert "note" not in base[0]  # nothing degraded: the line is as it was before the field
    assert (
        fb.info["notes"]["turns"] == len(lines) and fb.info["notes"]["first"][0]["note"] == lines[0]["note"]
    )
    assert offline.info["notes"] == {"turns": 0, "first": []}
    assert fb.info["config"]["llm"]["fallback"] is True
    with WireServer(reverse_and_quote) as server:
        assert "fallback" not in _llm(server).config()["llm"]  # default off: run keys unchanged
