"""A five-POI fictional Tucson KB and the fixture dialogues/predictions of tests/fixtures/crs_metrics.

Layout (km offsets from the anchor "Hotel Congress" at 32.2 N, -110.95 E):

    P1 Olive Grove     (0, 0)      Mediterranean/Greek  $$$   quiet    romantic, classy   full bar
    P2 Sakura Sushi    (0, 1 E)    Japanese/Sushi Bars  $$$$  average  upscale, classy
    P3 Taco Loco       (5 N, 0)    Mexican              $     loud     casual
    P4 Trattoria Roma  (2.5 N, 0)  Italian              $$    quiet    intimate, romantic  free wifi
    P5 Burger Barn     (0, 8 W)    Burgers              $$    loud     TVs

Pairwise distances used by the tests: P1-P2 1.0, P1-P4 2.5, P2-P4 √(2.5²+1²) = 2.69, P1-P3 5.0,
P1-P5 8.0, P3-P5 √(5²+8²) = 9.43 km (haversine agrees to < 0.01 km at this scale).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from groundtrace.crs.kb.knowledge_base import KnowledgeBase
from groundtrace.crs.schema import POI, Dialogue, Review
from groundtrace.crs.systems.predictions import Prediction

FIXTURE_DIR = Path(__file__).resolve().parents[2] / "fixtures" / "crs_metrics"
LAT0, LON0 = 32.2, -110.95
KM_PER_DEG_LAT = 111.195


def at(north_km: float, east_km: float) -> tuple[float, float]:
    """Lat/lon of a point ``north_km`` north and ``east_km`` east of the anchor (local flat approximation)."""
    return (
        LAT0 + north_km / KM_PER_DEG_LAT,
        LON0 + east_km / (KM_PER_DEG_LAT * math.cos(math.radians(LAT0))),
    )


def make_pois() -> list[POI]:
    def poi(pid, name, cats, price, pos, **attrs):
        lat, lon = at(*pos)
        return POI(
            poi_id=pid,
            name=name,
            city="Tucson",
            state="AZ",
            poi_type="restaurant",
            lat=lat,
            lon=lon,
            stars=4.0,
            review_count=10,
            price_level=price,
            categories=cats,
            attributes=attrs,
        )

    return [
        poi("P1", "Olive Grove", ["Mediterranean", "Greek"], 3, (0, 0), noise="quiet",
            ambience=["romantic", "classy"], good_for_meal=["dinner"], alcohol="full_bar",
            outdoor_seating=True),
        poi("P2", "Sakura Sushi", ["Japanese", "Sushi Bars"], 4, (0, 1), noise="average",
            ambience=["upscale", "classy"], good_for_meal=["dinner"]),
        poi("P3", "Taco Loco", ["Mexican"], 1, (5, 0), noise="loud", ambience=["casual"],
            good_for_meal=["lunch"]),
        poi("P4", "Trattoria Roma", ["Italian"], 2, (2.5, 0), noise="quiet",
            ambience=["intimate", "romantic"], good_for_meal=["dinner"], wifi="free"),
        poi("P5", "Burger Barn", ["American (Traditional)", "Burgers"], 2, (0, -8), noise="loud",
            has_tv=True, good_for_meal=["lunch"]),
    ]  # fmt: skip


REVIEW_TEXTS = {
    "V1": ("P1", "Classy and upscale without being stuffy. The patio is lovely at sunset."),
    "V2": ("P1", "Quiet enough to talk, and the lamb was perfect."),
    "V3": ("P2", "The omakase was incredible and the room feels elegant."),
    "V4": ("P3", "Loud music, cheap tacos, great fun."),
    "V5": ("P4", "Cozy little place with homemade pasta and free wifi."),
    "V6": ("P5", "Big screens everywhere, good burgers."),
    "V7": ("P3", "The salsa bar is the best in town."),  # not in the dialogues' review_refs: open setting R7
}


def make_kb() -> KnowledgeBase:
    reviews = [
        Review(review_id=rid, poi_id=pid, stars=4.0, text=text) for rid, (pid, text) in REVIEW_TEXTS.items()
    ]
    return KnowledgeBase(make_pois(), reviews, name="metrics-fixture")


def read_jsonl(name: str) -> list[dict]:
    with open(FIXTURE_DIR / name, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


@pytest.fixture(scope="session")
def kb() -> KnowledgeBase:
    return make_kb()


@pytest.fixture(scope="session")
def dialogues() -> list[Dialogue]:
    return [Dialogue.model_validate(row) for row in read_jsonl("dialogues.jsonl")]


@pytest.fixture(scope="session")
def closed_predictions() -> list[Prediction]:
    return [Prediction.model_validate(row) for row in read_jsonl("predictions_closed.jsonl")]


@pytest.fixture(scope="session")
def open_predictions() -> list[Prediction]:
    return [Prediction.model_validate(row) for row in read_jsonl("predictions_open.jsonl")]
