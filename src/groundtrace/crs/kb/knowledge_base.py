"""The in-memory knowledge base every CRS component reads: POIs, their reviews, fast spatial queries.

Building it from Yelp files and saving/loading it (SQLite, with a content hash) live in
``groundtrace.crs.kb.yelp`` and ``groundtrace.crs.kb.store``; this module only holds and queries.

Content hash: sha256 over the canonical JSON (sorted keys, no spaces) of every POI then every review,
each sorted by id, then the stance model's name and every stored sentence stance (review id, start, end,
aspects, polarity, score; by review id and start) — identical content gives an identical hash whatever the
load order, and the same reviews with other stances (another model or stance version) get another hash.
Mined attributes live in ``POI.attributes`` (with their evidence), so they are covered by the POI part.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Iterable

import numpy as np

from groundtrace.crs.kb.geo import haversine_km_many
from groundtrace.crs.kb.stance import DEFAULT_MODEL, SentenceStance, annotate, make_model, stance_at
from groundtrace.crs.schema import POI, Review, ReviewRef


class KnowledgeBase:
    """POIs and reviews with id lookups, per-city/type indexes and within-radius queries."""

    def __init__(self, pois: Iterable[POI], reviews: Iterable[Review], *, name: str = "kb") -> None:
        self.name = name
        self.pois: dict[str, POI] = {}
        for poi in pois:
            if poi.poi_id in self.pois:
                raise ValueError(f"duplicate poi_id {poi.poi_id!r}")
            self.pois[poi.poi_id] = poi
        self.reviews: dict[str, Review] = {}
        self._reviews_by_poi: dict[str, list[str]] = defaultdict(list)
        for review in reviews:
            if review.review_id in self.reviews:
                raise ValueError(f"duplicate review_id {review.review_id!r}")
            if review.poi_id not in self.pois:
                raise ValueError(f"review {review.review_id!r} refers to unknown poi {review.poi_id!r}")
            self.reviews[review.review_id] = review
            self._reviews_by_poi[review.poi_id].append(review.review_id)
        for ids in self._reviews_by_poi.values():
            ids.sort()
        self._by_city_type: dict[tuple[str, str], list[str]] = defaultdict(list)
        for poi in self.pois.values():
            self._by_city_type[(poi.city, poi.poi_type)].append(poi.poi_id)
        for ids in self._by_city_type.values():
            ids.sort()
        self._ids = np.array(sorted(self.pois), dtype=object)
        self._lats = np.array([self.pois[i].lat for i in self._ids], dtype=float)
        self._lons = np.array([self.pois[i].lon for i in self._ids], dtype=float)
        self._hash: str | None = None
        self._stances: dict[str, list[SentenceStance]] | None = None
        self.stance_model: str | None = None

    # -- sentence stance -----------------------------------------------------------------------------
    def set_stances(self, stances: dict[str, list[SentenceStance]], model: str) -> None:
        """Attach stored sentence stances (``groundtrace.crs.kb.stance``); every review must have an entry."""
        missing = [rid for rid in self.reviews if rid not in stances]
        if missing:
            raise ValueError(f"{len(missing)} review(s) have no sentence stance, e.g. {missing[0]!r}")
        self._stances = {rid: stances[rid] for rid in self.reviews}
        self.stance_model = model
        self._hash = None  # the hash covers the stances

    @property
    def stances(self) -> dict[str, list[SentenceStance]]:
        """``{review_id: [SentenceStance, ...]}``: stored with the KB, or computed once on first use
        (:func:`groundtrace.crs.kb.stance.annotate`, default model) for a KB made in memory."""
        if self._stances is None:
            model = make_model(DEFAULT_MODEL, self.reviews.values())
            self.set_stances(annotate(self.reviews.values(), model), model.name)
        assert self._stances is not None
        return self._stances

    def sentence_stance(self, review_id: str, start: int) -> SentenceStance | None:
        """The stance of the sentence of ``review_id`` containing offset ``start`` (None when unknown)."""
        return stance_at(self.stances, review_id, start)

    # -- lookups -----------------------------------------------------------------------------------
    def poi(self, poi_id: str) -> POI:
        return self.pois[poi_id]

    def review(self, review_id: str) -> Review:
        return self.reviews[review_id]

    def reviews_of(self, poi_id: str) -> list[Review]:
        """Reviews of ``poi_id`` sorted by review id (stable, deterministic)."""
        return [self.reviews[r] for r in self._reviews_by_poi.get(poi_id, [])]

    def cities(self) -> list[str]:
        return sorted({city for city, _ in self._by_city_type})

    def pois_in(self, city: str, poi_type: str) -> list[POI]:
        """POIs of one city and type, sorted by id."""
        return [self.pois[i] for i in self._by_city_type.get((city, poi_type), [])]

    def within_radius(self, lat: float, lon: float, radius_km: float) -> list[tuple[str, float]]:
        """``(poi_id, distance_km)`` of every POI within ``radius_km`` of the point, nearest first."""
        if len(self._ids) == 0:
            return []
        dist = haversine_km_many(lat, lon, self._lats, self._lons)
        idx = np.nonzero(dist <= radius_km)[0]
        order = idx[np.argsort(dist[idx], kind="stable")]
        return [(str(self._ids[i]), float(dist[i])) for i in order]

    # -- identity ----------------------------------------------------------------------------------
    @property
    def content_hash(self) -> str:
        """sha256 of the canonical JSON of all POIs, all reviews and all sentence stances (see module
        docstring; the stances are computed first when the KB has none yet)."""
        if self._hash is None:
            stances = self.stances
            digest = hashlib.sha256()
            for pid in sorted(self.pois):
                digest.update(_canonical(self.pois[pid].model_dump(mode="json")))
            for rid in sorted(self.reviews):
                digest.update(_canonical(self.reviews[rid].model_dump(mode="json")))
            digest.update(_canonical({"stance_model": self.stance_model or ""}))
            for rid in sorted(stances):
                rows = [[s.start, s.end, list(s.aspects), s.polarity, s.score + 0.0] for s in stances[rid]]
                digest.update(_canonical([rid, sorted(rows)]))
            self._hash = digest.hexdigest()
        return self._hash

    def summary(self) -> dict[str, object]:
        """Counts per city and type, review totals and the content hash."""
        per_city: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        for poi in self.pois.values():
            per_city[poi.city][poi.poi_type] += 1
        return {
            "name": self.name,
            "pois": len(self.pois),
            "reviews": len(self.reviews),
            "cities": {c: dict(t) for c, t in sorted(per_city.items())},
            "content_hash": self.content_hash,
        }

    def __len__(self) -> int:
        return len(self.pois)


def _canonical(obj: object) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8") + b"\n"


def open_review_refs(
    kb: KnowledgeBase, base: dict[str, ReviewRef], pool: list[str], per_poi: int = 5
) -> dict[str, ReviewRef]:
    """Extend a dialogue's ``[Rn]`` numbering to an open-set pool, deterministically.

    Keeps ``base`` as is; then, for each POI of ``pool`` in the given order, appends up to ``per_poi``
    of its reviews (sorted by id) that ``base`` does not already tag, numbering on from ``len(base) + 1``.
    """
    refs = dict(base)
    tagged = {ref.review_id for ref in base.values()}
    n = len(refs)
    for poi_id in pool:
        for review in kb.reviews_of(poi_id)[:per_poi]:
            if review.review_id in tagged:
                continue
            n += 1
            refs[f"R{n}"] = ReviewRef(review_id=review.review_id, poi_id=poi_id)
            tagged.add(review.review_id)
    return refs
