"""CPU time per SKU of the learned engine, and a check that its output is byte-identical to a recorded one
(issue 26, item 1).

    PYTHONPATH=src python benchmarks/bench_learned_engine.py --models WORK [--data DIR] [--only NAME]...
        [--repeat 3] [--record FILE | --check FILE] [--baseline-src OLD/src | --baseline-learned REV]
        [--profile N] [--parts N]

``WORK`` is a ``benchmarks/catalog_learned.py --work`` folder: it holds the trained models
(``<name>-0.95-5-<n>.model.json``) and templates (``<name>-templates``). The SKUs are the same held-out
splits that script measures (OA-Mine / AE-110K validation, the WDC-PAVE 20 %).

Per dataset and engine the SKUs go once through the pipeline (``process_sku``; the engine's calls are
recorded), then are timed ``--repeat`` times (the *least* CPU time of the repeats is reported, since
other jobs on a shared machine only ever add time; ``time.process_time``):

* ``engine`` — the extraction engine's ``extract`` calls alone, replayed on the recorded arguments;
* ``pipeline`` — ``process_sku`` (Scout → Judge → policy), as ``catalog_learned.py``'s CPU column.

``offline`` (the rule engine) is timed in the same process as the reference. ``--baseline-src`` also
times another checkout's ``src`` (e.g. ``git archive`` of the old commit), so the old/new ratio comes from
one run: each of ``--repeat`` rounds times both sides, each in a fresh process, in alternating order
(old/new, new/old, ...; :func:`_run`); ``--baseline-learned REV`` builds
that ``src`` itself: a copy of this ``src`` with ``src/groundtrace/catalog/scout/learned/`` as of git
revision ``REV`` (so the other modules — the rule engine the learned engine adds to, the Judge — are the
same on both sides and only the learned engine differs).

``--parts N`` also times each part of this tree's learned engine alone (:func:`parts`: tokens, items,
crfsuite set / Viterbi / forward-backward, lexicon, select, findings, the rule engine, the rest), least of
``N`` rounds, and prints the table (CPU ms per SKU per dataset).

Output digests (sha256) per dataset: ``learned`` — the learned engine's own proposals and selection
(:func:`propose` + :func:`select`, depends on learned code only); ``engine`` — the learned engine's
``EngineOutput`` (includes the rule engine it adds to); ``pipeline`` — every ``AttributeResult``.
``--record`` writes them (with per-SKU digests, to locate a difference), ``--check`` compares and exits 1
on any difference, naming the first differing SKU.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

DATASETS = ("oa-mine", "ae-110k", "wdc-pave")


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _model_path(work: Path, name: str) -> Path:
    found = sorted(p for p in work.glob(f"{name}-0.95-5-*.model.json") if "-plain" not in p.name)
    if not found:
        raise SystemExit(f"{work}: no {name}-0.95-5-*.model.json (run benchmarks/catalog_learned.py first)")
    return found[0]


class _Recorder:
    """Wraps an engine; records every ``extract`` call's arguments (to replay them timed). An engine that
    shares the SKU's parsed evidence with the Judge (``shares_parsed_evidence``) gets it as in the pipeline;
    the replay leaves it out (each replayed call parses its Documents afresh, as the first call did)."""

    def __init__(self, engine: Any) -> None:
        self.engine, self.calls = engine, []
        self.name = getattr(engine, "name", type(engine).__name__)
        self.shares_parsed_evidence = getattr(engine, "shares_parsed_evidence", False) is True

    def extract(self, *args: Any, **kwargs: Any) -> Any:
        self.calls.append((args, {k: v for k, v in kwargs.items() if k != "parsed"}))
        return self.engine.extract(*args, **kwargs)


def _learned_digest(engine: Any, calls: list) -> list[str]:  # type: ignore[type-arg]
    """Per call: the learned engine's own proposals and selection (depends on learned code only)."""
    from groundtrace.catalog.scout.learned.predict import FIELDS, propose, select

    out = []
    for args, _kw in calls:
        sku, _attrs, documents = args[:3]
        texts = {
            d.metadata.get("field"): d.text
            for d in documents
            if d.source == "catalog" and d.metadata.get("field") in FIELDS
        }
        proposals = propose(engine.tagger, sku.category, texts)
        chosen = select(engine.model, proposals, sku.title, sku.category)
        rows = [repr(p) for p in proposals]
        rows += [f"{slug}:{p!r}:{conf!r}" for slug, xs in sorted(chosen.items()) for p, conf in xs]
        out.append(_sha("\n".join(rows)))
    return out


