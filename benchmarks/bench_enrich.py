"""Benchmark: the offline catalog engine end to end (issue 16 item 3), as a ratio against the engine before
the speed work, measured in the same run.

    python -u benchmarks/bench_enrich.py [--data ../shared/data] [--ref 3a97a3c] [--repeat 3] [--profile]

* **samples** — WDC-PAVE ``train_large.jsonl`` (1,066 SKUs, built-in templates; the target sample),
  OA-Mine and AE-110K ``validation.jsonl`` (templates built from their train split) and the Open Food
  Facts TSV, each imported with this checkout's importers into a temp folder.
* **engines** — this checkout (``src/``) and the reference commit ``--ref`` (default ``3a97a3c``: main
  before the change) checked out with ``git worktree add --detach`` in a temp folder. Each runs
  ``run_enrich`` (offline engine, rule judge, default policy, ``workers=1``) in its own ``python``
  process; the time is the CPU time (``time.process_time``) of the ``run_enrich`` call only (imports and
  start-up excluded), best of ``--repeat``.
* **reported** — SKU/s per core = SKUs read / CPU seconds (SKUs without a template count: they are read
  and routed), the ratio new/ref, and whether the results files are byte-identical and the decisions
  (verdict, failure type, action per SKU and attribute) identical. The target is ≥ 500 SKU/s per core on
  WDC-PAVE; the script exits 1 when any decision differs.
* ``--profile`` — the top entries (own time) of ``cProfile`` over this checkout's engine on WDC-PAVE.

Times depend on the machine and its load (the development machine has 2 shared cores): compare ratios.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


RUN = r"""
import json, sys, time
from pathlib import Path
from groundtrace.catalog.pipeline import EnrichConfig, build_components, run_enrich
skus, out, templates = sys.argv[1], Path(sys.argv[2]), sys.argv[3] or None
config = EnrichConfig(templates=templates)
comp = build_components(config)
if out.exists():
    out.unlink()
t0, w0 = time.process_time(), time.perf_counter()
summary = run_enrich(Path(skus), out, config, components=comp)
print(json.dumps({"cpu": time.process_time() - t0, "wall": time.perf_counter() - w0,
                  "skus": summary.skus_read, "templated": summary.skus_processed - summary.no_template}))
