"""The learned engine's speed work changes no output (issue 26, item 1): the lexicon index finds exactly what
searching every value finds, the crfsuite attribute names give the tagger bit-identical marginals to the
feature dicts training uses, and the ASCII-folding exception list is complete."""

from __future__ import annotations

import itertools
import random
import re

import pytest

from groundtrace.catalog.scout.learned.model import LexiconEntry
from groundtrace.catalog.scout.learned.predict import (
    _ASCII_FOLDING,
    LexiconIndex,
    Proposal,
    _word_re,
    model_attributes,
)
from groundtrace.catalog.scout.learned.rerank import Ranker, Scorer, candidate_features, featurise
from groundtrace.catalog.scout.learned.tokens import (
    Gazetteer,
    ItemBuilder,
    crf_items,
    decode,
    features,
    token_offsets,
    token_texts,
    tokenize,
)
from groundtrace.catalog.scout.learned.train import _train_crf

VALUES = ["Mt. Hagen", "mt hagen", "Kicking Horse", "K-Cup", "Dark", "Dark Roast", "Über Bean", "snake_case",
          "100% Arabica", "ß-Kaffee", "Ok", "k", "---"]  # fmt: skip
TEXTS = [
    "Mt. Hagen Dark Roast K-Cup Pods, 12 oz",
    "MT-HAGEN darkroast: kicking/horse; KCup",  # separators optional between words
    "Ein Über Bean Kaffee, 100 % arabica (100%Arabica)",
    "uses snake_case and SNAKE CASE and ok, OK!",
    "\u212aicking Horse with a Kelvin sign, ſnake",  # re.IGNORECASE folds these to ASCII letters
    "İstanbul dark roast, ıok",
    "ß-kaffee und SS-Kaffee",
    "",
]


def _brute(values: list[str], text: str) -> list[tuple[str, int, int]]:
    """What the engine did before the index: every value with a word character searched in order."""
    out = []
    for v in values:
        if not re.search(r"\w", v):
            continue
        m = _word_re(v).search(text)
        if m:
            out.append((m.group(0), m.start(), m.end()))
    return out


def test_lexicon_index_finds_exactly_what_searching_every_value_finds() -> None:
    lexicon = {"brand": {str(i): LexiconEntry(value=v, gold=1, seen=2) for i, v in enumerate(VALUES)}}
    index = LexiconIndex(lexicon)
    rng = random.Random(5)
    texts = TEXTS + ["".join(rng.choice(" -_/.,ab\u212akKdDs") for _ in range(30)) for _ in range(300)]
    for text in texts:
        got = [(p.value, p.start, p.end) for p in index.spans(text, "title")]
        assert got == _brute(VALUES, text), text
    # hand-checked: "MT-HAGEN" matches "Mt. Hagen" and "mt hagen"; "darkroast" is "Dark Roast" glued
    found = {p.value for p in index.spans(TEXTS[1], "title")}
    assert found == {"MT-HAGEN", "kicking/horse", "KCup", "darkroast"}
    assert {p.value for p in index.spans(TEXTS[4], "title")} == {"\u212aicking Horse"}  # Kelvin sign K
    # a value is tried at each run where it can start, in order: the first "dark" is no "Dark Roast"
    got = [(p.value, p.start) for p in index.spans("Dark chocolate, xdark, DARK-roast darkroast", "title")]
    assert got == [("Dark", 0), ("DARK-roast", 23)]
    p = index.spans("Dark", "description")[0]
    assert p == Proposal("brand", "Dark", "description", 0, 4, 1 / 4, "lexicon")


def test_ascii_folding_lists_every_non_ascii_character_that_folds_to_ascii() -> None:
    chars = "".join(chr(c) for c in range(0x80, 0x110000) if not 0xD800 <= c <= 0xDFFF)
    folding = set(re.findall(r"[a-z0-9_]", chars, re.IGNORECASE))
    folding |= {c for c in chars if any(x.isascii() for x in c.lower())}
    assert folding == set(_ASCII_FOLDING)