def measure(
    name: str, data: Path, work: Path, repeat: int, profile: int = 0, parts_repeat: int = 0
) -> dict[str, Any]:
    """Digests and least CPU seconds (of ``repeat``) per engine and step for one dataset; ``profile`` > 0:
    also print the ``profile`` functions with the most own CPU time (``cProfile`` on ``time.process_time``)
    over one more replay of the learned engine's ``extract`` calls; ``parts_repeat`` > 0: also the CPU
    seconds of each part of the learned engine (:func:`parts`, least of ``parts_repeat``)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from catalog_learned import _split

    from groundtrace.catalog.pipeline import EnrichConfig, build_components, process_sku

    _train, val = _split(name, data, name)
    tpl_dir = work / f"{name}-templates"
    model = _model_path(work, name)
    out: dict[str, Any] = {"skus": len(val), "model": model.name}
    for engine, options in (("offline", {}), ("learned", {"learned": {"model": str(model)}})):
        comp = build_components(EnrichConfig(templates=tpl_dir, extractor=engine, options=options))
        rec = _Recorder(comp.scout.engine)
        comp.scout.engine = rec
        lines = [[r.model_dump_json() for r in process_sku(r.sku, comp).results] for r in val]
        outputs = [rec.engine.extract(*a, **k).model_dump_json() for a, k in rec.calls]
        comp.scout.engine = rec.engine
        times: dict[str, float] = {"engine": float("inf"), "pipeline": float("inf")}
        for _ in range(repeat):
            t0 = time.process_time()
            for a, k in rec.calls:
                rec.engine.extract(*a, **k)
            times["engine"] = min(times["engine"], time.process_time() - t0)
            t0 = time.process_time()
            for r in val:
                process_sku(r.sku, comp)
            times["pipeline"] = min(times["pipeline"], time.process_time() - t0)
        out[engine] = {"cpu_s": times, "calls": len(rec.calls)}
        if engine == "learned" and profile > 0:
            _profile(rec.engine, rec.calls, profile, f"{name}: learned engine, one replay")
        if engine == "learned" and parts_repeat > 0:
            out["parts"] = parts(rec.engine, rec.calls, parts_repeat)
        if engine == "learned":
            per_sku = {
                "pipeline": [_sha("\n".join(x)) for x in lines],
                "engine": [_sha(x) for x in outputs],
                "learned": _learned_digest(rec.engine, rec.calls),
            }
            out["digests"] = {k: _sha("".join(v)) for k, v in per_sku.items()}
            out["per_sku"] = {
                k: dict(zip([r.sku.sku_id for r in val], v, strict=False)) for k, v in per_sku.items()
            }
    return out


def _profile(engine: Any, calls: list, top: int, title: str) -> None:  # type: ignore[type-arg]
    """Print the ``top`` functions by own CPU time over one replay of ``calls`` (to stderr)."""
    import cProfile
    import io
    import pstats

    prof = cProfile.Profile(time.process_time)
    prof.enable()
    for a, k in calls:
        engine.extract(*a, **k)
    prof.disable()
    text = io.StringIO()
    pstats.Stats(prof, stream=text).sort_stats("tottime").print_stats(top)
    print(f"## profile: {title}\n{text.getvalue()}", file=sys.stderr)


def _least(fn: Any, repeat: int) -> float:
    """The least CPU seconds (``time.process_time``) of ``repeat`` calls of ``fn()``."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return best


