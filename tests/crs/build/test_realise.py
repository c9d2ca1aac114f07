"""Stage 3b: template realisation — verbatim quotes with exact spans, tags, lexicon and determinism."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from groundtrace.crs.build.evidence import Sentence, supports
from groundtrace.crs.build.planner import PlanContext, PlanningError, plan_dialogue
from groundtrace.crs.build.realise import (
    Quote,
    TemplateRealiser,
    TextBuilder,
    join_labels,
)
from groundtrace.crs.dataset.text import quoted_snippets, text_tags
from groundtrace.crs.kb.demo import generate_demo_kb


@pytest.fixture(scope="module")
def ctx():
    return PlanContext(generate_demo_kb(8, n_per_type=30, reviews_per_poi=6))


def _dialogue(ctx, key, rejection=False):
    """Plan (retrying infeasible draws, as the builder does) and realise with the template realiser."""
    for attempt in range(25):
        rng = random.Random(f"{key}:{attempt}")
        try:
            plan = plan_dialogue(ctx, key, rng, with_rejection=rejection)
        except PlanningError:
            continue
        return TemplateRealiser().realise(plan, rng)
    raise AssertionError("no feasible plan")


def test_text_builder_records_exact_spans() -> None:
    s = Sentence("rv1", "p1", 4, 14, "Quiet room")
    b = TextBuilder().add("Try X. ").quote(Quote("R2", s)).add(" and ").quote(Quote("R2", s))
    assert b.text == 'Try X. "Quiet room" [R2] and "Quiet room" [R2]'
    assert [(q.start, q.end) for q in b.spans] == [(8, 18), (30, 40)]
    assert all(b.text[q.start : q.end] == "Quiet room" for q in b.spans)
    assert b.tags == ["R2"]


@given(
    st.lists(
        st.text(
            alphabet=st.characters(blacklist_characters='"', blacklist_categories=("Cs",)),
            min_size=1,
            max_size=30,
        ),
        min_size=1,
        max_size=5,
    ),
    st.text(max_size=10),
)
def test_text_builder_spans_slice_back_to_every_quote(sentences: list[str], glue: str) -> None:
    b = TextBuilder()
    for i, text in enumerate(sentences):
        b.add(glue).quote(Quote(f"R{i + 1}", Sentence("rv", "p", 0, len(text), text)))
    assert [b.text[q.start : q.end] for q in b.spans] == sentences
    assert all(b.text[q.start - 1] == '"' and b.text[q.end] == '"' for q in b.spans)


def test_join_labels() -> None:
    assert join_labels(["a"]) == "a" and join_labels(["a", "b"]) == "a and b"
    assert join_labels(["a", "b", "c"]) == "a, b and c"


def test_quotes_are_verbatim_review_sentences_with_matching_spans(ctx) -> None:
    kb = ctx.kb
    for k in range(30):
        d = _dialogue(ctx, f"v{k}", rejection=k % 2 == 0)
        for t in d.turns:
            assert text_tags(t.text) == t.cited_tags
            quoted = [(q, tags, start) for q, tags, start, _ in quoted_snippets(t.text)]
            assert len(quoted) == len(t.quote_spans)
            for (quote, tags, start), span in zip(quoted, t.quote_spans, strict=True):
                review = kb.review(span.review_id)
                assert tags == [span.tag] and start == span.start
                assert d.review_refs[span.tag].review_id == review.review_id
                assert (
                    review.text[span.review_start : span.review_end] == quote == t.text[span.start : span.end]
                )
                assert review.poi_id in t.recommended
            if t.act in ("recommend", "compare", "explain"):
                assert t.quote_spans, t.text


def test_recommendation_quotes_express_the_active_constraints(ctx) -> None:
    """Most quotes of recommend turns support one of the turn's constraints (praise is the fallback)."""
    supported = total = 0
    for k in range(30):
        d = _dialogue(ctx, f"e{k}")
        for t in d.recommendation_turns():
            if t.act != "recommend":
                continue
            for span in t.quote_spans:
                total += 1
                sentence = t.text[span.start : span.end]
                supported += any(supports(sentence, c) for c in t.gold.active_constraints)
    assert total and supported / total > 0.9


