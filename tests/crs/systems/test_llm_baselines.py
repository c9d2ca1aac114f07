"""The four LLM baselines end to end through the real OpenAI client against the local wire server.

Scripted answers cover: a verbatim quote, a paraphrased quote, a wrong tag, invalid JSON (re-asked, and
for good), ids outside the pool, names instead of keys; the checks read the requests the server got
(DATA blocks, proximity graph, shortlist size) and the run's predictions (usage per turn, errors).
"""

from __future__ import annotations

import json
import re

import pytest

from groundtrace.core.evidence.quotes import GROUNDED_THRESHOLD, quote_score
from groundtrace.core.llm.wire_server import Reply, WireServer
from groundtrace.crs.evaluation.inputs import system_inputs
from groundtrace.crs.evaluation.runner import run_system
from groundtrace.crs.systems import LLM_SYSTEMS, SYSTEMS, build_system
from groundtrace.crs.systems.llm.systems import verify_citations
from groundtrace.crs.systems.toolkit.dense import Encoder
from tests.crs.report.demo_data import make_demo
from tests.crs.systems.test_baselines import TinyModel

KEYS = re.compile(r"^(P\d+) \| ", re.MULTILINE)
SNIPPET = re.compile(r"^P\d+ \[(R\d+)\] (.+)$", re.MULTILINE)


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return make_demo(tmp_path_factory.mktemp("llm"), n_dialogues=4)


def _user(request: dict) -> str:
    return request["messages"][-1]["content"]


def _answer(ranking: list[str], response: str) -> str:
    return json.dumps({"ranking": ranking, "response": response})


def smart(request: dict) -> str:
    """Ranks the keys in reverse and quotes the first offered snippet verbatim under its tag."""
    text = _user(request)
    if "which candidates they rejected" in text:
        return json.dumps({"wants": ["quiet", "wifi"], "avoid": [], "rejected": []})
    keys = KEYS.findall(text)
    snip = SNIPPET.search(text)
    quote = f'"{snip.group(2).removesuffix(" ...")}" [{snip.group(1)}]' if snip else ""
    return _answer(list(reversed(keys)), f"Try this one. {quote}")


def _build(name: str, server: WireServer, **kw):
    return build_system(name, llm=f"{server.base_url}#test-model", llm_cache=False, **kw)


def test_registered_names() -> None:
    assert set(LLM_SYSTEMS) == {"llm-zero-shot", "llm-dst", "rag-citation", "multi-review-synthesis"}
    assert set(LLM_SYSTEMS) <= set(SYSTEMS.names())


@pytest.mark.parametrize("name", LLM_SYSTEMS)
def test_each_llm_system_runs_through_the_runner_with_usage(name, demo, tmp_path) -> None:
    with WireServer(smart) as server:
        result = run_system(_build(name, server), demo.dialogues, demo.kb, tmp_path / "c", split="all")
        opened = run_system(
            _build(name, server, max_candidates=5), demo.dialogues, demo.kb, tmp_path / "o", setting="open"
        )
        requests = list(server.requests)
    preds = [json.loads(line) for line in (tmp_path / "c" / "predictions.jsonl").read_text().splitlines()]
    assert result.table.predictions.errored == 0 and len(preds) == result.table.n_turns > 0
    assert all(p["prompt_tokens"] > 0 and p["completion_tokens"] > 0 for p in preds)
    assert result.info["usage"]["prompt_tokens"] == sum(p["prompt_tokens"] for p in preds)
    assert opened.table.predictions.errored == 0
    # reviews and the dialogue reach the model only inside DATA blocks; open pools are cut to 5
    for req in requests:
        user = _user(req)
        assert "<<<DATA DIALOGUE>>>" in user and "<<<DATA CANDIDATES>>>" in user
        assert len(KEYS.findall(user)) <= 8
    assert any(len(KEYS.findall(_user(r))) == 5 for r in requests)
    if name == "llm-dst":  # tracking + generation: two calls per turn
        assert len(requests) == 2 * (result.table.n_turns + opened.table.n_turns)
    # the model ranked the keys reversed: its top-1 is the last shortlisted candidate
    dialogue = demo.dialogues[0]
    with WireServer(smart) as server:
        system = _build(name, server)
        for _turn, inp in system_inputs(dialogue, demo.kb, "closed"):
            out = system.respond(inp).output
            assert sorted(out.ranking) == sorted(c.poi_id for c in inp.candidates)