def test_crf_items_give_the_tagger_bit_identical_marginals() -> None:
    pycrfsuite = pytest.importorskip("pycrfsuite")
    from groundtrace.catalog.model import SKU, GoldLabel

    titles = [("Acme Red Gadget Pro", "Acme"), ("Globex BLUE gadget 2 pack", "Globex"),
              ("Initech Green Gadget-Max 3", "Initech"), ("acme blue Gadget mini", "acme")] * 3  # fmt: skip
    skus = [SKU(sku_id=f"s{i}", title=t, category="Gadgets") for i, (t, _b) in enumerate(titles)]
    gold = {f"s{i}": {"brand": GoldLabel(sku_id=f"s{i}", attribute="brand", value=b)} for i, (_t, b) in
            enumerate(titles)}  # fmt: skip
    crf = _train_crf(skus, gold, {"brand"}, 0.05, 0.01, 30, gazetteer_parts=2)
    tagger = pycrfsuite.Tagger()
    tagger.open_inmemory(crf)
    gazetteer = Gazetteer({"brand": ["Acme", "Globex Blue"]})
    known = model_attributes(tagger)
    assert known is not None and b"bias" in known and b"w:zzz" not in known
    builder = ItemBuilder(known)
    texts = ["Acme Red Gadget", "GLOBEX blue Gadget 12 Pack, 2x", "x", "Initech Initech 7 Green-Gadget",
             "Zzz unseen words, Acme ÜBER-gadget\x00 9"]  # fmt: skip
    for text in texts:
        tokens = tokenize(text)
        runs: list[list[object]] = [[], [], []]
        args = (tokens, "Gadgets", "title", gazetteer)
        xss = [features(*args), crf_items(*args), builder.items(*args)]
        for xs, out in zip(xss, runs, strict=True):
            tagger.set(xs)
            labels = tagger.tag()
            out += [labels] + [tagger.marginal(y, i) for i in range(len(tokens)) for y in tagger.labels()]
        assert runs[0] == runs[1] == runs[2]  # floats compared exactly
        # the builder leaves out exactly the names the model does not know (and keeps their order)
        assert xss[2] == [[x for x in item if x in known or b"\0" in x] for item in xss[1]]


def test_crf_items_are_the_features_as_crfsuite_names() -> None:
    tokens = tokenize("Acme 12")
    items = crf_items(tokens, "Gadgets", "title", Gazetteer({"brand": ["acme"]}))
    assert items[0] == [b"bias", b"pre3:acm", b"title", b"pos:0", b"field:title", b"cat:gadgets",
                        b"cat_w:gadgets|acme", b"w:acme", b"shape:Xxx", b"suf3:cme", b"-2:edge", b"-1:edge",
                        b"1:w:12", b"1:shape:dd", b"2:edge", b"gaz=B:brand"]  # fmt: skip
    assert items[1][:3] == [b"bias", b"pre3:12", b"digit"]


def test_scorer_gives_the_ranker_scores_of_the_feature_dicts_bit_identically() -> None:
    rng = random.Random(11)
    values = ["Acme", "acme", "Acme Pro", "Red", "red/blue", "12 oz", "Pro", "", "Globex 2"]
    titles = ["Acme Pro Red 12 oz", "", "x"]
    for trial in range(200):
        proposals = []
        for _ in range(rng.randint(1, 9)):
            value = rng.choice(values)
            start = rng.randint(0, 12)
            slug, field = rng.choice(["brand", "color", "size"]), rng.choice(["title", "description"])
            score, how = rng.choice([0.0, rng.random(), 1.0]), rng.choice(["tagger", "lexicon"])
            extend = rng.choice([0.0, rng.random()])
            proposals.append(Proposal(slug, value, field, start, start + len(value), score, how, extend))
        title = rng.choice(titles)
        gold = {("brand", "acme"): rng.randint(0, 3), ("size", "12 oz"): 1}
        rows = featurise(proposals, title, gold)
        names = {k for *_x, feats in rows for k in feats} | {"attr=brand", "tagger|attr=color", "nope"}
        weights = {k: rng.uniform(-3, 3) for k in sorted(names)}
        if trial % 3 == 0:  # some features unweighted
            weights = {k: w for k, w in weights.items() if rng.random() < 0.5}
        ranker = Ranker(intercept=rng.uniform(-2, 2), weights=weights)
        want = [(slug, key, mine, ranker.score(feats)) for slug, key, mine, feats in rows]
        assert Scorer(ranker).scores(proposals, title, gold) == want  # floats compared exactly