def test_realisation_is_deterministic(ctx) -> None:
    a, b = _dialogue(ctx, "same"), _dialogue(ctx, "same")
    assert a.model_dump_json() == b.model_dump_json()
    assert a.model_dump_json() != _dialogue(ctx, "other").model_dump_json()


# -- the LLM realiser, end to end over HTTP against the local OpenAI-wire server ----------------------


def _turn_data(request: dict) -> dict:
    import json

    user = next(m for m in request["messages"] if m["role"] == "user")
    return json.loads(user["content"])


def _faithful(request: dict) -> str:
    """A canned 'LLM' that phrases system turns with one allowed sentence, verbatim, and its tag."""
    import json

    data = _turn_data(request)
    if data["speaker"] == "system" and data["allowed_evidence"]:
        ev = data["allowed_evidence"][0]
        main = data["pois"][0]["name"]
        return json.dumps(
            {"text": f'{main} should suit you ({data["act"]}): "{ev["sentence"]}" [{ev["tag"]}]'}
        )
    return json.dumps({"text": "(llm) " + data["draft"]})


def _fabricating(request: dict) -> str:
    import json

    data = _turn_data(request)
    if data["speaker"] == "system" and data["allowed_evidence"]:
        main = data["pois"][0]["name"]
        tag = data["allowed_evidence"][0]["tag"]
        return json.dumps({"text": f'{main} is great: "Best rooftop jacuzzi in the state" [{tag}]'})
    return json.dumps({"text": data["draft"]})


@pytest.fixture(scope="module")
def openai_client_cls():
    mod = pytest.importorskip("groundtrace.core.llm.openai_client")
    return mod.OpenAIClient


def _llm_dialogues(ctx, responder, client_cls, n=3):
    from groundtrace.core.llm.wire_server import WireServer
    from groundtrace.crs.build.llm_realiser import LLMRealiser

    out = []
    with WireServer(responder) as server:
        client = client_cls(
            "test-model", base_url=server.base_url, api_key="x", cache=None, max_reasks=0, max_retries=0
        )
        realiser = LLMRealiser(client)
        for k in range(n):
            for attempt in range(25):
                rng = random.Random(f"llm{k}:{attempt}")
                try:
                    plan = plan_dialogue(ctx, f"llm{k}", rng, with_rejection=k % 2 == 0)
                except PlanningError:
                    continue
                out.append(realiser.realise(plan, rng))
                break
        assert server.requests, "the realiser never called the server"
    return out, realiser


def test_llm_realiser_accepts_verbatim_quotes_over_http(ctx, openai_client_cls) -> None:
    from groundtrace.crs.build.qc import check_dialogue

    dialogues, realiser = _llm_dialogues(ctx, _faithful, openai_client_cls)
    for d in dialogues:
        assert d.realiser == "llm"
        assert d.features["realiser_fallback_turns"] == 0, realiser.rejections
        assert check_dialogue(d, ctx.kb) == []
        cited = [t for t in d.turns if t.act in ("recommend", "compare", "explain")]
        assert all(f" should suit you ({t.act}): " in t.text for t in cited)
        assert all(t.text.startswith("(llm) ") for t in d.turns if t.role == "user")


def test_llm_realiser_falls_back_on_fabricated_quotes(ctx, openai_client_cls) -> None:
    from groundtrace.crs.build.qc import check_dialogue

    dialogues, realiser = _llm_dialogues(ctx, _fabricating, openai_client_cls)
    for d in dialogues:
        cited = [t for t in d.turns if t.act in ("recommend", "compare", "explain")]
        assert d.features["realiser_fallback_turns"] == len(cited)
        assert check_dialogue(d, ctx.kb) == []
        assert not any("jacuzzi" in t.text for t in d.turns)
    assert any("not verbatim" in r for r in realiser.rejections)


def test_llm_realiser_falls_back_on_malformed_json(ctx, openai_client_cls) -> None:
    dialogues, _ = _llm_dialogues(ctx, lambda request: "this is not json", openai_client_cls, n=1)
    (d,) = dialogues
    assert d.features["realiser_fallback_turns"] == len(d.turns)