class _Parts:
    """The parts of the learned engine's ``extract`` over recorded calls, each as a loop over inputs prepared
    once (:func:`parts` times them)."""

    def __init__(self, engine: Any, calls: list, repeat: int) -> None:  # type: ignore[type-arg]
        from groundtrace.catalog.scout.learned.predict import FIELDS, select
        from groundtrace.catalog.scout.learned.tokens import token_texts
        from groundtrace.catalog.scout.lexicon_engine import ParsedEvidence

        self.engine, self.calls, self.select = engine, calls, select
        tagger = engine.tagger
        self.texts: list[tuple[str, str, str]] = []  # (text, category, field) the tagger and lexicon read
        self.selects: list[tuple[Any, ...]] = []  # select's arguments per call
        self.finds: list[tuple[Any, ...]] = []  # (chosen, contexts) per call
        self.rules: list[tuple[Any, ...]] = []  # (sku, attributes, documents, template, replaced) per call
        self.documents = [args[2] for args, _kw in calls]
        for args, kw in calls:
            sku, attributes, documents = args[:3]
            docs = {
                d.metadata.get("field"): d
                for d in documents
                if d.source == "catalog" and d.metadata.get("field") in FIELDS
            }
            slugs = {a.slug for a in attributes if a.slug in engine._slugs and not a.safety_critical}
            ctxs = engine.contexts(docs, ParsedEvidence()) if slugs and docs else {}
            self.texts += [(c.text, sku.category, f) for f, c in ctxs.items() if c.text and c.text.strip()]
            proposals = engine.proposals(sku, slugs, ctxs) if ctxs else []
            gold = tagger.lexicon_gold(sku.category)
            self.selects.append((proposals, sku.title, sku.category, gold))
            chosen = select(engine.model, proposals, sku.title, sku.category, gold)
            self.finds.append((chosen, ctxs))
            replaced = {f.attribute for f in engine.findings(chosen, ctxs)}
            self.rules.append((sku, attributes, documents, kw.get("template_attributes"), replaced))
        self.tokens = [(token_texts(t), c, f) for t, c, f in self.texts]
        self.items = [tagger._items.items_of(x, c, f, tagger.gazetteer(c)) for x, c, f in self.tokens]
        self.spanned = []  # (items, a label) of the texts with a span (their marginals are read)
        for x in self.items:
            tagger._tagger.set(x)
            labels = tagger._tagger.tag()
            if any(label != "O" for label in labels):
                self.spanned.append((x, labels[0]))
        self.memos: list[list[Any]] = []  # the rule engine's Documents parsed outside the timing
        for _ in range(repeat):
            round_ = []
            for documents in self.documents:
                parsed = ParsedEvidence()
                for d in documents:
                    parsed.context(d)
                round_.append(parsed)
            self.memos.append(round_)

    def extract(self) -> None:
        for a, k in self.calls:
            self.engine.extract(*a, **k)

    def parse(self) -> None:
        from groundtrace.catalog.scout.lexicon_engine import ParsedEvidence

        for documents in self.documents:
            parsed = ParsedEvidence()
            for d in documents:
                parsed.context(d)

    def tokens_(self) -> None:
        from groundtrace.catalog.scout.learned.tokens import token_texts

        for t, _c, _f in self.texts:
            token_texts(t)

    def items_(self) -> None:
        tagger = self.engine.tagger
        for x, c, f in self.tokens:
            tagger._items.items_of(x, c, f, tagger.gazetteer(c))

    def crf_set(self) -> None:
        crf = self.engine.tagger._tagger
        for x in self.items:
            crf.set(x)

    def crf_set_tag(self) -> None:
        crf = self.engine.tagger._tagger
        for x in self.items:
            crf.set(x)
            crf.tag()

    def crf_forward_backward(self) -> None:
        """set + tag + one marginal (crfsuite's forward-backward runs on the first) where a span is found."""
        crf = self.engine.tagger._tagger
        for x, label in self.spanned:
            crf.set(x)
            crf.tag()
            crf.marginal(label, 0)

    def crf_set_tag_spanned(self) -> None:
        crf = self.engine.tagger._tagger
        for x, _label in self.spanned:
            crf.set(x)
            crf.tag()

    def spans(self) -> None:
        for t, c, f in self.texts:
            self.engine.tagger.spans(t, c, f)

    def lexicon(self) -> None:
        for t, c, f in self.texts:
            self.engine.tagger.lexicon_index(c).spans(t, f)

    def select_(self) -> None:
        for proposals, title, category, gold in self.selects:
            self.select(self.engine.model, proposals, title, category, gold)

    def findings(self) -> None:
        for chosen, ctxs in self.finds:
            self.engine.findings(chosen, ctxs)

    def rules_(self) -> None:
        """The rule engine on Documents parsed outside the timing (fresh memos, one per call and loop)."""
        from groundtrace.catalog.scout.learned.engine import _RulesView

        for (sku, attributes, documents, template, replaced), parsed in zip(
            self.rules, self.memos.pop(), strict=True
        ):
            view = _RulesView.of(parsed, replaced, attributes, documents) if replaced else parsed
            self.engine.rules.extract(sku, attributes, documents, template_attributes=template, parsed=view)