def test_paraphrase_wrong_tag_and_outside_ids(demo) -> None:
    """rag-citation keeps only verbatim quotes of offered snippets; zero-shot passes the model's text on."""
    _turn, inp = next(iter(system_inputs(demo.dialogues[0], demo.kb, "closed")))
    by_tag = {r.tag: r for r in inp.reviews}

    def respond(request: dict) -> str:
        text = _user(request)
        snips = SNIPPET.findall(text)
        (tag, verbatim), (other_tag, _) = snips[0], next(s for s in snips if s[0] != snips[0][0])
        response = (
            f'Good pick. "{verbatim}" [{tag}]. "They said it was lovely and great" [{tag}]. '
            f'"{verbatim}" [{other_tag}]. Also [R999].'
        )
        return _answer(["not-a-poi", "P2", "P2", inp.candidates[0].name, "P1"], response)

    with WireServer(respond) as server:
        out = _build("rag-citation", server).respond(inp).output
        raw = _build("llm-zero-shot", server).respond(inp).output
    quotes = re.findall(r'"([^"]+)" \[(R\d+)\]', out.response)
    assert len(quotes) == 1  # paraphrase, wrong tag and the unknown tag are gone
    quote, tag = quotes[0]
    assert quote_score(quote, by_tag[tag].text) >= GROUNDED_THRESHOLD
    assert "[R999]" not in out.response and "lovely and great" not in out.response
    assert "lovely and great" in raw.response  # zero-shot: the metrics judge the model's own citations
    assert sorted(out.ranking) == sorted(c.poi_id for c in inp.candidates)
    assert "not-a-poi" not in out.ranking and len(set(out.ranking)) == len(out.ranking)


def test_invalid_json_is_reasked_then_fails_the_turn(demo, tmp_path) -> None:
    good = _answer(["P1"], "Try it.")
    dialogues = demo.dialogues[:1]
    with WireServer(lambda r: "not json" if len(r["messages"]) <= 2 else good) as server:
        ok = run_system(_build("llm-zero-shot", server), dialogues, demo.kb, tmp_path / "a", split="all")
        assert any(len(r["messages"]) > 2 for r in server.requests)  # the re-ask carries the error
    assert ok.table.predictions.errored == 0
    with WireServer(lambda r: Reply(content="{oops")) as server:
        bad = run_system(_build("llm-zero-shot", server), dialogues, demo.kb, tmp_path / "b", split="all")
    assert bad.table.predictions.errored == bad.table.n_turns > 0
    preds = (tmp_path / "b" / "predictions.jsonl").read_text()
    assert "SchemaMalformedError" in preds


def test_llm_dst_filters_rejected_and_unmet(demo) -> None:
    _turn, inp = next(iter(system_inputs(demo.dialogues[0], demo.kb, "closed")))
    first = inp.candidates[0]

    def respond(request: dict) -> str:
        if "which candidates they rejected" in _user(request):
            return json.dumps({"wants": [], "avoid": [], "rejected": [first.name]})
        return _answer([], "ok")

    with WireServer(respond) as server:
        out = _build("llm-dst", server).respond(inp).output
        generation = _user(server.requests[1])
    assert out.ranking[-1] == first.poi_id and first.name not in generation.split("<<<DATA STATE>>>")[0]


def test_proximity_graph_and_dense_prefilter(demo, tmp_path) -> None:
    _turn, inp = next(iter(system_inputs(demo.dialogues[0], demo.kb, "open")))
    encoder = Encoder(TinyModel(), name="tiny", cache_dir=tmp_path)
    with WireServer(smart) as server:
        _build("llm-zero-shot", server, proximity_graph=True).respond(inp)
        graph = _user(server.requests[0])
        _build("llm-zero-shot", server, prefilter="dense", max_candidates=6, encoder=encoder).respond(inp)
        tfidf = _build("llm-zero-shot", server, max_candidates=6)
        tfidf.respond(inp)
        shown_dense, shown_tfidf = (KEYS.findall(_user(r)) for r in server.requests[1:3])
    assert "<<<DATA PROXIMITY>>>" in graph and re.search(r"^P1 -> P\d+ \d+\.\d km", graph, re.MULTILINE)
    assert len(shown_dense) == len(shown_tfidf) == 6
    with pytest.raises(ValueError, match="prefilter"):
        build_system("llm-zero-shot", prefilter="bm25")