@pytest.mark.slow
def test_llm_realiser_rejects_parroting_and_unnamed_rejections(ctx, openai_client_cls) -> None:
    import itertools
    import json

    def parrot(request: dict) -> str:
        return json.dumps({"text": "Sounds lovely, thank you so much."})

    dialogues, realiser = _llm_dialogues(ctx, parrot, openai_client_cls, n=2)
    for d in dialogues:
        assert [t.text for t in d.turns].count("Sounds lovely, thank you so much.") == 1
        assert d.features["realiser_fallback_turns"] == len(d.turns) - 1
    assert any("repeats an earlier turn" in r for r in realiser.rejections)

    counter = itertools.count()

    def vague(request: dict) -> str:
        return json.dumps({"text": f"Sounds lovely, thank you so much ({next(counter)})."})

    dialogues, realiser = _llm_dialogues(ctx, vague, openai_client_cls, n=2)
    assert any("reject_and_refine turn does not name" in r for r in realiser.rejections)
    assert any("accept turn does not name" in r for r in realiser.rejections)
    for d in dialogues:
        for t in d.turns:
            if t.act in ("accept", "reject_and_refine", "recommend", "compare", "explain"):
                assert "Sounds lovely" not in t.text


def test_llm_realised_dialogues_pass_the_validator_too(ctx, openai_client_cls) -> None:
    """Both realisers pass the same checks: QC (above) and ``crs validate`` (no error, no uncovered quote)."""
    from groundtrace.crs.dataset.validate import check_dialogue as validate_dialogue

    dialogues, _ = _llm_dialogues(ctx, _faithful, openai_client_cls)
    for d in dialogues:
        problems = validate_dialogue(d, ctx.kb)
        # the 30-POI test city is below the 50-POI open-pool floor: only that warning may appear
        assert [p for p in problems if p.name != "open-pool-size"] == []
        assert all(p.severity == "warning" and "only 30" in p.message for p in problems)
        assert any(t.quote_spans for t in d.turns)
        for t in d.turns:
            for s in t.quote_spans:
                assert (
                    t.text[s.start : s.end] == ctx.kb.review(s.review_id).text[s.review_start : s.review_end]
                )