def test_crf_items_name_every_non_zero_feature_in_order() -> None:
    gazetteer = Gazetteer({"brand": ["acme", "acme red"], "color": ["red"]})
    long = "ACME Red gadget-pro 2x, 12 Pack of acme red Widgets for the Office and HOME use 7"
    assert len(tokenize(long)) > 12
    builder = ItemBuilder()
    for _ in range(2):  # the second pass reads the per-word caches
        for (field, category), text in itertools.product(
            (("title", "Gadgets"), ("description", "Home & Kitchen")), ["", "acme", "Acme Red", "a b c", long]
        ):
            tokens = tokenize(text)
            want = [
                [f"{k}:{v}".encode() if isinstance(v, str) else k.encode() for k, v in f.items() if v != 0.0]
                for f in features(tokens, category, field, gazetteer)
            ]
            assert builder.items(tokens, category, field, gazetteer) == want


def _decode_every_label(labels: list[str]) -> list[tuple[str, int, int]]:
    """decode as it read every label (before it skipped the ``O`` runs)."""
    out: list[tuple[str, int, int]] = []
    current: list = []
    for i, label in enumerate([*labels, "O"]):
        tag, _, slug = label.partition("-")
        if current and (tag != "I" or slug != current[0]):
            out.append((current[0], current[1], i))
            current = []
        if tag == "B" or (tag == "I" and not current):
            current = [slug, i]
    return out


def test_decode_skipping_o_labels_gives_the_same_spans() -> None:
    rng = random.Random(3)
    alphabet = ["O", "O", "O", "B-a", "I-a", "B-b", "I-b", "I-a-b", "B-a-b", "X", "I", "B-", "I-"]
    for _ in range(3000):
        labels = [rng.choice(alphabet) for _ in range(rng.randint(0, 12))]
        assert decode(labels) == _decode_every_label(labels), labels


def test_token_texts_and_offsets_are_tokenize_s_tokens() -> None:
    rng = random.Random(7)
    alphabet = "ab Z9 _-/.,:\t\n\u00e9\u212a\u00a0\u2003%"
    randoms = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60))) for _ in range(500)]
    texts = [*TEXTS, "", "   ", "a", "-", "x" * 50, *randoms]
    for text in texts:
        for limit in (1, 2, 3, 7, 160):
            want = tokenize(text, limit)
            got = token_texts(text, limit)
            assert got == [t.text for t in want], (text, limit)
            assert token_offsets(text, got, len(got)) == [(t.start, t.end) for t in want]
            assert token_offsets(text, got, 1) == [(t.start, t.end) for t in want[:1]]
    # a long text is read up to a bound first: still the first `limit` tokens, exactly
    long = " ".join(f"w{i}-x" for i in range(400))
    assert token_texts(long, 160) == [t.text for t in tokenize(long, 160)]
    assert token_texts("ab " * 300, 100) == ["ab"] * 100


def test_items_of_token_texts_are_the_items_of_the_tokens() -> None:
    gazetteer = Gazetteer({"brand": ["acme", "acme red"], "color": ["red"]})
    builder = ItemBuilder()
    for text in ["", "acme", "ACME Red gadget-pro 2x, 12 Pack of acme red Widgets", "a - b / c _ d"]:
        tokens = tokenize(text)
        texts = token_texts(text)
        assert builder.items_of(texts, "Gadgets", "title", gazetteer) == crf_items(
            tokens, "Gadgets", "title", gazetteer
        )
        assert gazetteer.marks_of(texts) == {i: m for i, m in enumerate(gazetteer.tags(tokens)) if m}