def test_verify_citations_keeps_only_offered_verbatim() -> None:
    allowed = {"R1": "The pasta was excellent and fresh."}
    text = 'A "pasta was excellent and fresh" [R1], "pasta was bad" [R1], "x y z" [R2] and [R3].'
    assert verify_citations(text, allowed) == 'A "pasta was excellent and fresh" [R1], , and .'


@pytest.mark.slow  # end to end: two endpoints, runs and a report
def test_one_llm_system_on_two_endpoints_in_one_report(demo, tmp_path) -> None:
    """The ablation across model families: `crs run --label` per endpoint, then one `crs report`."""
    from typer.testing import CliRunner

    from groundtrace.cli import app

    runs = []
    for model, reverse in (("family-a", True), ("family-b", False)):

        def respond(request, reverse=reverse):
            keys = KEYS.findall(_user(request))
            return _answer(list(reversed(keys)) if reverse else keys, "Try it.")

        with WireServer(respond) as server:
            out = tmp_path / model
            args = [
                "crs",
                "run",
                "--system",
                "llm-zero-shot",
                "--dataset",
                str(demo.dataset),
                "--split",
                "all",
            ]
            args += ["--kb", str(demo.kb_path), "--out", str(out), "--label", model]
            args += ["--system-arg", f"llm={server.base_url}#{model}", "--system-arg", "llm_cache=false"]
            result = CliRunner().invoke(app, args)
            assert result.exit_code == 0, result.output
        assert json.loads((out / "run.json").read_text())["label"] == model
        runs.append(str(out))
    report = CliRunner().invoke(
        app, ["crs", "report", *runs, "--out", str(tmp_path / "rep"), "--resamples", "10"]
    )
    assert report.exit_code == 0, report.output
    board = (tmp_path / "rep" / "leaderboard.md").read_text()
    assert "family-a" in board and "family-b" in board


def test_card_attributes_show_values_not_only_keys() -> None:
    from groundtrace.crs.systems.llm.base import attribute_text

    assert attribute_text("wifi", "free") == "wifi free"
    assert attribute_text("good_for_kids", True) == "good_for_kids"
    assert attribute_text("good_for_kids", False) is None
    assert attribute_text("ambience", ["casual", "trendy"]) == "ambience casual/trendy"
    assert attribute_text("parking", {"lot": True, "street": False}) == "parking lot"


def test_llm_dst_tracking_answer_is_bounded(demo) -> None:
    """The tracking schema bounds its lists and phrases (a grammar-constrained local model looped to the
    token cap on every turn without): the bounds reach the server and an over-long answer is re-asked."""
    _turn, inp = next(iter(system_inputs(demo.dialogues[0], demo.kb, "closed")))
    tracking = {"n": 0}

    def respond(request: dict) -> str:
        if "which candidates they rejected" in request["messages"][1]["content"]:  # a re-ask appends
            tracking["n"] += 1
            if tracking["n"] == 1:
                return json.dumps({"wants": ["quiet"] * 20, "avoid": ["x" * 200], "rejected": []})
            return json.dumps({"wants": ["quiet"], "avoid": [], "rejected": []})
        return _answer([], "ok")

    with WireServer(respond) as server:
        _build("llm-dst", server).respond(inp)
        schema = server.requests[0]["response_format"]["json_schema"]["schema"]["properties"]
    assert tracking["n"] == 2  # the 20-phrase answer did not validate and was re-asked
    assert schema["wants"]["maxItems"] == 5 and schema["rejected"]["maxItems"] == 3
    assert schema["avoid"]["items"]["maxLength"] == 48


