"""Write policies in memory (issue 25): ``EnrichConfig(policy=WritePolicy(...))`` runs exactly as the same
policy read from a YAML file, through one worker and through process workers (the config crosses as JSON)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from groundtrace.catalog import enrich_list
from groundtrace.catalog.demo_catalog import SKUS, write_demo_catalog
from groundtrace.catalog.model import Action
from groundtrace.catalog.pipeline import EnrichConfig, build_components, run_enrich
from groundtrace.catalog.policy import PolicyError, WritePolicy, load_policy, resolve_policy

STRICT = WritePolicy(name="strict", threshold=0.95)


def test_resolve_policy_takes_every_spelling(tmp_path: Path) -> None:
    assert resolve_policy(STRICT) is STRICT  # in memory: as it is
    assert resolve_policy({"name": "strict", "threshold": 0.95}) == STRICT
    assert resolve_policy(None) == load_policy(None)
    assert resolve_policy("cautious").name == "cautious"
    path = tmp_path / "strict.yaml"
    path.write_text(yaml.safe_dump(STRICT.model_dump(mode="json")), encoding="utf-8")
    assert resolve_policy(path) == STRICT
    with pytest.raises(PolicyError, match="in-memory write policy: threshold"):
        resolve_policy({"threshold": 2})


def test_config_holds_a_policy_in_memory_and_as_json() -> None:
    config = EnrichConfig(policy=STRICT)
    assert config.policy is STRICT and build_components(config).policy == STRICT
    again = EnrichConfig.model_validate_json(config.model_dump_json())  # what a process worker receives
    assert again.policy == STRICT
    assert EnrichConfig(policy="cautious").policy == Path("cautious")  # a name or file stays a path


def test_in_memory_policy_runs_as_its_yaml_file(tmp_path: Path) -> None:
    paths = write_demo_catalog(tmp_path / "demo")
    base = EnrichConfig(feed=paths.feed, corpus=paths.corpus)
    policy_file = tmp_path / "strict.yaml"
    policy_file.write_text(yaml.safe_dump(STRICT.model_dump(mode="json")), encoding="utf-8")
    outs = {}
    for name, update in (
        ("file", {"policy": policy_file}),
        ("memory", {"policy": STRICT}),
        ("memory_processes", {"policy": STRICT, "workers": 2}),
        ("default", {}),
    ):
        outs[name] = tmp_path / f"{name}.jsonl"
        run_enrich(paths.skus, outs[name], base.model_copy(update=update))
    assert outs["memory"].read_bytes() == outs["file"].read_bytes()
    assert outs["memory_processes"].read_bytes() == outs["file"].read_bytes()
    assert outs["memory"].read_bytes() != outs["default"].read_bytes()  # θ 0.95 blocks more than 0.7
    # the resume fingerprint hashes the policy's content: file and memory are the same run options
    meta = {n: Path(f"{p}.run.json").read_text(encoding="utf-8") for n, p in outs.items()}
    assert meta["memory"] == meta["file"]


def test_enrich_list_with_an_in_memory_policy() -> None:
    results = enrich_list(SKUS[:4], EnrichConfig(policy=WritePolicy(threshold=1.0)))
    extracted = [r for r in results if r.candidate.value is not None and r.candidate.confidence < 1.0]
    assert results and extracted
    assert all(r.decision.policy == "default" for r in results)
    assert all(r.decision.action != Action.WRITE for r in extracted)  # nothing below θ 1.0 is written