def parts(engine: Any, calls: list, repeat: int) -> list[tuple[str, float]]:  # type: ignore[type-arg]
    """CPU seconds of each part of the learned engine's ``extract`` over the recorded ``calls``, each part
    replayed alone in its own loop on inputs prepared outside the timing (least of ``repeat`` rounds; the
    parts take turns within a round, so a load change hits every part alike):

    * ``extract`` — the whole call, as the ``engine`` step;
    * ``parse`` — :meth:`ParsedEvidence.context` of every Document (instruction masking, sentences:
      the rule engine's parse, shared with the learned spans);
    * ``tokens``, ``items`` (crfsuite names with gazetteer marks), ``crfsuite set`` (the names copied
      into crfsuite, looked up, state scores), ``crfsuite viterbi`` (``tag``), ``crfsuite
      forward-backward`` (the first ``marginal`` of a text with a span), ``tagger rest`` (the rest of
      ``Tagger.spans``: decode, the marginal reads, the proposals), per catalog title/description;
    * ``lexicon`` (:class:`LexiconIndex` spans), ``select`` (reranker + calibration), ``findings``
      (quotes, Evidence, Finding);
    * ``rules`` — the rule engine on the parsed Documents, with the explicit-only view where a learned
      value replaces its findings;
    * ``rest`` — ``extract`` less the parts above (contexts, filters, merging, the output)."""
    p = _Parts(engine, calls, repeat)
    p.extract()  # warm the per-word caches as the engine step's first replay did
    loops = {
        "extract": p.extract,
        "parse": p.parse,
        "tokens": p.tokens_,
        "items": p.items_,
        "crfsuite set": p.crf_set,
        "crfsuite set + viterbi": p.crf_set_tag,
        "crfsuite set + viterbi (texts with a span)": p.crf_set_tag_spanned,
        "crfsuite set + viterbi + forward-backward": p.crf_forward_backward,
        "tagger spans": p.spans,
        "lexicon": p.lexicon,
        "select": p.select_,
        "findings": p.findings,
        "rules": p.rules_,
    }
    got = dict.fromkeys(loops, float("inf"))
    for _ in range(repeat):
        for part, loop in loops.items():
            got[part] = min(got[part], _least(loop, 1))
    viterbi = got["crfsuite set + viterbi"] - got["crfsuite set"]
    fb = got["crfsuite set + viterbi + forward-backward"] - got["crfsuite set + viterbi (texts with a span)"]
    tagger_rest = got["tagger spans"] - got["tokens"] - got["items"] - got["crfsuite set + viterbi"] - fb
    out = [
        ("extract", got["extract"]),
        ("parse", got["parse"]),
        ("tokens", got["tokens"]),
        ("items", got["items"]),
        ("crfsuite set", got["crfsuite set"]),
        ("crfsuite viterbi", viterbi),
        ("crfsuite forward-backward", fb),
        ("tagger rest (decode, marginal reads, proposals)", tagger_rest),
        ("lexicon", got["lexicon"]),
        ("select", got["select"]),
        ("findings", got["findings"]),
        ("rules", got["rules"]),
    ]
    out.append(("rest", got["extract"] - sum(t for _name, t in out[1:])))
    return out