def test_prefilter_shows_rejected_candidates_last(demo) -> None:
    """The shortlist follows the prefilter system's ranking, rejection rule included: a POI the user
    rejected is the last key, so a model answering "P1" (as the bundled 135M model does) no longer
    re-recommends it (it was P1 right after its rejection on 2 of 3 demo dialogues)."""
    from groundtrace.crs.systems.toolkit.base import Turn
    from groundtrace.crs.systems.toolkit.scoring import rank_by
    from groundtrace.crs.systems.toolkit.state import track_state

    with WireServer(lambda r: _answer(["P1"], "ok")) as server:
        system = _build("llm-zero-shot", server)
        checked = 0
        for dialogue in demo.dialogues:
            for _turn, inp in system_inputs(dialogue, demo.kb, "closed"):
                turn = Turn(inp, track_state(inp), system.memo)
                if not turn.state.rejected:
                    continue
                raw = rank_by(system.ranker().score(turn), turn.pool)
                assert raw[-1] not in turn.state.rejected  # the TF-IDF score alone does not put it last
                out = system.respond(inp).output
                shown = KEYS.findall(_user(server.requests[-1]))
                names = {c.poi_id: c.name for c in inp.candidates}
                prompt = _user(server.requests[-1])
                last_card = re.search(rf"^{shown[-1]} \| (.+?) \| ", prompt, re.MULTILINE)
                assert last_card and last_card.group(1) in {names[p] for p in turn.state.rejected}
                assert out.ranking[0] not in turn.state.rejected
                checked += 1
    assert checked >= 1


@pytest.mark.parametrize("name", ["llm-zero-shot", "llm-dst", "trace-hybrid"])
def test_failed_turn_keeps_its_tokens_in_the_ledger(demo, tmp_path, name) -> None:
    """A turn whose answer never validates (3 tries) made its calls: their tokens are on the failed
    prediction and in run.json (they were recorded as 0 + 0)."""
    dialogues = demo.dialogues[:1]
    with WireServer(lambda r: Reply(content="{oops")) as server:
        bad = run_system(_build(name, server), dialogues, demo.kb, tmp_path / "b", split="all")
        sent = len(server.requests)
    assert bad.table.predictions.errored == bad.table.n_turns > 0 and sent >= 3 * bad.table.n_turns
    preds = [json.loads(line) for line in (tmp_path / "b" / "predictions.jsonl").read_text().splitlines()]
    assert all(p["error"] and p["prompt_tokens"] > 0 and p["completion_tokens"] > 0 for p in preds)
    usage = json.loads((tmp_path / "b" / "run.json").read_text())["usage"]
    assert usage["prompt_tokens"] == sum(p["prompt_tokens"] for p in preds) > 0


@pytest.mark.parametrize("name", LLM_SYSTEMS)
def test_a_small_context_shows_fewer_candidates_and_fits(name, demo) -> None:
    """With a context size (``context_tokens``, or the client's ``n_ctx``) the shortlist shown is cut
    from its end until system + user prompt + max_tokens fits (estimated); the ranking is still a
    permutation of the pool. Without one, the whole shortlist of 8 is shown."""
    from groundtrace.core.llm.budget import estimate_tokens
    from groundtrace.crs.systems.llm.base import prompt_text

    _turn, inp = next(system_inputs(demo.dialogues[0], demo.kb, "closed"))
    system_prompt = "dst" if name == "llm-dst" else "system"
    with WireServer(smart) as server:
        full = _build(name, server, max_tokens=200)
        full.respond(inp)
        first = server.requests[0]
        shown_full = len(KEYS.findall(_user(first)))
        assert shown_full == 8
        need = estimate_tokens(prompt_text(system_prompt)) + estimate_tokens(_user(first))
        reserved = 200
        limit = reserved + int(0.6 * need)
        small = _build(name, server, max_tokens=200, context_tokens=limit)
        server.requests.clear()
        reply = small.respond(inp)
        first = server.requests[0]
        shown = len(KEYS.findall(_user(first)))
        assert 1 <= shown < shown_full
        assert estimate_tokens(prompt_text(system_prompt)) + estimate_tokens(_user(first)) + reserved <= limit
        assert sorted(reply.output.ranking) == sorted(c.poi_id for c in inp.candidates)
        assert small.config()["context_tokens"] == limit and "context_tokens" not in full.config()
        # the client's own context size (a local model's n_ctx) is read the same way
        by_client = _build(name, server, max_tokens=200)
        by_client.client.n_ctx = limit  # type: ignore[attr-defined]
        server.requests.clear()
        by_client.respond(inp)
        assert len(KEYS.findall(_user(server.requests[0]))) == shown
