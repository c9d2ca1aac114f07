"""Write policy: every routing branch (table-driven), YAML configuration, clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groundtrace.catalog.model import (
    Action,
    AttributeSpec,
    Candidate,
    CandidateStatus,
    FailureType,
    Verdict,
    VerdictLabel,
)
from groundtrace.catalog.policy import PolicyError, WritePolicy, default_policy_path, load_policy

PLAIN = AttributeSpec(slug="flavor", name="Flavor")
SAFETY = AttributeSpec(
    slug="allergens",
    name="Allergens",
    type="enum",
    allowed_values=["milk"],
    multi_valued=True,
    safety_critical=True,
)
P, F, U, N = VerdictLabel.PASS, VerdictLabel.FAIL, VerdictLabel.UNVERIFIED, VerdictLabel.UNCERTAIN
W, B, R = Action.WRITE, Action.BLOCK, Action.REVIEW


def _route(
    spec: AttributeSpec,
    status: str,
    conf: float,
    label: VerdictLabel,
    verified: bool,
    policy: WritePolicy | None = None,
    category: str = "grocery",
) -> tuple[Action, str]:
    value = None if status != "extracted" else (["milk"] if spec.multi_valued else "vanilla")
    cand = Candidate(
        sku_id="S",
        attribute=spec.slug,
        value=value,
        confidence=conf,
        status=CandidateStatus(status),
        evidence=[],
    )
    ver = Verdict(
        sku_id="S",
        attribute=spec.slug,
        verdict=label,
        quote_verified=verified,
        failure_type=FailureType.HALLUCINATION if label == F else None,
    )
    d = (policy or load_policy()).decide(cand, ver, spec, category)
    return d.action, d.reason


@pytest.mark.parametrize(
    ("spec", "status", "conf", "label", "verified", "action", "reason_part"),
    [
        # abstentions: no value, whatever the verdict
        (PLAIN, "not_found", 0.0, P, False, B, "no value (not_found)"),
        (SAFETY, "conflict", 0.0, P, False, B, "no value (conflict)"),
        (PLAIN, "identity_mismatch", 0.0, F, False, B, "no value"),
        # plain attributes
        (PLAIN, "extracted", 0.9, P, True, W, "verdict PASS"),
        (
            PLAIN,
            "extracted",
            0.7,
            U,
            True,
            W,
            "verdict UNVERIFIED, confidence 0.70 >= 0.70",
        ),  # θ is inclusive
        (PLAIN, "extracted", 0.9, N, True, R, "verdict UNCERTAIN"),
        (PLAIN, "extracted", 0.99, F, True, B, "FAIL/HALLUCINATION"),
        (PLAIN, "extracted", 0.69, P, True, B, "confidence 0.69 < 0.70"),
        (PLAIN, "extracted", 0.5, N, True, B, "confidence 0.50 < 0.70"),  # below θ blocks before UNCERTAIN
        # safety-critical
        (SAFETY, "extracted", 0.9, P, True, W, "safety-critical, PASS with verified quote"),
        (SAFETY, "extracted", 0.9, U, True, R, "verdict UNVERIFIED is not PASS"),
        (SAFETY, "extracted", 0.9, N, True, R, "verdict UNCERTAIN is not PASS"),
        (SAFETY, "extracted", 0.9, P, False, R, "quote not verified"),
        (SAFETY, "extracted", 0.5, P, True, R, "confidence 0.50 < 0.70"),
        (SAFETY, "extracted", 0.9, F, True, B, "safety-critical, verdict FAIL"),
    ],
)
def test_default_routing_table(
    spec: AttributeSpec,
    status: str,
    conf: float,
    label: VerdictLabel,
    verified: bool,
    action: Action,
    reason_part: str,
) -> None:
    got, reason = _route(spec, status, conf, label, verified)
    assert got == action
    assert reason_part in reason


def test_builtin_file_is_the_documented_default() -> None:
    assert load_policy(default_policy_path()) == WritePolicy()
    assert load_policy().threshold == 0.7


def test_modified_yaml_changes_routing(tmp_path: Path) -> None:
    text = default_policy_path().read_text(encoding="utf-8")
    strict = text.replace("threshold: 0.7", "threshold: 0.95").replace(
        "UNVERIFIED: WRITE", "UNVERIFIED: REVIEW"
    )
    strict = strict.replace("name: default", "name: strict")
    assert strict != text
    path = tmp_path / "strict.yaml"
    path.write_text(strict, encoding="utf-8")
    policy = load_policy(path)
    assert _route(PLAIN, "extracted", 0.9, U, True)[0] == W  # default
    assert _route(PLAIN, "extracted", 0.96, U, True, policy)[0] == R
    assert _route(PLAIN, "extracted", 0.9, P, True, policy) == (B, "confidence 0.90 < 0.95")


def test_overrides_by_attribute_and_category(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(
        "name: ovr\ncategories:\n  alcohol: {threshold: 0.9}\n"
        "attributes:\n  flavor: {safety_critical: true}\n  allergens: {threshold: 0.3}\n",
        encoding="utf-8",
    )
    policy = load_policy(path)
    assert policy.theta("alcohol", "abv") == 0.9 and policy.theta("grocery", "abv") == 0.7
    assert policy.theta("alcohol", "allergens") == 0.3  # attribute beats category
    # flavor made safety-critical: UNVERIFIED now goes to review instead of being written
    assert _route(PLAIN, "extracted", 0.9, U, True, policy)[0] == R
    assert _route(SAFETY, "extracted", 0.4, P, True, policy)[0] == W


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("threshold: 1.5\n", "threshold"),
        ("verdicts: {PASS: WRITE}\n", "missing FAIL"),
        ("verdicts: {PASS: PUBLISH, FAIL: BLOCK, UNVERIFIED: WRITE, UNCERTAIN: REVIEW}\n", "verdicts.PASS"),
        ("thresold: 0.5\n", ":1: thresold: unknown key (did you mean 'threshold'?)"),
        ("name: a\nname: b\n", ":2: duplicate key 'name'"),
        ("name: [unclosed\n", "invalid YAML"),
        ("- a list\n", "mapping"),
    ],
)
def test_bad_policy_files_name_the_file(tmp_path: Path, body: str, message: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(body, encoding="utf-8")
    with pytest.raises(PolicyError) as err:
        load_policy(path)
    assert str(path) in str(err.value) and message in str(err.value)


# -- invariants over every combination (hypothesis) ---------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(
    status=st.sampled_from(list(CandidateStatus)),
    label=st.sampled_from(list(VerdictLabel)),
    conf=st.floats(0.0, 1.0),
    verified=st.booleans(),
    safety=st.booleans(),
    theta=st.floats(0.0, 1.0),
    unverified_action=st.sampled_from(list(Action)),
)
def test_policy_invariants(
    status: CandidateStatus,
    label: VerdictLabel,
    conf: float,
    verified: bool,
    safety: bool,
    theta: float,
    unverified_action: Action,
) -> None:
    verdicts = {P: W, F: B, U: unverified_action, N: R}
    policy = WritePolicy(threshold=theta, verdicts=verdicts)
    action, reason = _route(SAFETY if safety else PLAIN, status.value, conf, label, verified, policy)
    assert reason
    if action == W:  # a WRITE always has a value, a non-FAIL verdict and confidence >= θ
        assert status == CandidateStatus.EXTRACTED and label != F and conf >= theta
        if safety:
            assert label == P and verified
    if status != CandidateStatus.EXTRACTED or label == F:
        assert action == B


def test_builtin_cautious_policy_writes_only_pass(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cautious = load_policy("cautious")
    assert cautious.name == "cautious"
    assert _route(PLAIN, "extracted", 0.95, U, True, cautious)[0] == R  # default would WRITE this
    assert _route(PLAIN, "extracted", 0.95, U, True)[0] == W
    assert _route(PLAIN, "extracted", 0.9, P, True, cautious)[0] == W
    assert _route(PLAIN, "extracted", 0.5, P, True, cautious)[0] == B
    assert _route(SAFETY, "extracted", 0.9, U, True, cautious)[0] == R
    assert load_policy("default") == WritePolicy()
    # a file of that name in the working directory wins over the built-in
    (tmp_path / "cautious").write_text("name: mine\nthreshold: 0.9\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert load_policy("cautious").name == "mine"
    with pytest.raises(PolicyError, match="missing.yaml: file not found"):
        load_policy(tmp_path / "missing.yaml")


# -- conflicts and sibling-variant values (issue 24) --------------------------------------------------------
def _ev(ref: str, quote: str) -> object:
    from groundtrace.catalog.model import Evidence

    source = "catalog" if ref.startswith("catalog:") else "syndicated"
    return Evidence(
        source=source, source_type="catalog" if source == "catalog" else "hq", source_ref=ref, quote=quote
    )


@pytest.mark.parametrize("name", ["default", "cautious"])
def test_conflict_with_both_sides_goes_to_review(name: str) -> None:
    cand = Candidate(
        sku_id="S",
        attribute="color",
        status=CandidateStatus.CONFLICT,
        evidence=[_ev("catalog:spec:Color", "Color: Black"), _ev("feed.csv#1", "Color: Red")],
        note="conflict: the catalog record says 'black'; the GTIN-matched syndicated feed says 'red'",
    )
    ver = Verdict(sku_id="S", attribute="color", verdict=P, quote_verified=True)
    d = load_policy(name).decide(cand, ver, PLAIN, "grocery")
    assert d.action == R and d.reason.startswith("sources disagree (2 sides): conflict: the catalog record")
    # a conflict without evidence (nothing to show) stays an abstention
    bare = cand.model_copy(update={"evidence": []})
    assert load_policy(name).decide(bare, ver, PLAIN, "grocery").action == B


def test_policy_cannot_write_a_conflict(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text("name: x\nconflict: WRITE\n", encoding="utf-8")
    with pytest.raises(PolicyError, match="conflict must be REVIEW or BLOCK"):
        load_policy(path)


@pytest.mark.parametrize(("label", "expected"), [(P, R), (U, R), (N, R), (F, B)])
def test_sibling_variant_value_is_never_written(
    tmp_path: Path, label: VerdictLabel, expected: Action
) -> None:
    from groundtrace.catalog.identity import FLAG_SIBLING_VARIANT

    eager = tmp_path / "eager.yaml"
    eager.write_text(
        "name: eager\nthreshold: 0.0\n"
        "verdicts: {PASS: WRITE, UNVERIFIED: WRITE, UNCERTAIN: WRITE, FAIL: WRITE}\n",
        encoding="utf-8",
    )
    cand = Candidate(
        sku_id="S",
        attribute="flavor",
        value="vanilla",
        confidence=0.99,
        status=CandidateStatus.EXTRACTED,
        note=f"{FLAG_SIBLING_VARIANT}: value from a sibling-variant page",
    )
    ver = Verdict(sku_id="S", attribute="flavor", verdict=label, quote_verified=True)
    for policy in (load_policy("default"), load_policy("cautious"), load_policy(eager)):
        assert policy.decide(cand, ver, PLAIN, "grocery").action == expected, policy.name
