"""``catalog enrich --db URL --runner ray``: the same per-SKU pipeline as Ray tasks; the driver writes.

``ray_outcomes(todo, config, address=None, workers=N)`` yields one :class:`SkuOutcome` per SKU, as tasks
finish. SKUs go out in chunks of :data:`CHUNK` (one task each, at most ``2 × workers`` tasks in flight);
every worker process builds the components (templates, sources, Scout, Judge, policy) once per
configuration and keeps them. Outcomes come back to the driver, which is the store's only writer, so
the database never sees more than one connection per run.

* ``address=None`` starts a private local Ray instance (``num_cpus=workers``, no dashboard, bound to
  127.0.0.1) and stops it at the end; its workers import this groundtrace (PYTHONPATH is passed on).
* ``address="auto"`` or ``"ray://head:10001"`` joins an existing cluster (docs/catalog-store.md): every
  node needs ``groundtrace`` installed and the input files (templates, feed, corpus, images) at the same
  paths — they are sent as absolute paths.

Ray is optional (``pip install 'groundtrace[ray]'``) and imported only here.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import groundtrace
from groundtrace.catalog.model import SKU
from groundtrace.catalog.pipeline import Components, EnrichConfig, build_components
from groundtrace.catalog.store.sku_step import process_one
from groundtrace.catalog.store.store import SkuOutcome

CHUNK = 8  # SKUs per Ray task: amortises scheduling without starving workers of work

_COMPONENTS: dict[str, Components] = {}


def _absolute(config: EnrichConfig) -> EnrichConfig:
    updates = {
        name: Path(value).resolve()
        for name in ("templates", "feed", "corpus", "images", "policy")
        if isinstance(value := getattr(config, name), Path) and (name != "policy" or Path(value).exists())
    }
    return config.model_copy(update=updates)


def process_chunk(config_json: str, skus_json: list[str]) -> list[SkuOutcome]:
    """The Ray task: Scout → Judge → policy for a chunk of SKUs with this worker's cached components."""
    comp = _COMPONENTS.get(config_json)
    if comp is None:
        comp = _COMPONENTS[config_json] = build_components(EnrichConfig.model_validate_json(config_json))
    return [process_one(SKU.model_validate_json(s), comp, measure_usage=True) for s in skus_json]


def _import_ray() -> Any:
    try:
        import ray  # deferred: Ray is the optional [ray] extra
    except ImportError as exc:
        raise ImportError("--runner ray needs Ray: pip install 'groundtrace[ray]'") from exc
    return ray


def ray_outcomes(
    todo: list[SKU], config: EnrichConfig, *, address: str | None = None, workers: int = 2
) -> Iterator[SkuOutcome]:
    """Outcomes of ``todo`` computed by Ray tasks (module docstring)."""
    ray = _import_ray()
    started = False
    if not ray.is_initialized():
        if address:
            ray.init(address=address, logging_level="WARNING", log_to_driver=False)
        else:
            # no usage report to Ray's servers from the private instance (offline; Ray's own ray.init
            # does the same for released wheels, this keeps it so) unless the user chose otherwise
            os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
            src = str(Path(groundtrace.__file__).resolve().parents[1])
            ray.init(
                num_cpus=workers,
                include_dashboard=False,
                _node_ip_address="127.0.0.1",
                logging_level="WARNING",
                log_to_driver=False,
                runtime_env={"env_vars": {"PYTHONPATH": src}},
            )
        started = True
    try:
        task = ray.remote(process_chunk)
        config_json = _absolute(config).model_dump_json()
        chunks = [[s.model_dump_json() for s in todo[i : i + CHUNK]] for i in range(0, len(todo), CHUNK)]
        pending: list[Any] = []
        window = 2 * max(1, workers)
        for chunk in chunks:
            pending.append(task.remote(config_json, chunk))
            if len(pending) >= window:
                ready, pending = ray.wait(pending, num_returns=1)
                for ref in ready:
                    yield from ray.get(ref)
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            for ref in ready:
                yield from ray.get(ref)
    finally:
        if started:
            ray.shutdown()
