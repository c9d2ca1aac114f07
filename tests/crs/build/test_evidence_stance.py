"""Evidence that supports: supporting quotes never negative, warnings say so; QC and validate enforce it."""

from __future__ import annotations

import pytest

from groundtrace.crs.build.builder import build_dialogues
from groundtrace.crs.build.qc import check_dialogue
from groundtrace.crs.dataset.rules import EVIDENCE_STANCE, Finding
from groundtrace.crs.dataset.stance import is_warning, quote_stance
from groundtrace.crs.dataset.text import quoted_snippets
from groundtrace.crs.dataset.validate import check_dialogue as validate_dialogue
from groundtrace.crs.kb.demo import generate_demo_kb
from groundtrace.crs.kb.knowledge_base import KnowledgeBase
from groundtrace.crs.schema import Dialogue, Turn


@pytest.fixture(scope="module")
def kb() -> KnowledgeBase:
    return generate_demo_kb(0)


@pytest.fixture(scope="module")
def dialogues(kb: KnowledgeBase) -> list[Dialogue]:
    return build_dialogues(kb, 60, 3)[0]


def evidence_stance_issues(d: Dialogue, kb: KnowledgeBase) -> list[Finding]:
    """The builder's QC findings of rule GT-Q007 evidence-stance."""
    return [f for f in check_dialogue(d, kb) if f.rule is EVIDENCE_STANCE]


def _stances(d: Dialogue, kb: KnowledgeBase, turn: Turn) -> list[tuple[int, bool]]:
    out = []
    for quote, tags, start, _ in quoted_snippets(turn.text):
        stance = quote_stance(kb, d.review_refs[tags[0]].review_id, quote)
        assert stance is not None
        out.append((stance.polarity, is_warning(turn.text, start)))
    return out


@pytest.mark.slow
def test_built_quotes_are_never_negative_in_support(kb: KnowledgeBase, dialogues: list[Dialogue]) -> None:
    seen = [p for d in dialogues for t in d.turns if t.role == "system" for p in _stances(d, kb, t)]
    assert seen, "no quote at all"
    assert all(polarity >= 0 for polarity, warned in seen if not warned)
    assert all(polarity < 0 for polarity, warned in seen if warned)
    assert any(warned for _, warned in seen), "compare turns should sometimes carry a warning"
    assert not [i for d in dialogues for i in evidence_stance_issues(d, kb)]


def test_warning_cue_is_local_to_the_quote() -> None:
    text = 'For A: One reviewer warns: "bad" [R1]. Also: "good" [R2].'
    assert is_warning(text, text.index('"bad"') + 1)
    assert not is_warning(text, text.index('"good"') + 1)


def _sentence(kb: KnowledgeBase, d: Dialogue, poi_id: str, polarity: int) -> tuple[str, str]:
    """``(tag, sentence text)`` of a tagged review of ``poi_id`` with a sentence of that polarity."""
    for tag, ref in d.review_refs.items():
        if ref.poi_id != poi_id:
            continue
        review = kb.review(ref.review_id)
        for s in kb.stances[ref.review_id]:
            text = review.text[s.start : s.end]
            if s.polarity == polarity and len(text) >= 12 and '"' not in text:
                return tag, text
    pytest.skip(f"no sentence of polarity {polarity} for {poi_id}")


def _tampered(d: Dialogue, kb: KnowledgeBase, polarity: int, lead: str) -> tuple[Dialogue, int]:
    index = next(t.index for t in d.turns if t.act == "recommend")
    turn = d.turns[index]
    tag, sentence = _sentence(kb, d, turn.recommended[0], polarity)
    text = f'I\'d recommend {kb.poi(turn.recommended[0]).name}. {lead}: "{sentence}" [{tag}].'
    turns = list(d.turns)
    turns[index] = turn.model_copy(update={"text": text, "cited_tags": [tag], "quote_spans": []})
    return d.model_copy(update={"turns": turns}), index


def _with_negatives(dialogues: list[Dialogue], kb: KnowledgeBase) -> Dialogue:
    for d in dialogues:
        turn = next(t for t in d.turns if t.act == "recommend")
        pid = turn.recommended[0]
        if any(
            s.polarity < 0
            for ref in d.review_refs.values()
            if ref.poi_id == pid
            for s in kb.stances[ref.review_id]
        ):
            return d
    pytest.skip("no dialogue whose first recommendation has a negative review sentence")


def test_qc_rejects_a_negative_quote_cited_in_support(kb: KnowledgeBase, dialogues: list[Dialogue]) -> None:
    d, index = _tampered(_with_negatives(dialogues, kb), kb, -1, "Reviewers mention")
    issues = evidence_stance_issues(d, kb)
    assert [i.turn for i in issues] == [index]
    assert "negative but cited in support" in issues[0].message


def test_qc_accepts_the_same_quote_as_a_warning(kb: KnowledgeBase, dialogues: list[Dialogue]) -> None:
    d, _ = _tampered(_with_negatives(dialogues, kb), kb, -1, "One reviewer warns")
    assert not evidence_stance_issues(d, kb)


def test_qc_rejects_praise_dressed_as_a_warning(kb: KnowledgeBase, dialogues: list[Dialogue]) -> None:
    d, index = _tampered(dialogues[0], kb, 1, "One reviewer warns")
    issues = evidence_stance_issues(d, kb)
    assert [i.turn for i in issues] == [index] and "introduced as a warning" in issues[0].message


def test_validate_with_kb_reports_the_rule(kb: KnowledgeBase, dialogues: list[Dialogue]) -> None:
    d, index = _tampered(_with_negatives(dialogues, kb), kb, -1, "Reviewers mention")
    problems = [p for p in validate_dialogue(d, kb) if p.code == "GT-Q007"]
    assert [p.turn for p in problems] == [index] and problems[0].name == "evidence-stance"
    assert not [p for p in validate_dialogue(dialogues[0], kb) if p.code == "GT-Q007"]