def _print_parts(found: dict[str, Any]) -> None:
    """The :func:`parts` table: CPU ms per SKU of each part, one column per dataset."""
    names = [n for n, got in found.items() if "parts" in got]
    print(
        "\nparts of the learned engine's extract (CPU ms per SKU, each part alone, least of --parts loops):\n"
    )
    print("| part | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    for i, (part, _t) in enumerate(found[names[0]]["parts"]):
        cells = [f"{1000 * found[n]['parts'][i][1] / found[n]['skus']:.3f}" for n in names]
        print(f"| {part} | " + " | ".join(cells) + " |")
    print()


def _keep_least(into: dict[str, Any], new: dict[str, Any]) -> None:
    """Merge measurements: the least CPU time per dataset, engine and step."""
    for name, got in new.items():
        if name not in into:
            into[name] = got
            continue
        for engine in ("offline", "learned"):
            for step, t in got[engine]["cpu_s"].items():
                into[name][engine]["cpu_s"][step] = min(into[name][engine]["cpu_s"][step], t)


def baseline_tree(rev: str, root: Path) -> Path:
    """``root/src`` copied to a temporary folder with the learned engine's files as of ``rev``."""
    import shutil
    import tempfile

    learned = "src/groundtrace/catalog/scout/learned"
    tmp = Path(tempfile.mkdtemp(prefix="gt-baseline-"))
    shutil.copytree(root / "src", tmp / "src", ignore=shutil.ignore_patterns("__pycache__"))
    for old in (tmp / learned).glob("*.py"):
        old.unlink()

    def git(*args: str) -> bytes:
        return subprocess.run(["git", *args], cwd=root, capture_output=True, check=True).stdout

    for name in git("ls-tree", "--name-only", rev, f"{learned}/").decode().split():
        (tmp / name).write_bytes(git("show", f"{rev}:{name}"))
    return tmp / "src"


def _check(found: dict[str, Any], golden: dict[str, Any]) -> list[str]:
    problems = []
    for name, got in found.items():
        want = golden.get(name)
        if want is None:
            problems.append(f"{name}: not in the golden file")
            continue
        for level in ("learned", "engine", "pipeline"):
            if got["digests"][level] == want["digests"][level]:
                continue
            first = next(
                (s for s, d in got["per_sku"][level].items() if want["per_sku"][level].get(s) != d), "?"
            )
            n = sum(want["per_sku"][level].get(s) != d for s, d in got["per_sku"][level].items())
            problems.append(f"{name}: {level} output differs for {n} SKUs (first {first})")
    return problems


def _timed_in(src: Path, name: str, args: argparse.Namespace, profile: int, label: str) -> dict[str, Any]:
    """One round of :func:`measure` (``--repeat 1``) for ``name`` in a fresh process on ``src``; its
    ``--profile`` output goes to stderr under ``label``."""
    cmd = [sys.executable, __file__, "--json", "--only", name, "--repeat", "1"]
    cmd += ["--data", str(args.data), "--models", str(args.models), "--profile", str(profile)]
    env = {"PYTHONPATH": str(src), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    if profile:
        print(done.stderr.replace("## profile: ", f"## profile ({label}): "), file=sys.stderr)
    return json.loads(done.stdout.strip().splitlines()[-1])


def _run(names: list[str], args: argparse.Namespace) -> tuple[dict[str, Any], dict[str, Any]]:
    """(this tree's measurements, the baseline's) per dataset. With a baseline, each round times both sides
    in fresh processes (one timing each; ``measure``'s first pass warms each process alike), old first in
    even rounds and new first in odd ones (A B, B A, ...), so load changes and the order hit both alike and
    neither side runs in a process the other rounds have grown; ``--parts`` then runs in this process."""
    found: dict[str, Any] = {}
    base: dict[str, Any] = {}
    here = Path(__file__).resolve().parents[1] / "src"
    for name in names:
        if args.baseline_src is None:
            got = measure(name, args.data, args.models, args.repeat, args.profile, args.parts)
            _keep_least(found, {name: got})
            continue
        for round_ in range(args.repeat):
            profile = args.profile if round_ == 0 else 0  # the first round only
            sides = [(base, args.baseline_src, "baseline"), (found, here, "this tree")]
            for into, src, label in sides if round_ % 2 == 0 else sides[::-1]:
                _keep_least(into, _timed_in(src, name, args, profile, label))
        if args.parts > 0:
            found[name]["parts"] = measure(name, args.data, args.models, 0, 0, args.parts)["parts"]
    return found, base


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("../shared/data/catalog"))
    parser.add_argument("--models", type=Path, default=Path("/tmp/gt_learned"), help="catalog_learned --work")
    parser.add_argument("--only", action="append", choices=DATASETS)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--record", type=Path, help="Write the output digests here.")
    parser.add_argument("--check", type=Path, help="Compare the output digests with this file.")
    parser.add_argument("--baseline-src", type=Path, help="Also time this src folder (subprocess).")
    parser.add_argument("--baseline-learned", help="Also time the learned engine as of this git revision.")
    parser.add_argument("--json", action="store_true", help="Print the raw measurements as JSON.")
    parser.add_argument(
        "--profile", type=int, default=0, metavar="N", help="Print the top N functions by own CPU (stderr)."
    )
    parser.add_argument(
        "--parts",
        type=int,
        default=0,
        metavar="N",
        help="Also time each part of the learned engine alone (least of N loops; this tree only).",
    )
    args = parser.parse_args()
    names = [n for n in DATASETS if not args.only or n in args.only]
    if args.baseline_learned:
        args.baseline_src = baseline_tree(args.baseline_learned, Path(__file__).resolve().parents[1])
    found, base = _run(names, args)
    if args.json:
        print(json.dumps(found))
        return
    print(
        "| dataset | SKUs | step | rule engine ms/SKU | learned ms/SKU | learned / rule |"
        + (" old learned ms/SKU | old / new |" if base else "")
    )
    print("|---|---|---|---|---|---|" + ("---|---|" if base else ""))
    for name, got in found.items():
        n = got["skus"]
        for step in ("engine", "pipeline"):
            rule, learned = got["offline"]["cpu_s"][step] / n, got["learned"]["cpu_s"][step] / n
            cells = [
                name,
                str(n),
                step,
                f"{1000 * rule:.2f}",
                f"{1000 * learned:.2f}",
                f"{learned / rule:.2f}",
            ]
            if base:
                old = base[name]["learned"]["cpu_s"][step] / n
                cells += [f"{1000 * old:.2f}", f"{old / learned:.2f}"]
            print("| " + " | ".join(cells) + " |")
    if any("parts" in got for got in found.values()):
        _print_parts(found)
    if base:
        problems = _check(found, base)
        print("\nold and new outputs: " + ("identical (learned, engine, pipeline)" if not problems else ""))
        for p in problems:
            print(p)
    if args.record is not None:
        args.record.write_text(json.dumps(found, indent=1), encoding="utf-8")
        print(f"wrote {args.record}")
    if args.check is not None:
        problems = _check(found, json.loads(args.check.read_text(encoding="utf-8")))
        for p in problems:
            print(p)
        print("identical to", args.check if not problems else "NOT identical")
        if problems:
            raise SystemExit(1)


if __name__ == "__main__":
    main()
