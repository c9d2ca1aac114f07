"""What a CRS system sees at a system turn, and what it answers (the runner ↔ system ↔ metrics contract).

A system is called once per recommendation turn of a dialogue. It sees the gold history before the
turn, the candidate pool of the setting (closed: the 8 candidates; open: the 50–100 open-set POIs) and
those candidates' reviews under their ``[Rn]`` tags. It returns a ranking of POI ids (best first) and a
response text that may cite reviews as ``[Rn]``.

Predictions JSONL (``groundtrace crs score --predictions P``) holds one :class:`Prediction` per line.
A prediction with ``error`` set, or a missing prediction, makes the turn *unscorable*: every metric
takes its documented default for it and the count of unscorable turns is reported — never NaN.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

Setting = Literal["closed", "open"]


class HistoryTurn(BaseModel):
    """A past turn as shown to a system (role, act and text only — no gold labels)."""

    model_config = ConfigDict(extra="forbid")
    role: Literal["user", "system"]
    act: str
    text: str


class CandidateCard(BaseModel):
    """A candidate POI as shown to a system."""

    model_config = ConfigDict(extra="forbid")
    poi_id: str
    name: str
    city: str
    poi_type: str
    categories: list[str] = Field(default_factory=list)
    price_level: int | None = None
    stars: float
    review_count: int | None = Field(None, description="The KB's review count (Yelp's, not the tagged ones).")
    lat: float
    lon: float
    attributes: dict[str, object] = Field(default_factory=dict)


class TaggedReview(BaseModel):
    """A review under its dialogue tag, with the KB's stored stance of its sentences."""

    model_config = ConfigDict(extra="forbid")
    tag: str
    review_id: str
    poi_id: str
    text: str
    stance: list[tuple[int, int, int]] = Field(
        default_factory=list,
        description="(start, end, polarity +1/0/-1) of each sentence, as the KB stores it (crs.kb.stance).",
    )


class SystemInput(BaseModel):
    """Everything a system may use at one turn (session-isolated: nothing from other dialogues)."""

    model_config = ConfigDict(extra="forbid")
    dialogue_id: str
    turn_index: int
    setting: Setting
    city: str
    poi_type: str
    anchor: dict[str, object] | None = None
    history: list[HistoryTurn]
    candidates: list[CandidateCard]
    reviews: list[TaggedReview]


class SystemOutput(BaseModel):
    """A system's answer at one turn."""

    model_config = ConfigDict(extra="forbid")
    ranking: list[str] = Field(description="Candidate POI ids, best first.")
    response: str = Field(description="The reply; may cite reviews as [Rn].")


class Prediction(BaseModel):
    """One scored unit: a system's output (or failure) at one turn of one dialogue."""

    model_config = ConfigDict(extra="forbid")
    dialogue_id: str
    turn_index: int
    setting: Setting = "closed"
    system: str = ""
    ranking: list[str] = Field(default_factory=list)
    response: str = ""
    error: str | None = None
    latency_s: float = Field(0.0, ge=0.0, allow_inf_nan=False)
    cost_usd: float = Field(0.0, ge=0.0, allow_inf_nan=False)
    prompt_tokens: int = Field(0, ge=0)
    completion_tokens: int = Field(0, ge=0)
    note: str | None = Field(
        None,
        max_length=500,
        description="Set when the turn was answered in a degraded way, e.g. trace-hybrid's optional LLM "
        "step failed and its offline answer was given (llm_fallback); the turn is scored as answered.",
    )

    @model_serializer(mode="wrap")
    def _omit_empty_note(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """``note`` is written only when set: lines without one are as they were before the field."""
        data = handler(self)
        if data.get("note") is None:
            data.pop("note", None)
        return data