def test_learned_finding_is_the_validated_finding() -> None:
    from groundtrace.catalog.model import Evidence
    from groundtrace.catalog.scout.engine import Finding
    from groundtrace.catalog.scout.learned.engine import learned_finding

    evidence = Evidence(source="catalog", source_type="catalog", source_ref="catalog:title", quote="Acme Red",
                        span=(0, 8), url="https://x.test/1")  # fmt: skip
    fields = ["attribute", "value", "evidence", "quality", "explicit", "confidence", "flags"]
    assert list(Finding.model_fields) == fields  # the fast path writes these, in this order
    for score in (0.0, 1.0, 0.5, 0.8717, 1e-9, round(1 / 3, 4)):
        want = Finding(attribute="brand", value="Acme", evidence=evidence, quality=score, confidence=score)
        got = learned_finding("brand", "Acme", evidence, score)
        assert got == want and got.model_dump_json() == want.model_dump_json() and repr(got) == repr(want)
        assert got.model_fields_set == want.model_fields_set and list(got.__dict__) == list(want.__dict__)
        assert (
            got.evidence is evidence
            and got.flags == []
            and got.flags is not learned_finding("brand", "Acme", evidence, score).flags
        )
    # outside what the fast path can prove, the validator runs (and rejects what it rejects)
    with pytest.raises(ValueError):
        learned_finding("brand", "Acme", evidence, 1.5)
    with pytest.raises(ValueError):
        learned_finding("brand", "Acme", evidence, float("nan"))
    assert learned_finding("brand", "Acme", evidence, 1).quality == 1.0  # an int is validated to a float


def test_value_info_gives_candidate_features_word_and_digit_flags() -> None:
    from groundtrace.catalog.scout.learned.rerank import _value_info

    for value in ["", "Acme", "Acme Pro", "12 oz", "a b c d", "x-1", "Über 2", "--"]:
        mine = [Proposal("brand", value, "title", 0, len(value), 0.5, "tagger")]
        feats = candidate_features("brand", mine, [], "t")
        want = tuple(feats.get(k, 0.0) for k in ("words_1", "words_2", "words_3plus", "digits"))
        assert _value_info(value) == want


def _select_ranked_before(model, proposals, title, gold):  # type: ignore[no-untyped-def]
    """predict._select_ranked as it was (every value's proposals copied and sorted)."""
    best = {}
    for slug, _key, mine, raw in Scorer(model.ranker).scores(proposals, title, gold):
        conf = model.confidence(slug, "ranker", raw)
        if slug not in best or conf > best[slug][0]:
            best[slug] = (conf, list(mine))
    return {
        slug: [(p, conf) for p in sorted(mine, key=lambda p: -p.confidence)]
        for slug, (conf, mine) in best.items()
    }


def test_select_ranked_gives_what_it_gave_before() -> None:
    from groundtrace.catalog.scout.learned.calibration import Curve
    from groundtrace.catalog.scout.learned.model import LearnedModel
    from groundtrace.catalog.scout.learned.predict import _select_ranked

    rng = random.Random(13)
    values = ["Acme", "acme", "Acme Pro", "Red", "red/blue", "12 oz", "Pro", "Globex 2"]
    for trial in range(300):
        ranker = Ranker(intercept=rng.uniform(-2, 2), weights={"tagger": rng.uniform(-3, 3), "rivals": -1.0,
                                                               "attr=brand": rng.uniform(-1, 1)})  # fmt: skip
        curves = {"*|ranker": Curve(xs=[0.2, 0.8], ys=[0.1, 0.9])} if trial % 2 else {}
        model = LearnedModel(attributes=["brand", "color"], crf="", ranker=ranker, curves=curves)
        proposals = []
        for _ in range(rng.randint(0, 8)):
            value, start = rng.choice(values), rng.randint(0, 9)
            score = rng.choice([0.5, rng.random()])  # ties keep the proposal order
            slug, field = rng.choice(["brand", "color"]), rng.choice(["title", "description"])
            how = rng.choice(["tagger", "lexicon"])
            proposals.append(Proposal(slug, value, field, start, start + len(value), score, how))
        gold = {("brand", "acme"): 2}
        assert _select_ranked(model, proposals, "Acme Pro Red", gold) == _select_ranked_before(
            model, proposals, "Acme Pro Red", gold
        )