"""


def _cli(*args: str) -> None:
    """``groundtrace ARGS`` of this checkout (the documented commands of docs/catalog-data.md)."""
    code = "import sys; from groundtrace.cli import main; sys.argv = ['groundtrace'] + sys.argv[1:]; main()"
    env = {"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin", "COLUMNS": "200"}
    proc = subprocess.run(
        [sys.executable, "-c", code, *args], check=False, env=env, capture_output=True, text=True
    )
    if proc.returncode not in (0, 1) or (proc.returncode == 1 and args[1] != "import"):  # 1: bad rows
        raise SystemExit(f"groundtrace {' '.join(args)}: {proc.stderr.strip()[-300:]}")


def _samples(data: Path, tmp: Path) -> list[tuple[str, Path, Path | None]]:
    """``(name, skus.jsonl, templates dir or None)`` per sample."""
    cat = data / "catalog"
    out: list[tuple[str, Path, Path | None]] = []
    _cli(
        "catalog",
        "import",
        "--format",
        "wdc-pave",
        str(cat / "wdc_pave" / "train_large.jsonl"),
        "--out",
        str(tmp / "wdc"),
    )
    out.append(("WDC-PAVE", tmp / "wdc" / "skus.jsonl", None))
    for name, fmt, folder in (("OA-Mine", "oa-mine", "oa_mine"), ("AE-110K", "ae-110k", "ae_110k")):
        train, val, tpl = tmp / f"{folder}_train", tmp / folder, tmp / f"{folder}_tpl"
        _cli("catalog", "import", "--format", fmt, str(cat / folder / "train.jsonl"), "--out", str(train))
        _cli("catalog", "import", "--format", fmt, str(cat / folder / "validation.jsonl"), "--out", str(val))
        _cli(
            "catalog",
            "templates",
            "from-gold",
            "--skus",
            str(train / "skus.jsonl"),
            "--gold",
            str(train / "gold.jsonl"),
            "--out",
            str(tpl),
        )
        out.append((name, val / "skus.jsonl", tpl))
    _cli(
        "catalog",
        "import",
        "--format",
        "openfoodfacts",
        str(cat / "openfoodfacts" / "products.tsv"),
        "--out",
        str(tmp / "off"),
    )
    out.append(("OFF", tmp / "off" / "skus.jsonl", None))
    return out


def _run(src: Path, skus: Path, out: Path, templates: Path | None) -> dict:  # type: ignore[type-arg]
    env = {"PYTHONPATH": str(src), "PATH": "/usr/bin:/bin"}
    proc = subprocess.run(
        [sys.executable, "-c", RUN, str(skus), str(out), str(templates or "")],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(f"{src}: run failed: {proc.stderr.strip().splitlines()[-1:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _decisions(path: Path) -> list[tuple]:  # type: ignore[type-arg]
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        v, d = r["verdict"], r["decision"]
        out.append((r["sku_id"], r["attribute"], v["verdict"], v.get("failure_type"), d["action"]))
    return out


def _profile(skus: Path) -> None:
    import cProfile
    import pstats

    sys.path.insert(0, str(ROOT / "src"))
    from groundtrace.catalog.pipeline import EnrichConfig, build_components, run_enrich

    config = EnrichConfig()
    comp = build_components(config)
    with tempfile.TemporaryDirectory() as tmp:
        prof = cProfile.Profile()
        prof.enable()
        run_enrich(skus, Path(tmp) / "out.jsonl", config, components=comp)
        prof.disable()
    print("\nprofile (this checkout, WDC-PAVE, workers=1), top entries by own time:")
    pstats.Stats(prof).sort_stats("tottime").print_stats(12)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--ref", default="3a97a3c", help="reference commit (the engine before the change)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args()
    failed = False
    with tempfile.TemporaryDirectory(prefix="bench_enrich_") as tmp_name:
        tmp = Path(tmp_name)
        ref = tmp / "ref"
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(ref), args.ref],
            check=True,
            capture_output=True,
        )
        try:
            samples = _samples(args.data, tmp)
            print(f"reference: {args.ref} (git worktree); CPU s of run_enrich, best of {args.repeat}")
            print(f"{'sample':10} {'SKUs':>5} {'ref SKU/s':>10} {'new SKU/s':>10} {'ratio':>6}  identical")
            for name, skus, templates in samples:
                best: dict[str, dict] = {}  # type: ignore[type-arg]
                for _ in range(args.repeat):
                    for label, src in (("ref", ref / "src"), ("new", ROOT / "src")):
                        got = _run(src, skus, tmp / f"{name}.{label}.jsonl", templates)
                        if label not in best or got["cpu"] < best[label]["cpu"]:
                            best[label] = got
                ref_out, new_out = tmp / f"{name}.ref.jsonl", tmp / f"{name}.new.jsonl"
                same_bytes = ref_out.read_bytes() == new_out.read_bytes()
                same_decisions = _decisions(ref_out) == _decisions(new_out)
                failed |= not same_decisions
                rate = {k: v["skus"] / v["cpu"] for k, v in best.items()}
                print(
                    f"{name:10} {best['new']['skus']:>5} {rate['ref']:>10.0f} {rate['new']:>10.0f} "
                    f"{rate['new'] / rate['ref']:>5.2f}x  decisions {'yes' if same_decisions else 'NO'}, "
                    f"bytes {'yes' if same_bytes else 'no'} ({best['new']['templated']} with a template)"
                )
                if name == "WDC-PAVE":
                    met = "met" if rate["new"] >= 500 else "NOT met"
                    print(f"{'':10} target >= 500 SKU/s per core on WDC-PAVE: {met}")
            if args.profile:
                _profile(samples[0][1])
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(ref)], check=False)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
