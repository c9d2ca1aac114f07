"""Logging runs and reports to MLflow (``--log mlflow``; the ``[tracking]`` extra, ``mlflow-skinny``).

Where (:func:`tracking_uri`): ``--mlflow-uri`` (a folder, or any MLflow tracking URI — ``sqlite:///…``,
``http(s)://server``, ``file:…``), else ``$MLFLOW_TRACKING_URI``, else the folder ``./mlruns``. A *folder*
is a local store: runs in ``FOLDER/mlflow.db`` (SQLite; MLflow ≥ 3.7 refuses its old plain-file backend
unless ``MLFLOW_ALLOW_FILE_STORE=true``, and SQLite is its default now), artifacts in ``FOLDER/artifacts/``.
Nothing is sent anywhere unless the URI names a server: MLflow's own usage telemetry (on by default since
MLflow 3.2; it starts a thread at ``import mlflow`` that fetches a config from ``mlflow-telemetry.io`` and
posts usage events) is switched off by setting ``MLFLOW_DISABLE_TELEMETRY=true`` before the import, unless
the variable is already set (an explicit ``MLFLOW_DISABLE_TELEMETRY=false`` opts in).

What (:func:`log_runs`), with :class:`mlflow.MlflowClient` (no global MLflow state is touched):

* one MLflow run per run folder, named by the run's label: **params** — system, label, setting, split,
  seed, limit, workers, dataset, dataset hash, KB hash, run key and the system's config as
  ``config.<key>``; **metrics** — every aggregate with a value (``@`` written ``_at_``: MLflow keys
  allow only ``[A-Za-z0-9_./ :-]``, so ``recall@1`` is ``recall_at_1``), ``n_turns``, ``n_dialogues``,
  ``unscorable_turns``, latency mean/p95 (s), tokens and cost (USD); **tags** — groundtrace version,
  ``mlflow.source.git.commit`` when known; **artifacts** — ``run.json``, ``scores.json``,
  ``dialogues.json`` under ``run/``;
* with a report (``crs run --config``), a parent run named after the experiment holding the report
  folder's files under ``report/`` (with its ``dialogues/`` pages, so ``report.html``'s links work) and the
  config file under ``config/``; the runs above are its children
  (tag ``mlflow.parentRunId``).
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

INSTALL_HINT = (
    "MLflow logging needs the [tracking] extra: pip install 'groundtrace[tracking]' (mlflow-skinny)"
)
DEFAULT_FOLDER = "mlruns"
MAX_PARAM_CHARS = 6000  # MLflow's limit on a param value
RUN_ARTIFACTS = ("run.json", "scores.json", "dialogues.json")


def import_mlflow() -> Any:
    """``import mlflow`` with its usage telemetry off (module docstring); the install hint without it."""
    os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
    try:
        import mlflow  # optional extra [tracking]: imported only for --log mlflow
    except ImportError as exc:
        raise ImportError(INSTALL_HINT) from exc
    return mlflow


def is_uri(text: str) -> bool:
    """Whether ``text`` is an MLflow tracking URI (``scheme://…`` or ``file:…``) rather than a folder."""
    return "://" in text or text.startswith("file:") or text == "databricks"


def tracking_uri(uri: str | None = None, env: Mapping[str, str] | None = None) -> tuple[str, Path | None]:
    """``(tracking URI, artifact folder or None)`` for ``uri`` (module docstring: a folder → its SQLite
    store and ``artifacts/``; a URI as given, the server choosing where artifacts go)."""
    env = os.environ if env is None else env
    chosen = uri or env.get("MLFLOW_TRACKING_URI") or DEFAULT_FOLDER
    if is_uri(chosen):
        return chosen, None
    folder = Path(chosen).expanduser().resolve()
    folder.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{folder / 'mlflow.db'}", folder / "artifacts"


def metric_key(name: str) -> str:
    """An MLflow-safe metric or param key: ``recall@1`` → ``recall_at_1``; other characters → ``_``."""
    return re.sub(r"[^A-Za-z0-9_./ :-]", "_", name.replace("@", "_at_"))


def _param_value(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= MAX_PARAM_CHARS else text[: MAX_PARAM_CHARS - 1] + "…"


def run_params(info: Mapping[str, Any]) -> dict[str, str]:
    """The params of one run folder's ``run.json`` (module docstring)."""
    run_cfg = info.get("run_config") or {}
    params: dict[str, Any] = {
        "system": info.get("system"),
        "label": info.get("label") or info.get("system"),
        "setting": info.get("setting"),
        "split": info.get("split"),
        "seed": (run_cfg.get("run") or {}).get("seed"),
        "limit": info.get("limit"),
        "workers": info.get("workers"),
        "mode": info.get("mode", "run"),
        "dataset": info.get("dataset"),
        "dataset_hash": info.get("dataset_hash"),
        "kb_hash": info.get("kb_hash"),
        "run_key": info.get("run_key"),
        "entailment": info.get("entailment"),
    }
    for key, value in (info.get("config") or {}).items():
        params[f"config.{key}"] = value
    return {metric_key(k): _param_value(v) for k, v in params.items() if v is not None}


def run_metrics(scores: Mapping[str, Any], info: Mapping[str, Any]) -> dict[str, float]:
    """The metrics of one run folder: aggregates with a value, counts, latency and cost."""
    out: dict[str, float] = {}
    for name, value in (scores.get("aggregate") or {}).items():
        if isinstance(value, int | float) and not isinstance(value, bool):
            out[metric_key(name)] = float(value)
    counts = info.get("counts") or {}
    usage = info.get("usage") or {}
    latency = usage.get("latency_s") or {}
    extra = {
        "n_turns": scores.get("n_turns"),
        "n_dialogues": scores.get("n_dialogues"),
        "unscorable_turns": counts.get("unscorable_turns"),
        "latency_mean_s": latency.get("mean"),
        "latency_p95_s": latency.get("p95"),
        "prompt_tokens": usage.get("prompt_tokens"),
        "completion_tokens": usage.get("completion_tokens"),
        "cost_usd": usage.get("cost_usd"),
    }
    out.update(
        {k: float(v) for k, v in extra.items() if isinstance(v, int | float) and not isinstance(v, bool)}
    )
    return out


@dataclass
class TrackingResult:
    """Where the runs went: the tracking URI, experiment id, parent run id (or None) and child run ids."""

    uri: str
    experiment_id: str
    parent_run_id: str | None = None
    run_ids: dict[str, str] = field(default_factory=dict)  # run folder -> MLflow run id


def _experiment(client: Any, name: str, artifacts: Path | None) -> str:
    found = client.get_experiment_by_name(name)
    if found is not None:
        return str(found.experiment_id)
    location = artifacts.as_uri() if artifacts is not None else None
    return str(client.create_experiment(name, artifact_location=location))


def _tags(info: Mapping[str, Any]) -> dict[str, str]:
    prov = info.get("provenance") or {}
    tags = {"groundtrace.version": str(prov.get("groundtrace", ""))}
    commit = (prov.get("git") or {}).get("commit")
    if commit:
        tags["mlflow.source.git.commit"] = str(commit)
    return {k: v for k, v in tags.items() if v}


def _log_batch(
    client: Any, run_id: str, params: dict[str, str], metrics: dict[str, float], tags: dict[str, str]
):
    from mlflow.entities import Metric, Param, RunTag  # optional extra [tracking], see import_mlflow

    now = int(time.time() * 1000)
    client.log_batch(
        run_id,
        metrics=[Metric(k, v, now, 0) for k, v in metrics.items()],
        params=[Param(k, v) for k, v in params.items()],
        tags=[RunTag(k, v) for k, v in tags.items()],
    )


def log_runs(
    run_dirs: Sequence[Path | str],
    *,
    uri: str | None = None,
    experiment: str = "groundtrace-crs",
    reports: Mapping[str, Path | str] | None = None,
    config_file: Path | str | None = None,
    parent_name: str | None = None,
    parent_params: Mapping[str, Any] | None = None,
) -> TrackingResult:
    """Log run folders (and reports) to MLflow (module docstring); returns the ids.

    ``reports`` maps an artifact sub-folder (``""``: ``report/`` itself; e.g. a split name) to a report
    folder whose files are logged on the parent run. A parent run is made when ``reports`` or
    ``parent_name`` is given. ``ImportError`` with the install hint when MLflow is not installed.
    """
    mlflow = import_mlflow()
    tracking, artifacts = tracking_uri(uri)
    client = mlflow.MlflowClient(tracking_uri=tracking)
    experiment_id = _experiment(client, experiment, artifacts)
    result = TrackingResult(tracking, experiment_id)
    parent_id = None
    if reports or parent_name is not None:
        parent = client.create_run(experiment_id, run_name=parent_name or experiment)
        parent_id = result.parent_run_id = parent.info.run_id
        params = {metric_key(k): _param_value(v) for k, v in (parent_params or {}).items() if v is not None}
        _log_batch(client, parent_id, params, {"runs": float(len(run_dirs))}, {})
    for run_dir in map(Path, run_dirs):
        info = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
        scores = json.loads((run_dir / "scores.json").read_text(encoding="utf-8"))
        name = f"{info.get('label') or info.get('system')} · {info.get('setting')}"
        tags = _tags(info) | ({"mlflow.parentRunId": parent_id} if parent_id else {})
        run = client.create_run(experiment_id, run_name=name, tags=tags)
        run_id = run.info.run_id
        _log_batch(client, run_id, run_params(info), run_metrics(scores, info), {})
        for artifact in RUN_ARTIFACTS:
            if (run_dir / artifact).is_file():
                client.log_artifact(run_id, str(run_dir / artifact), artifact_path="run")
        client.set_terminated(run_id)
        result.run_ids[str(run_dir)] = run_id
    if parent_id is not None:
        for sub, folder in (reports or {}).items():
            where = f"report/{sub}".rstrip("/")
            for path in sorted(Path(folder).iterdir()):
                if path.is_file():
                    client.log_artifact(parent_id, str(path), artifact_path=where)
            pages = Path(folder) / "dialogues"  # the pages report.html links to
            if pages.is_dir():
                client.log_artifacts(parent_id, str(pages), artifact_path=f"{where}/dialogues")
        if config_file is not None:
            client.log_artifact(parent_id, str(config_file), artifact_path="config")
        client.set_terminated(parent_id)
    return result
