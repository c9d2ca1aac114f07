"""Stage 3b — turning a dialogue plan into text: evidence sentences, quotes with spans, templates.

Evidence sentences come from :mod:`groundtrace.crs.build.evidence` (:class:`EvidenceIndex`).

Quotes
------
System turns quote whole review sentences verbatim as ``"<sentence>" [Rn]``. :class:`TextBuilder`
assembles a turn from plain pieces and quotes and records each quote's :class:`QuoteSpan` (offsets of
the quoted text inside the turn and inside its review) as it goes, so spans are exact by construction.

Realisers
---------
A :class:`Realiser` turns a :class:`~groundtrace.crs.build.planner.DialoguePlan` into a
:class:`~groundtrace.crs.schema.Dialogue`. :class:`TemplateRealiser` (the default) is offline and
deterministic for a seed: it phrases every turn from varied template banks. User turns say their
constraints with the phrasings :func:`groundtrace.crs.build.speak.phrase_plan` chose for the dialogue's
split, inside the split's frames of the phrasing bank (``crs/data/phrasings.yaml``: openers,
provide/extra/reject shapes); sentence-shaped phrasings follow the frame as sentences of their own.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Protocol

from groundtrace.crs.build.phrasing import PhrasingBank, bundled_bank
from groundtrace.crs.build.plan import Quote
from groundtrace.crs.build.pools import main_category
from groundtrace.crs.build.speak import CASING_RATE, phrase_plan, split_of, spoken_of
from groundtrace.crs.kb.geo import haversine_km
from groundtrace.crs.schema import POI, Constraint, Dialogue, QuoteSpan, Turn

if TYPE_CHECKING:
    from groundtrace.crs.build.plan import DialoguePlan, TurnPlan
    from groundtrace.crs.kb.knowledge_base import KnowledgeBase

# --------------------------------------------------------------------------------------------------
# Assembling text with exact quote spans
# --------------------------------------------------------------------------------------------------


class TextBuilder:
    """Accumulates text; quotes are rendered with their tag and their span recorded."""

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._len = 0
        self.spans: list[QuoteSpan] = []
        self.tags: list[str] = []

    def add(self, text: str) -> TextBuilder:
        self._parts.append(text)
        self._len += len(text)
        return self

    def quote(self, quote: Quote) -> TextBuilder:
        start = self._len + 1
        s = quote.sentence
        self.add(f'"{s.text}" [{quote.tag}]')
        self.spans.append(
            QuoteSpan(
                tag=quote.tag,
                review_id=s.review_id,
                start=start,
                end=start + len(s.text),
                review_start=s.start,
                review_end=s.end,
            )
        )
        if quote.tag not in self.tags:
            self.tags.append(quote.tag)
        return self

    @property
    def text(self) -> str:
        return "".join(self._parts)


# --------------------------------------------------------------------------------------------------
# Realisers
# --------------------------------------------------------------------------------------------------


class Realiser(Protocol):
    """Phrases a plan: returns the finished dialogue (turn texts, tags and quote spans filled)."""

    name: str
    #: optional class attribute: ``True`` when copies in forked processes realise exactly what one instance
    #: would (no connection, no shared budget); the builder then builds in several processes
    #: (``BuildConfig.processes``); absent means ``False``

    def realise(self, plan: DialoguePlan, rng: random.Random) -> Dialogue: ...


TYPE_NOUN = {
    "restaurant": ("restaurant", "place to eat", "spot for a meal"),
    "hotel": ("hotel", "place to stay", "hotel room"),
    "attraction": ("attraction", "place to visit", "thing to see"),
}
#: The final accept of an itinerary ({plan}: the earlier picks, {name}: the last one).
ACCEPT_ITINERARY = (
    "Perfect — {plan}, then {name}. That's the day sorted, thanks!",
    "Great, {name} it is. So: {plan}, then {name}. Thank you!",
)
CLARIFY = (
    "Happy to help! Any preferences on {kinds}?",
    "Sure. What matters most to you — {kinds}?",
    "Glad to help. Could you tell me about {kinds}?",
)
RECOMMEND_OPEN = (
    "I'd recommend {name}.",
    "You might like {name}.",
    "{name} looks like a great fit.",
    "Try {name}.",
)
CARD_TAIL = (" At a glance: {card}.", " Quick facts: {card}.", " ({card})")
EVIDENCE_LEAD = (
    "One reviewer wrote",
    "A guest noted",
    "Reviewers mention",
    "Another review says",
    "As one visitor put it",
)
WARNING_LEAD = (
    "One reviewer warns",
    "A downside, one guest warns",
    "To be fair, one reviewer complained",
)
ASK_COMPARE = (
    "Is there an alternative? How would it compare?",
    "What else is there, and how does it stack up against {name}?",
    "Could you compare {name} with another option?",
)
COMPARE = (
    "Another good option is {new}, and I'd lean towards it. ",
    "You could also consider {new}; both fit what you asked for. ",
    "Compared with {old}, {new} is worth a look. ",
)
MORE = (
    "Any other ideas worth considering?",
    "What else would you suggest?",
    "Could you give me one more option?",
)
ASK_DETAIL = (
    "Tell me more about {name} — what do people say about {aspect}?",
    "What do reviews say about {aspect} at {name}?",
    "Before I decide: how is {name} on {aspect}?",
)
EXPLAIN = (
    "Sure. On {aspect}: ",
    "Here is what reviewers say about {aspect}: ",
    "Good question. About {aspect}: ",
)
EXPLAIN_GENERIC = ("Sure. Guests mention: ", "Here is what guests say about {name}: ")
ASK_DETAIL_GENERIC = ("Tell me more about {name} — what do people say?", "What do reviews say about {name}?")
ACCEPT = ("Great, {name} it is. Thanks!", "Perfect, I'll go with {name}.", "Sounds good — {name}. Thank you!")
CLOSE = (
    "Enjoy {name}! Have a great time in {city}.",
    "You're welcome — enjoy {name}.",
    "Have fun at {name}!",
)
REJECT_REASON = {
    "cuisine": "I've had a lot of {old} lately",
    "category": "I'd rather not do {old} this time",
    "price_max": "it's over my budget",
    "price_min": "it feels a bit too basic",
    "noise_max": "it sounds too loud for us",
    "max_distance_km": "it's too far away",
    "ambience": "the vibe isn't quite what we want",
    "min_stars": "the reviews look mixed",
}
PRICE_SIGNS = {1: "$", 2: "$$", 3: "$$$", 4: "$$$$"}


#: Yelp parent or side categories that say nothing on a POI card ("Philadelphia · Event Planning &
#: Services" for a bakery); the card shows the first category not listed here.
CARD_SKIP = frozenset(
    {
        "Restaurants", "Hotels & Travel", "Arts & Entertainment", "Active Life", "Hotels", "Food",
        "Nightlife", "Event Planning & Services", "Venues & Event Spaces", "Caterers", "Beer",
        "Wine & Spirits", "Shopping", "Local Services", "Party & Event Planning", "Local Flavor",
        "Specialty Food", "Bars",
    }
)  # fmt: skip


def poi_card(poi: POI) -> str:
    """``"Lumen Bay · Sushi Bars · $$$ · 4.5★"`` (the paper's POI card style)."""
    kind = next(
        (c for c in poi.categories if c not in CARD_SKIP),
        poi.categories[-1] if poi.categories else poi.poi_type,
    )
    parts = [poi.city, kind]
    if poi.price_level:
        parts.append(PRICE_SIGNS[poi.price_level])
    parts.append(f"{poi.stars:g}★")
    return " · ".join(parts)


def card_of(poi: POI, tp: TurnPlan) -> str:
    """:func:`poi_card`, plus the distance to the turn's anchor when a distance constraint is active
    ("… · 4★ · 0.8 km from Hotel Monaco"): the KB states it, reviews rarely do."""
    card = poi_card(poi)
    if tp.anchor is not None and any(c.kind == "max_distance_km" for c in tp.active):
        km = haversine_km(tp.anchor.lat, tp.anchor.lon, poi.lat, poi.lon)
        card += f" · {km:.1f} km from {tp.anchor.name}"
    return card


def with_article(noun: str) -> str:
    """ "a restaurant", "an attraction"."""
    return f"{'an' if noun[:1].lower() in 'aeiou' else 'a'} {noun}"


def join_labels(labels: list[str]) -> str:
    """ "a", "a and b", "a, b and c"."""
    if not labels:
        return "anything good"
    if len(labels) == 1:
        return labels[0]
    return ", ".join(labels[:-1]) + " and " + labels[-1]


_AMENITY_WORDS_SHORT = {
    "wifi": "the wifi",
    "wheelchair_accessible": "accessibility",
    "good_for_kids": "how it is with kids",
    "good_for_groups": "groups",
    "outdoor_seating": "outdoor seating",
    "takes_reservations": "reservations",
    "dogs_allowed": "dogs",
    "parking": "parking",
    "bike_parking": "bike parking",
    "has_tv": "TVs",
    "happy_hour": "happy hour",
    "delivery": "delivery",
    "takeout": "takeout",
    "accepts_credit_cards": "paying by card",
    "by_appointment_only": "appointments",
}
_MEAL_NAMES = {"latenight": "late-night food"}


def aspect_word(c: Constraint) -> str:
    """A short noun phrase for what a constraint is about (used in questions): "parking", "the noise"."""
    if c.kind == "cuisine":
        return "the food"
    if c.kind == "category":
        return "the place itself"
    if c.kind == "amenity":
        return _AMENITY_WORDS_SHORT.get(str(c.value), str(c.value).replace("_", " "))
    if c.kind == "meal":
        return _MEAL_NAMES.get(str(c.value), str(c.value))
    return {
        "price_max": "prices",
        "price_min": "prices",
        "noise_max": "the noise",
        "ambience": "the atmosphere",
        "alcohol": "the drinks",
        "min_stars": "overall quality",
        "max_distance_km": "the location",
    }.get(c.kind, c.kind)


def render_quotes(builder: TextBuilder, quotes: list[Quote], rng: random.Random) -> None:
    """Append ``Lead: "q" [Rn].`` clauses, varying the lead-ins."""
    for i, quote in enumerate(quotes):
        if quote.warning:
            lead = rng.choice(WARNING_LEAD)
        else:
            lead = (
                rng.choice(EVIDENCE_LEAD) if i == 0 else rng.choice(("Also", "And", "Plus", "Another wrote"))
            )
        builder.add(f" {lead}: ").quote(quote).add(".")


class TemplateRealiser:
    """Offline realiser: varied templates over the plan; deterministic for a given ``rng`` state."""

    name = "template"
    #: holds no connection or shared budget: dialogues may be realised in forked processes
    process_safe = True

    def realise(self, plan: DialoguePlan, rng: random.Random) -> Dialogue:
        phrase_plan(plan)
        turns = [self.realise_turn(plan, i, rng) for i in range(len(plan.turns))]
        return plan.to_dialogue(turns, realiser=self.name)

    def realise_turn(self, plan: DialoguePlan, index: int, rng: random.Random) -> Turn:
        """Phrase turn ``index`` of ``plan`` (text, tags and spans; labels copied from the plan, whose user
        constraints first get the split's phrasings: :func:`groundtrace.crs.build.speak.phrase_plan`)."""
        phrase_plan(plan)
        tp = plan.turns[index]
        builder = TextBuilder()
        builder.add(self._text(plan, tp, builder, rng))
        return tp.to_turn(index, builder.text, builder.tags, builder.spans)

    # The builder may already hold quotes appended by the system phrasers; they return the prefix ''.
    def _text(self, plan: DialoguePlan, tp: TurnPlan, builder: TextBuilder, rng: random.Random) -> str:
        kb = plan.kb
        noun = rng.choice(TYPE_NOUN[tp.poi_type or plan.poi_type])
        name_of = {pid: kb.poi(pid).name for pid in (*tp.recommended, *tp.rejected, *tp.about, *tp.after)}
        if tp.role == "user":
            text = _user_text(plan, tp, rng, noun, name_of)
            if rng.random() < CASING_RATE:  # casing slip "hi! i'm in ..." (frames never start with a label)
                text = text[:1].lower() + text[1:]
            return text
        return _system_text(plan, tp, builder, rng, name_of)


class _Frames:
    """The split's user frames of the plan's bank, drawn with ``rng``; ``say`` composes one turn."""

    def __init__(self, plan: DialoguePlan, rng: random.Random) -> None:
        self.bank = plan.phrasing_bank or bundled_bank()
        self.split = plan.spoken_split or split_of(plan.dialogue_id)
        self.rng = rng

    def say(self, tp: TurnPlan, frame_name: str, open_name: str, **slots: str) -> str:
        """Frame ``frame_name`` with the turn's list phrases as ``{labels}`` (``open_name`` when it has none),
        then its sentence-shaped phrasings, each a sentence of its own."""
        spoken = spoken_of(tp)
        phrases = [s for s in spoken if not s.sentence]
        frame = self.rng.choice(self.bank.frame(frame_name if phrases else open_name, self.split))
        hedged = "deally" not in frame  # no "Ideally ideally …"
        labels = join_labels([s.text() if hedged else s.label for s in phrases])
        text = frame.format(labels=labels, **slots)
        sentences = [f"{s.label}." for s in spoken if s.sentence]
        return " ".join([text, *sentences])


def _user_text(
    plan: DialoguePlan, tp: TurnPlan, rng: random.Random, noun: str, name_of: dict[str, str]
) -> str:
    """The template text of a user turn (``noun``: the place word drawn for the turn); constraints are
    said with the split's phrasings and frames (:class:`_Frames`)."""
    act = tp.act
    if tp.more:
        return rng.choice(MORE)
    frames = _Frames(plan, rng)
    a_noun = with_article(noun)
    if act == "request":
        if tp.after:
            prev = name_of[tp.after[-1]]
            return frames.say(tp, "request_next", "request_next_open", prev=prev, a_noun=a_noun)
        return frames.say(tp, "request", "request_open", city=plan.city, noun=noun, a_noun=a_noun)
    if act == "provide_preference":
        kind = "extra" if tp.extra else "provide"
        return frames.say(tp, kind, f"{kind}_open")
    if act == "ask_comparison":
        return rng.choice(ASK_COMPARE).format(name=name_of[tp.about[0]] if tp.about else "that")
    if act == "reject_and_refine":
        reason = _reject_reason(plan.kb, tp, rng, frames.bank)
        name = name_of[tp.rejected[0]]
        text = frames.say(tp, "reject", "reject_open", name=name, reason=reason)
        if not any(not s.sentence for s in spoken_of(tp)):
            text += " " + rng.choice(frames.bank.frame("reject_tail", frames.split))
        return text
    if act == "ask_detail":
        bank = ASK_DETAIL if tp.aspect else ASK_DETAIL_GENERIC
        return rng.choice(bank).format(name=name_of[tp.about[0]], aspect=tp.aspect)
    if act == "accept":
        if tp.after:
            earlier = join_labels([name_of[p] for p in tp.after])
            return rng.choice(ACCEPT_ITINERARY).format(plan=earlier, name=name_of[tp.about[0]])
        return rng.choice(ACCEPT).format(name=name_of[tp.about[0]])
    raise ValueError(f"no template for user act {act!r}")


def _reject_reason(kb: KnowledgeBase, tp: TurnPlan, rng: random.Random, bank: PhrasingBank) -> str:
    """Why the user rejects ``tp.rejected[0]``: from the kind of the constraint it adds (and the one it
    replaces, named by its value in words: "a lot of tacos lately"); an amenity/meal/alcohol reason is
    drawn from ``rng``."""
    new = tp.constraints_added[0]
    old = tp.replaced[0] if tp.replaced else None
    reason = REJECT_REASON.get(new.kind, "it's not quite right for us")
    if new.kind in ("cuisine", "category") and old is None:
        kind = main_category(kb.poi(tp.rejected[0])) or "that"
        reason = f"I'm not really in the mood for {kind}"
    if "{old}" in reason:
        reason = reason.format(old=bank.value_noun(old.kind, old.value) if old else "that")
    if new.kind in ("amenity", "meal", "alcohol"):
        reason = rng.choice(
            (
                "it's missing something I need",
                "it lacks one thing that matters to me",
                "I just realised I need more than that",
            )
        )
    return reason


def _system_text(
    plan: DialoguePlan, tp: TurnPlan, builder: TextBuilder, rng: random.Random, name_of: dict[str, str]
) -> str:
    """The template text of a system turn; recommend/compare/explain write into ``builder`` (quotes with
    their tags) and return ''."""
    kb = plan.kb
    act = tp.act
    if act == "clarify":
        kinds = join_labels(tp.ask_kinds or ["budget", "location"]).replace(" and ", " or ")
        return rng.choice(CLARIFY).format(kinds=kinds)
    if act == "recommend":
        main = kb.poi(tp.recommended[0])
        builder.add(rng.choice(RECOMMEND_OPEN).format(name=main.name))
        render_quotes(builder, tp.quotes.get(main.poi_id, []), rng)
        builder.add(rng.choice(CARD_TAIL).format(card=card_of(main, tp)))  # the card sits next to a tag
        return ""
    if act == "compare":
        new, old = kb.poi(tp.recommended[0]), kb.poi(tp.recommended[1])
        builder.add(rng.choice(COMPARE).format(new=new.name, old=old.name))
        builder.add(f"For {new.name}:")
        render_quotes(builder, tp.quotes.get(new.poi_id, []), rng)
        builder.add(rng.choice(CARD_TAIL).format(card=card_of(new, tp)))
        old_quotes = tp.quotes.get(old.poi_id, [])
        if old_quotes:
            builder.add(f" For {old.name}:")
            render_quotes(builder, old_quotes, rng)
        return ""
    if act == "explain":
        main = kb.poi(tp.recommended[0])
        bank = EXPLAIN if tp.aspect else EXPLAIN_GENERIC
        builder.add(rng.choice(bank).format(aspect=tp.aspect, name=main.name))
        first = True
        for quote in tp.quotes.get(main.poi_id, []):
            builder.add("" if first else " Also: ").quote(quote).add(".")
            first = False
        return ""
    if act == "close":
        return rng.choice(CLOSE).format(name=name_of[tp.about[0]], city=plan.city)
    raise ValueError(f"no template for system act {act!r}")


REALISERS = ("template", "llm")
