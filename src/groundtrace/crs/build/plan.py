"""The plan records of stage 3, shared by the planner (what is said), the user-language step (``speak``:
how user constraints are worded) and the realisers (the text): :class:`TurnPlan`, :class:`DialoguePlan`,
and the two pieces a turn plan carries, :class:`Quote` (evidence to quote) and :class:`Spoken` (how a
constraint is said). Data only, so the three stages import it and never each other's modules back.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from groundtrace.crs.build.evidence import Sentence
from groundtrace.crs.build.personas import Persona
from groundtrace.crs.build.phrasing import PhrasingBank
from groundtrace.crs.kb.knowledge_base import KnowledgeBase
from groundtrace.crs.schema import Anchor, Constraint, Dialogue, Leg, QuoteSpan, ReviewRef, Turn, TurnGold


@dataclass(frozen=True, slots=True)
class Quote:
    """A verbatim quote to render as ``"<sentence.text>" [tag]``; a ``warning`` is introduced as one
    (a negative sentence cited against a POI, see ``groundtrace.crs.dataset.stance.WARNING_RE``)."""

    tag: str
    sentence: Sentence
    warning: bool = False


@dataclass(frozen=True, slots=True)
class Spoken:
    """How a user turn says one constraint: ``label`` (the exact span), as a ``sentence`` of its own or
    as a list phrase, wrapped in ``hedge`` (a ``{p}`` template, "" for none)."""

    constraint: Constraint
    sentence: bool = False
    hedge: str = ""

    @property
    def label(self) -> str:
        return self.constraint.label

    def text(self) -> str:
        return self.hedge.replace("{p}", self.label) if self.hedge else self.label


@dataclass
class TurnPlan:
    """One planned turn; ``about`` lists POIs a user turn talks about, ``quotes`` the system's evidence."""

    role: str
    act: str
    constraints_added: list[Constraint] = field(default_factory=list)
    replaced: list[Constraint] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    recommended: list[str] = field(default_factory=list)
    about: list[str] = field(default_factory=list)
    gold: TurnGold | None = None
    quotes: dict[str, list[Quote]] = field(default_factory=dict)
    active: list[Constraint] = field(default_factory=list)
    aspect: str = ""
    ask_kinds: list[str] = field(default_factory=list)
    extra: bool = False
    more: bool = False
    poi_type: str = ""  # itinerary legs: the type this turn is about ("" = the dialogue's)
    anchor: Anchor | None = None  # system turns: where the turn's distance constraint is measured from
    after: list[str] = field(default_factory=list)  # itinerary: the earlier legs' picks, in order
    #: user turns: how each added constraint is said (groundtrace.crs.build.speak.phrase_plan)
    spoken: list[Spoken] = field(default_factory=list)

    def to_turn(self, index: int, text: str, tags: list[str], spans: list[QuoteSpan]) -> Turn:
        return Turn(
            index=index,
            role=self.role,
            act=self.act,
            text=text,  # type: ignore[arg-type]
            constraints_added=list(self.constraints_added),
            rejected=list(self.rejected),
            recommended=list(self.recommended),
            cited_tags=list(tags),
            quote_spans=list(spans),
            gold=self.gold,
        )


@dataclass
class DialoguePlan:
    """Everything about a dialogue except its wording."""

    kb: KnowledgeBase
    dialogue_id: str
    city: str
    poi_type: str
    persona: Persona
    anchor: Anchor | None
    candidates: list[str]
    review_refs: dict[str, ReviewRef]
    open_pool: list[str]
    turns: list[TurnPlan]
    has_rejection: bool
    middle: str
    final_constraints: list[Constraint]
    seed: int | None = None
    legs: list[Leg] = field(default_factory=list)  # itinerary dialogues (groundtrace.crs.build.itinerary)
    #: the build's phrasing bank (bundled + mined); None: the bundled one (groundtrace.crs.build.speak)
    phrasing_bank: PhrasingBank | None = None
    #: the split whose phrasings the user constraints were given ("" until phrase_plan ran)
    spoken_split: str = ""

    def to_dialogue(self, turns: list[Turn], *, realiser: str) -> Dialogue:
        return Dialogue(
            dialogue_id=self.dialogue_id,
            city=self.city,
            poi_type=self.poi_type,  # type: ignore[arg-type]
            persona_id=self.persona.id,
            persona=self.persona.description,
            anchor=self.anchor,
            has_rejection=self.has_rejection,
            candidates=list(self.candidates),
            review_refs=dict(self.review_refs),
            turns=turns,
            kb_hash=self.kb.content_hash,
            realiser=realiser,
            seed=self.seed,
            legs=[leg.model_copy() for leg in self.legs],
        )
