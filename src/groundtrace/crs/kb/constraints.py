"""Does a POI satisfy a user constraint? One function shared by the builder, the oracle and the metrics.

``satisfies(poi, c, anchor)`` returns True / False. A POI whose attribute is unknown does *not*
satisfy a constraint on that attribute (the benchmark only labels a POI as satisfying when the KB says so).
"""

from __future__ import annotations

from groundtrace.crs.kb.geo import haversine_km
from groundtrace.crs.schema import NOISE_LEVELS, POI, Anchor, Constraint


def _has_category(poi: POI, label: str) -> bool:
    wanted = label.strip().lower()
    return any(c.strip().lower() == wanted for c in poi.categories)


def satisfies(poi: POI, constraint: Constraint, anchor: Anchor | None = None) -> bool:
    """True when ``poi`` meets ``constraint`` (distance constraints need ``anchor``)."""
    kind, value, attrs = constraint.kind, constraint.value, poi.attributes
    if kind in ("cuisine", "category"):
        return _has_category(poi, str(value))
    if kind == "price_max":
        return poi.price_level is not None and poi.price_level <= int(value)
    if kind == "price_min":
        return poi.price_level is not None and poi.price_level >= int(value)
    if kind == "noise_max":
        noise = attrs.get("noise")
        if noise not in NOISE_LEVELS or value not in NOISE_LEVELS:
            return False
        return NOISE_LEVELS.index(noise) <= NOISE_LEVELS.index(str(value))
    if kind == "ambience":
        return str(value) in (attrs.get("ambience") or [])
    if kind == "meal":
        return str(value) in (attrs.get("good_for_meal") or [])
    if kind == "amenity":
        if value == "wifi":
            return attrs.get("wifi") == "free"
        return attrs.get(str(value)) is True
    if kind == "alcohol":
        drink = attrs.get("alcohol")
        return drink == "full_bar" if value == "full_bar" else drink in ("full_bar", "beer_and_wine")
    if kind == "min_stars":
        return poi.stars >= float(value)
    if kind == "max_distance_km":
        if anchor is None:
            return False
        return haversine_km(anchor.lat, anchor.lon, poi.lat, poi.lon) <= float(value)
    raise ValueError(f"unknown constraint kind {kind!r}")


def satisfies_all(poi: POI, constraints: list[Constraint], anchor: Anchor | None = None) -> bool:
    """True when ``poi`` meets every constraint (vacuously True for none)."""
    return all(satisfies(poi, c, anchor) for c in constraints)


def satisfaction_share(poi: POI, constraints: list[Constraint], anchor: Anchor | None = None) -> float:
    """Share of ``constraints`` met by ``poi``; 1.0 when there are none."""
    if not constraints:
        return 1.0
    return sum(satisfies(poi, c, anchor) for c in constraints) / len(constraints)