@pytest.mark.slow
def test_cli_build_with_the_llm_realiser_over_http_then_validate(
    ctx, tmp_path, monkeypatch, openai_client_cls
) -> None:
    """``crs build --realiser llm --llm http://…#MODEL`` end to end, then ``crs validate`` accepts it."""
    import json

    from typer.testing import CliRunner

    from groundtrace.cli import app
    from groundtrace.core.llm.wire_server import WireServer
    from groundtrace.crs.kb.store import save_kb

    monkeypatch.setenv("GROUNDTRACE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("GROUNDTRACE_LLM_API_KEY", "x")
    kb_path = save_kb(ctx.kb, tmp_path / "kb.sqlite")
    runner = CliRunner()
    with WireServer(_faithful) as server:
        result = runner.invoke(
            app,
            [
                "crs",
                "build",
                "--kb",
                str(kb_path),
                "--dialogues",
                "4",
                "--seed",
                "3",
                "--out",
                str(tmp_path / "ds"),
                "--realiser",
                "llm",
                "--llm",
                f"{server.base_url}#test-model",
                "--workers",
                "2",
            ],
        )
        assert result.exit_code == 0, result.output
        assert server.requests
    report = json.loads((tmp_path / "ds" / "build_report.json").read_text())
    assert report["realiser"] == "llm" and report["built"] == 4
    assert report["realiser_fallback_turns"] == 0 and report["llm_usage"]["calls"] >= 4 * 8
    lines = [
        json.loads(x)
        for s in ("train", "validation", "test")
        for x in (tmp_path / "ds" / f"{s}.jsonl").read_text().splitlines()
    ]
    assert len(lines) == 4 and all(d["realiser"] == "llm" for d in lines)
    assert all(
        " should suit you (" in t["text"] for d in lines for t in d["turns"] if t["act"] == "recommend"
    )
    checked = runner.invoke(app, ["crs", "validate", str(tmp_path / "ds"), "--kb", str(kb_path)])
    assert checked.exit_code == 0, checked.output
    assert "0 error(s)" in checked.output and "quote-uncovered" not in checked.output


def test_llm_realiser_stops_calling_a_dead_endpoint(ctx, openai_client_cls) -> None:
    """Connection refused on every call: after 3 consecutive transport failures the client is no longer
    called; every turn still falls back to its template draft (and passes QC)."""
    import socket

    from groundtrace.crs.build.llm_realiser import LLMRealiser
    from groundtrace.crs.build.qc import check_dialogue

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    client = openai_client_cls(
        "m", base_url=f"http://127.0.0.1:{port}/v1", api_key="x", cache=None, max_reasks=0, max_retries=0
    )
    calls = []
    real_complete = client.complete

    def counting(*args, **kwargs):
        calls.append(1)
        return real_complete(*args, **kwargs)

    client.complete = counting
    realiser = LLMRealiser(client, give_up_after=3)
    plan = next(
        plan_dialogue(ctx, f"dead{a}", random.Random(a), with_rejection=False)
        for a in range(25)
        if _plans(ctx, f"dead{a}", a)
    )
    d = realiser.realise(plan, random.Random(0))
    assert (
        len(calls) == 3
        and realiser.gave_up is not None
        and "3 consecutive transport failures" in realiser.gave_up
    )
    assert d.features["realiser_fallback_turns"] == len(d.turns) > 3
    assert sum("LLM skipped" in r for r in realiser.rejections) == len(d.turns) - 3
    assert check_dialogue(d, ctx.kb) == []


def _plans(ctx, dialogue_id: str, seed: int) -> bool:
    try:
        plan_dialogue(ctx, dialogue_id, random.Random(seed), with_rejection=False)
    except PlanningError:
        return False
    return True


def test_llm_turn_citing_a_complaint_in_support_is_rejected(ctx) -> None:
    """GT-Q007 at the turn level: the LLM turn falls back instead of failing the dialogue's QC."""
    from groundtrace.crs.build.llm_realiser import LLMTurnRejected, check_llm_turn

    kb = ctx.kb
    for k in range(200):
        rng = random.Random(f"stance{k}")
        try:
            plan = plan_dialogue(ctx, f"s{k}", rng, with_rejection=False)
        except PlanningError:
            continue
        index, tp = next((i, t) for i, t in enumerate(plan.turns) if t.act == "recommend")
        main = tp.recommended[0]
        allowed = {q.tag for quotes in tp.quotes.values() for q in quotes}  # the turn's allowed reviews
        for tag in sorted(allowed):
            ref = plan.review_refs[tag]
            review = kb.review(ref.review_id)
            negative = [s for s in kb.stances[ref.review_id] if s.polarity < 0 and s.end - s.start >= 12]
            if not negative:
                continue
            sentence = review.text[negative[0].start : negative[0].end]
            if '"' in sentence:
                continue
            name = kb.poi(main).name
            with pytest.raises(LLMTurnRejected, match="negative but cited in support"):
                check_llm_turn(plan, tp, index, f'I recommend {name}. Reviewers say: "{sentence}" [{tag}].')
            turn = check_llm_turn(
                plan, tp, index, f'I recommend {name}. One reviewer warns: "{sentence}" [{tag}].'
            )
            assert turn.cited_tags == [tag]
            return
    pytest.skip("no recommendation citing a review with a negative sentence in 200 plans")


def test_a_card_states_the_distance_to_the_anchor_of_an_active_distance_constraint() -> None:
    from groundtrace.crs.build.planner import TurnPlan
    from groundtrace.crs.build.realise import card_of
    from groundtrace.crs.schema import POI, Anchor, Constraint

    poi = POI(poi_id="p", name="Cafe", city="Tampa", poi_type="restaurant", lat=27.95, lon=-82.46, stars=4.0,
              review_count=5, categories=["Event Planning & Services", "Cafes"])  # fmt: skip
    hotel = Anchor(name="Hotel One", lat=27.959, lon=-82.46)  # 1.0 km north
    near = Constraint(kind="max_distance_km", value=2.0, label="near Hotel One")
    with_distance = TurnPlan("system", "recommend", active=[near], anchor=hotel)
    assert card_of(poi, with_distance) == "Tampa · Cafes · 4★ · 1.0 km from Hotel One"
    assert card_of(poi, TurnPlan("system", "recommend", anchor=hotel)) == "Tampa · Cafes · 4★"
