"""A deterministic fictional city (default "Lumen Bay") so the whole benchmark runs with no download.

``generate_demo_kb(seed)`` draws, with one seeded :class:`random.Random`, ``n_per_type`` restaurants,
hotels and attractions scattered around a centre (distance from the centre ~ |N(0, 2.2 km)|, capped at
9 km), each with Yelp-style categories, a price level, stars and canonical attributes
(:data:`groundtrace.crs.schema.ATTRIBUTE_KEYS`), plus ``reviews_per_poi`` reviews whose sentences
*express* those attributes (phrasing banks below). Every attribute fact of a POI is expressed by at
least one of its reviews (facts are dealt round-robin over the reviews), so the dataset builder can
always quote evidence. Negative facts ("no ramp", "not for kids") always carry a negation cue so the
evidence lexicon of :mod:`groundtrace.crs.build.realise` never mistakes them for support.

Same seed and arguments → identical POIs and reviews → identical ``content_hash``.
"""

from __future__ import annotations

import math
import random
import re
from dataclasses import dataclass

from groundtrace.crs.kb.knowledge_base import KnowledgeBase
from groundtrace.crs.schema import POI, Review

CENTRE = (41.2565, -70.0621)  # fictional; an island-like bay far from any Yelp city

# --------------------------------------------------------------------------------------------------
# Categories: (Yelp-style label, name nouns, sentences expressing the category).
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Kind:
    label: str
    nouns: tuple[str, ...]
    sentences: tuple[str, ...]
    price: tuple[int, ...] = (1, 2, 3, 4)
    also: tuple[str, ...] = ()  # broader Yelp labels the POI also carries (e.g. Greek → Mediterranean)


CUISINES: tuple[Kind, ...] = (
    Kind(
        "Sushi Bars",
        ("Sushi", "Sushi Bar", "Omakase"),
        (
            "Some of the freshest sushi I have had outside Tokyo.",
            "The sushi rice was seasoned perfectly and the fish melted.",
            "If you want sushi in this town, this is the place.",
        ),
        (2, 3, 4),
        ("Japanese",),
    ),
    Kind(
        "Italian",
        ("Trattoria", "Osteria", "Cucina"),
        (
            "The handmade pasta was the best Italian food of our trip.",
            "Proper Italian cooking, the carbonara was silky.",
            "Their Italian classics are done with real care.",
        ),
    ),
    Kind(
        "Mexican",
        ("Taqueria", "Cantina", "Cocina"),
        (
            "The tacos al pastor were outstanding Mexican street food.",
            "Authentic Mexican flavours and fresh tortillas.",
            "Great tacos and a salsa bar worth the trip.",
        ),
        (1, 2, 3),
    ),
    Kind(
        "Greek",
        ("Taverna", "Estiatorio", "Kouzina"),
        (
            "The Greek mezze platter was generous and bright.",
            "Perfect souvlaki, just like the Greek islands.",
            "Real Greek hospitality and lemony roast potatoes.",
        ),
        also=("Mediterranean",),
    ),
    Kind(
        "Mediterranean",
        ("Mezze House", "Olive Table", "Levant Kitchen"),
        (
            "Lovely Mediterranean plates with lots of herbs and olive oil.",
            "The Mediterranean grilled fish was simple and perfect.",
            "Fresh Mediterranean flavours, the hummus is silky.",
        ),
    ),
    Kind(
        "Thai",
        ("Thai Kitchen", "Siam House", "Basil Thai"),
        (
            "The Thai green curry had real heat and depth.",
            "Best pad thai we found in the city.",
            "Fragrant Thai dishes with proper balance of sweet and sour.",
        ),
        (1, 2, 3),
    ),
    Kind(
        "Indian",
        ("Tandoor", "Masala House", "Spice Route"),
        (
            "The Indian curries were rich and beautifully spiced.",
            "Fantastic butter chicken, proper Indian cooking.",
            "Fresh naan from the tandoor and a great dal.",
        ),
        (1, 2, 3),
    ),
    Kind(
        "French",
        ("Bistro", "Brasserie", "Maison"),
        (
            "Classic French bistro cooking, the steak frites were spot on.",
            "The French onion soup alone is worth the visit.",
            "Elegant French dishes with perfect sauces.",
        ),
        (2, 3, 4),
    ),
    Kind(
        "Steakhouses",
        ("Steakhouse", "Chophouse", "Grill"),
        (
            "The ribeye was the best steak I have had in years.",
            "Perfectly seared steak and excellent sides.",
            "A serious steakhouse, the dry aged cuts are superb.",
        ),
        (3, 4),
    ),
    Kind(
        "Seafood",
        ("Oyster Bar", "Fish House", "Crab Shack"),
        (
            "Fresh seafood straight off the boats.",
            "The oysters were briny and ice cold.",
            "Great seafood chowder and a perfect lobster roll.",
        ),
    ),
    Kind(
        "Vegan",
        ("Greenhouse", "Plant Kitchen", "Sprout"),
        (
            "Creative vegan dishes that even my carnivore friends loved.",
            "Entirely plant-based menu and every dish felt generous.",
            "The vegan tasting menu was inventive.",
        ),
        (1, 2, 3),
    ),
    Kind(
        "Chinese",
        ("Dumpling House", "Noodle Bar", "Jade Palace"),
        (
            "Excellent Chinese dumplings with thin, delicate skins.",
            "The hand-pulled noodles were proper Chinese comfort food.",
            "Great dim sum and a long list of Chinese classics.",
        ),
        (1, 2, 3),
    ),
    Kind(
        "Pizza",
        ("Pizzeria", "Pizza Co.", "Slice House"),
        (
            "Blistered crust and great sauce, seriously good pizza.",
            "The wood-fired pizza came out in ninety seconds.",
            "Best pizza slice in the neighbourhood.",
        ),
        (1, 2),
        ("Italian",),
    ),
    Kind(
        "Cafes",
        ("Cafe", "Coffee House", "Espresso Bar"),
        (
            "Great coffee and flaky pastries at this little cafe.",
            "A proper neighbourhood cafe with excellent espresso.",
            "The coffee is roasted in house and it shows.",
        ),
        (1, 2),
    ),
    Kind(
        "Korean",
        ("Korean BBQ", "Seoul Kitchen", "Bap House"),
        (
            "Smoky Korean barbecue grilled at the table.",
            "The bibimbap was the best Korean dish of the night.",
            "Banchan kept coming, classic Korean generosity.",
        ),
        (1, 2, 3),
    ),
)

HOTEL_KINDS: tuple[Kind, ...] = (
    Kind(
        "Hotels",
        ("Hotel", "Grand Hotel", "Inn & Suites"),
        (
            "A well run hotel with a helpful front desk.",
            "Solid hotel, clean rooms and comfortable beds.",
            "One of the better hotel stays on our trip.",
        ),
    ),
    Kind(
        "Bed & Breakfast",
        ("Bed & Breakfast", "B&B", "House B&B"),
        (
            "A charming bed and breakfast with a homemade morning spread.",
            "This B&B felt like staying with friends.",
            "The bed and breakfast hosts knew every corner of town.",
        ),
        (2, 3),
    ),
    Kind(
        "Resorts",
        ("Resort", "Resort & Spa", "Beach Resort"),
        (
            "A proper resort with a big pool and spa.",
            "The resort grounds are beautiful and well kept.",
            "Everything you want from a resort, we wanted to stay forever.",
        ),
        (3, 4),
    ),
    Kind(
        "Hostels",
        ("Hostel", "Backpackers", "Bunkhouse"),
        (
            "A friendly hostel with clean dorms and lockers.",
            "Best hostel we stayed in, the common room was lively.",
            "Great hostel for meeting other travellers.",
        ),
        (1,),
    ),
    Kind(
        "Motels",
        ("Motel", "Motor Inn", "Roadside Inn"),
        (
            "A simple motel but spotless and practical.",
            "Classic motel with the car right outside the door.",
            "A clean motel for a night on the road.",
        ),
        (1, 2),
    ),
    Kind(
        "Guest Houses",
        ("Guest House", "Guesthouse", "Lodge"),
        (
            "A quaint guest house with only a handful of rooms.",
            "The guesthouse owners made us feel at home.",
            "A peaceful little guest house run by a lovely family.",
        ),
        (1, 2, 3),
    ),
)

ATTRACTION_KINDS: tuple[Kind, ...] = (
    Kind(
        "Museums",
        ("Museum", "Museum of History", "Maritime Museum"),
        (
            "The museum collection is excellent and well curated.",
            "We spent hours in the museum and still missed rooms.",
            "A small museum with fascinating exhibits.",
        ),
        (1, 2, 3),
    ),
    Kind(
        "Parks",
        ("Park", "Commons", "Green"),
        (
            "A beautiful park with shady lawns and walking paths.",
            "The park is perfect for a lazy afternoon.",
            "Big open park with great views of the water.",
        ),
        (1,),
    ),
    Kind(
        "Art Galleries",
        ("Gallery", "Art Space", "Studios"),
        (
            "The gallery shows bold contemporary art.",
            "A lovely art gallery with rotating local shows.",
            "Great art in a bright, airy gallery.",
        ),
        (1, 2),
    ),
    Kind(
        "Landmarks & Historical Buildings",
        ("Lighthouse", "Old Fort", "Customs House"),
        (
            "A historic landmark with a great story behind it.",
            "Fascinating local history and original architecture.",
            "This historic building is the heart of old town.",
        ),
        (1, 2),
    ),
    Kind(
        "Aquariums",
        ("Aquarium", "Ocean Center", "Sea Life Hall"),
        (
            "The aquarium tanks are huge, the sharks were a highlight.",
            "A great aquarium with a jellyfish room.",
            "The aquarium touch pools were fun for all ages.",
        ),
        (2, 3),
    ),
    Kind(
        "Botanical Gardens",
        ("Botanical Garden", "Gardens", "Conservatory"),
        (
            "The botanical garden was in full bloom.",
            "Gorgeous gardens with a tropical greenhouse.",
            "A peaceful garden walk among rare plants.",
        ),
        (1, 2),
    ),
    Kind(
        "Zoos",
        ("Zoo", "Wildlife Park", "Animal Sanctuary"),
        (
            "The zoo animals looked healthy and well cared for.",
            "A compact zoo with great animal encounters.",
            "Our favourite zoo visit in years.",
        ),
        (2, 3),
    ),
    Kind(
        "Beaches",
        ("Beach", "Cove", "Sands"),
        (
            "A wide sandy beach with calm water.",
            "The beach was clean and the sunset was stunning.",
            "Soft sand and a long beach to walk along.",
        ),
        (1,),
    ),
    Kind(
        "Performing Arts",
        ("Playhouse", "Theater", "Music Hall"),
        (
            "The theater show was fantastic and the acoustics superb.",
            "A great night of live performance.",
            "Intimate theater with excellent performances.",
        ),
        (2, 3, 4),
    ),
    Kind(
        "Tours",
        ("Harbor Tours", "Walking Tours", "Boat Tours"),
        (
            "Our tour guide was funny and full of stories.",
            "A well organised tour that covered the highlights.",
            "The boat tour gave the best views of the bay.",
        ),
        (2, 3),
    ),
)

KINDS_BY_TYPE: dict[str, tuple[Kind, ...]] = {
    "restaurant": CUISINES,
    "hotel": HOTEL_KINDS,
    "attraction": ATTRACTION_KINDS,
}
PARENT_CATEGORY = {
    "restaurant": "Restaurants",
    "hotel": "Hotels & Travel",
    "attraction": "Arts & Entertainment",
}

NAME_PREFIXES = (
    "Harbor",
    "Lantern",
    "Copper",
    "Saffron",
    "Juniper",
    "Tidewater",
    "Old Mill",
    "Golden",
    "Blue Door",
    "Driftwood",
    "Marigold",
    "Silver Birch",
    "North Pier",
    "Red Fern",
    "Moonstone",
    "Cedar",
    "Sandpiper",
    "Lighthouse",
    "Windrose",
    "Amber",
    "Kestrel",
    "Bayview",
    "Seaglass",
    "Willow",
    "Cobalt",
    "Ember",
    "Foxglove",
    "Granite",
    "Heron",
    "Ivy Lane",
    "Larkspur",
    "Maple",
    "Nettle",
    "Orchard",
    "Pebble",
    "Quayside",
    "Rook",
    "Starling",
    "Thistle",
    "Upper Deck",
    "Violet",
    "Wharf Street",
    "Yarrow",
    "Zephyr",
)
STREETS = (
    "Harbor",
    "Beacon",
    "Mill",
    "Water",
    "Front",
    "Chapel",
    "Orange",
    "Union",
    "Pleasant",
    "Federal",
    "India",
    "Centre",
    "Fair",
    "Easton",
    "Broad",
)
STREET_SUFFIX = ("St", "Ave", "Rd", "Way", "Ln")

# --------------------------------------------------------------------------------------------------
# Sentence banks: (attribute, value) -> sentences expressing it. Negative facts carry a negation cue.
# --------------------------------------------------------------------------------------------------

NOISE = {
    "quiet": (
        "It was quiet enough to talk without raising our voices.",
        "A calm, peaceful room even on a Friday night.",
        "Blissfully quiet, we could hear each other easily.",
        "Quiet and relaxed, perfect after a long day.",
    ),
    "average": (
        "Normal background buzz, easy enough to hold a conversation.",
        "Moderate noise level, conversation was easy.",
        "Some chatter around us but we could talk comfortably.",
    ),
    "loud": (
        "It gets loud once the crowd arrives.",
        "Pretty noisy, we had to lean in across the table.",
        "Lively and loud on weekends.",
    ),
    "very_loud": (
        "Deafening music, we had to shout across the table.",
        "Extremely loud, our ears were ringing afterwards.",
    ),
}
WIFI = {
    "free": (
        "Free wifi that actually works.",
        "The free Wi-Fi was fast enough for video calls.",
        "Reliable wifi, free for guests.",
    ),
    "paid": ("Wifi costs extra, which is annoying.", "They charge a daily fee for wifi."),
    "no": ("There is no wifi, so bring a book.", "No Wi-Fi at all, which surprised us."),
}
ALCOHOL = {
    "full_bar": (
        "The cocktails from the full bar were excellent.",
        "Great cocktails and a friendly bartender.",
        "A full bar with a serious whiskey list.",
    ),
    "beer_and_wine": (
        "Good wine list and a few local beers.",
        "They pour lovely wines by the glass.",
        "A short but smart list of wine and craft beer.",
    ),
    "none": ("No alcohol is served, so bring your own.", "They do not serve any alcohol."),
}
ATTIRE = {
    "casual": ("Jeans and sneakers were totally fine here.",),
    "dressy": ("People dress up a bit, we were glad we wore nice clothes.",),
    "formal": ("Jackets expected, a properly formal dress code.",),
}
AMBIENCE = {
    "romantic": (
        "Candlelit and romantic, perfect for a date night.",
        "A romantic spot, just right for the two of us.",
    ),
    "intimate": (
        "Cozy, intimate room with only a handful of tables.",
        "Small and intimate, it feels like a secret.",
    ),
    "classy": ("Classy decor and polished service.", "Elegant and classy without being stuffy."),
    "hipster": (
        "Very hipster, vinyl on the turntable and reclaimed wood.",
        "A hipster crowd and indie music.",
    ),
    "divey": ("A bit of a dive, in the best way.", "Divey and unpretentious, sticky tables and all."),
    "touristy": (
        "It is touristy, expect crowds of visitors.",
        "Definitely a tourist favourite, lots of tour groups.",
    ),
    "trendy": ("Trendy space with a stylish crowd.", "Very trendy, the design is striking."),
    "upscale": (
        "Upscale and polished, a real special occasion place.",
        "Classy and upscale, worth dressing for.",
    ),
    "casual": ("Casual and laid-back, come as you are.", "Relaxed, casual vibe with friendly staff."),
}
MEALS = {
    "breakfast": (
        "Came for breakfast and the eggs were perfect.",
        "A great breakfast spot before exploring.",
    ),
    "brunch": ("Weekend brunch here is a treat.", "The brunch menu had something for everyone."),
    "lunch": ("A quick, tasty lunch between sights.", "Perfect for a lazy lunch."),
    "dinner": ("We had a memorable dinner here.", "Dinner service was smooth and well paced."),
    "latenight": (
        "Open late, great for a late-night bite.",
        "Still serving after midnight, a late night lifesaver.",
    ),
    "dessert": ("Save room for dessert, the tart is wonderful.", "The desserts alone are worth the visit."),
}
BOOLEANS: dict[str, dict[bool, tuple[str, ...]]] = {
    "wheelchair_accessible": {
        True: (
            "The entrance has a ramp and the restrooms are wheelchair accessible.",
            "Step-free access throughout, easy with a wheelchair.",
            "Fully wheelchair accessible, wide aisles and an accessible restroom.",
        ),
        False: (
            "There are steps at the entrance and no ramp.",
            "Not wheelchair friendly, the restroom is down a staircase.",
        ),
    },
    "good_for_kids": {
        True: (
            "Our kids loved it and the staff were great with children.",
            "Very family friendly, they had high chairs and crayons.",
            "A great place for families with young children.",
        ),
        False: (
            "Not really a place for kids.",
            "No high chairs and a grown-up atmosphere, we would not bring children.",
        ),
    },
    "good_for_groups": {
        True: ("They easily seated our group of ten.", "Great for groups, with big tables in the back."),
        False: ("Not great for groups, the tables are tiny.",),
    },
    "outdoor_seating": {
        True: (
            "We sat on the lovely patio in the sun.",
            "The outdoor terrace is the best seat in town.",
            "Plenty of outdoor seating with a view.",
        ),
        False: ("No outdoor seating, sadly.",),
    },
    "takes_reservations": {
        True: (
            "They take reservations, so book ahead on weekends.",
            "We made a reservation online and were seated on time.",
        ),
        False: ("They do not take reservations, so expect a wait.",),
    },
    "dogs_allowed": {
        True: (
            "Dog friendly, they even brought a water bowl for our pup.",
            "Dogs are welcome, ours got a treat.",
        ),
        False: ("No dogs allowed, we had to leave ours at home.",),
    },
    "parking": {
        True: (
            "Parking was easy with a free lot next door.",
            "There is a garage right across the street for parking.",
            "Plenty of parking, valet available too.",
        ),
        False: ("No parking nearby, we circled for ages.",),
    },
    "bike_parking": {
        True: ("There is a bike rack right by the door.", "Easy bike parking out front."),
        False: ("No bike rack, we locked up to a pole.",),
    },
    "has_tv": {
        True: ("Several TVs showing the game.", "Big screens with sports on."),
        False: ("No TVs, which we liked.",),
    },
    "happy_hour": {
        True: ("Happy hour deals on drinks and snacks are great.", "Go for happy hour, half-price oysters."),
        False: ("No happy hour specials, sadly.",),
    },
    "delivery": {
        True: ("They deliver, we ordered to the hotel one night.", "Delivery was fast and still hot."),
        False: ("They do not deliver.",),
    },
    "takeout": {
        True: ("Takeout was packed neatly and ready on time.", "We grabbed food to go for a picnic."),
        False: ("No takeout, dine in only.",),
    },
    "accepts_credit_cards": {
        True: ("They take credit cards without any fuss.", "Card payment was quick and easy."),
        False: ("Cash only, they do not take cards.",),
    },
    "by_appointment_only": {
        True: ("Visits are by appointment only, so book a slot.",),
        False: ("No appointment needed, just walk in.",),
    },
}
PRICE = {
    1: (
        "Cheap and cheerful, great value for money.",
        "Very affordable, a real budget find.",
        "Inexpensive and generous, a bargain.",
    ),
    2: (
        "Reasonably priced for the quality.",
        "Fair prices and decent portions.",
        "Good value for what you get.",
    ),
    3: ("A bit pricey, but worth it.", "On the expensive side, but the quality justifies it."),
    4: (
        "A splurge, expensive but unforgettable.",
        "High-end prices to match the experience.",
        "Very expensive, save it for a special occasion.",
    ),
}
LOCATION_NEAR = (
    "Central location, an easy walk from downtown.",
    "Great location, close to everything.",
    "Walking distance from the waterfront.",
)
LOCATION_FAR = ("A bit of a drive from the center.", "Out of the way, you will need a car or a taxi.")
PRAISE = (
    "One of the highlights of our trip.",
    "Outstanding from start to finish.",
    "Excellent, we loved every minute.",
    "Fantastic experience, we would come back tomorrow.",
)
COMPLAINTS = (
    "Service was slow and the host seemed distracted.",
    "It was overpriced for what we got.",
    "Our visit felt rushed and a little disorganised.",
    "The place could use a deep clean.",
)
FILLER = (
    "We came on a Tuesday evening.",
    "We visited with friends from out of town.",
    "Booked this after reading a few reviews.",
    "We stopped by on our second day in town.",
    "It was our first visit.",
)

# Attribute keys generated per POI type (restaurants get them all).
TYPE_ATTRIBUTES: dict[str, tuple[str, ...]] = {
    "restaurant": (
        "noise",
        "wifi",
        "alcohol",
        "attire",
        "ambience",
        "good_for_meal",
        "wheelchair_accessible",
        "good_for_kids",
        "good_for_groups",
        "outdoor_seating",
        "takes_reservations",
        "dogs_allowed",
        "parking",
        "bike_parking",
        "has_tv",
        "happy_hour",
        "delivery",
        "takeout",
        "accepts_credit_cards",
    ),
    "hotel": (
        "noise",
        "wifi",
        "alcohol",
        "ambience",
        "wheelchair_accessible",
        "good_for_kids",
        "good_for_groups",
        "outdoor_seating",
        "dogs_allowed",
        "parking",
        "bike_parking",
        "accepts_credit_cards",
    ),
    "attraction": (
        "noise",
        "wifi",
        "ambience",
        "wheelchair_accessible",
        "good_for_kids",
        "good_for_groups",
        "outdoor_seating",
        "dogs_allowed",
        "parking",
        "bike_parking",
        "accepts_credit_cards",
        "by_appointment_only",
    ),
}
BOOL_TRUE_SHARE = {  # P(attribute is True); the rest are False
    "wheelchair_accessible": 0.6,
    "good_for_kids": 0.55,
    "good_for_groups": 0.6,
    "outdoor_seating": 0.45,
    "takes_reservations": 0.5,
    "dogs_allowed": 0.3,
    "parking": 0.55,
    "bike_parking": 0.5,
    "has_tv": 0.35,
    "happy_hour": 0.35,
    "delivery": 0.35,
    "takeout": 0.6,
    "accepts_credit_cards": 0.9,
    "by_appointment_only": 0.1,
}
AMBIENCE_BY_TYPE = {
    "restaurant": (
        "romantic",
        "intimate",
        "classy",
        "hipster",
        "divey",
        "touristy",
        "trendy",
        "upscale",
        "casual",
    ),
    "hotel": ("romantic", "classy", "trendy", "upscale", "casual", "touristy", "intimate"),
    "attraction": ("romantic", "touristy", "casual", "trendy", "hipster", "intimate"),
}
NEAR_KM = 2.0  # POIs within this distance of the centre get "walkable" location sentences


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _place(rng: random.Random) -> tuple[float, float, float]:
    """Random point around :data:`CENTRE`: radius |N(0, 2.2)| km capped at 9, uniform bearing."""
    radius = min(9.0, abs(rng.gauss(0.0, 2.2)))
    bearing = rng.uniform(0.0, 2 * math.pi)
    lat = CENTRE[0] + radius * math.cos(bearing) / 111.32
    lon = CENTRE[1] + radius * math.sin(bearing) / (111.32 * math.cos(math.radians(CENTRE[0])))
    return round(lat, 6), round(lon, 6), radius


def _attributes(rng: random.Random, poi_type: str, kind: Kind, price: int) -> dict[str, object]:
    attrs: dict[str, object] = {}
    for key in TYPE_ATTRIBUTES[poi_type]:
        if key == "noise":
            attrs[key] = rng.choices(("quiet", "average", "loud", "very_loud"), weights=(35, 40, 18, 7))[0]
        elif key == "wifi":
            attrs[key] = rng.choices(("free", "paid", "no"), weights=(60, 10, 30))[0]
        elif key == "alcohol":
            attrs[key] = rng.choices(("full_bar", "beer_and_wine", "none"), weights=(40, 35, 25))[0]
        elif key == "attire":
            attrs[key] = (
                "formal" if price == 4 and rng.random() < 0.5 else ("dressy" if price >= 3 else "casual")
            )
        elif key == "ambience":
            pool = AMBIENCE_BY_TYPE[poi_type]
            labels = set(rng.sample(pool, k=rng.choice((1, 2))))
            if price >= 4 and "upscale" in pool:
                labels.add("upscale")
            if price <= 1 and "casual" in pool:
                labels.add("casual")
            attrs[key] = sorted(labels)
        elif key == "good_for_meal":
            meals = ("breakfast", "brunch", "lunch", "dinner", "latenight", "dessert")
            attrs[key] = sorted(rng.sample(meals, k=rng.randint(1, 3)))
        else:
            attrs[key] = rng.random() < BOOL_TRUE_SHARE[key]
    if poi_type == "attraction" and kind.label in ("Parks", "Beaches", "Botanical Gardens"):
        attrs["outdoor_seating"] = True
    return attrs


def _fact_sentences(rng: random.Random, poi: POI, kind: Kind, near: bool) -> list[str]:
    """One sentence per attribute fact of ``poi`` (each drawn from its phrasing bank)."""
    out = [rng.choice(kind.sentences)]
    if poi.price_level is not None:
        out.append(rng.choice(PRICE[poi.price_level]))
    out.append(rng.choice(LOCATION_NEAR if near else LOCATION_FAR))
    for key, value in poi.attributes.items():
        if key == "noise":
            out.append(rng.choice(NOISE[str(value)]))
        elif key == "wifi":
            out.append(rng.choice(WIFI[str(value)]))
        elif key == "alcohol":
            out.append(rng.choice(ALCOHOL[str(value)]))
        elif key == "attire":
            out.append(rng.choice(ATTIRE[str(value)]))
        elif key == "ambience":
            out.extend(rng.choice(AMBIENCE[label]) for label in value)  # type: ignore[union-attr]
        elif key == "good_for_meal":
            out.extend(rng.choice(MEALS[label]) for label in value)  # type: ignore[union-attr]
        else:
            out.append(rng.choice(BOOLEANS[key][bool(value)]))
    return out


def _reviews(rng: random.Random, poi: POI, kind: Kind, near: bool, n: int) -> list[Review]:
    """``n`` reviews dealing every fact sentence round-robin over the reviews rated 3+ (all reviews when
    none is), plus praise/complaint/filler sentences.

    Every fact appears in at least one review; each review also gets 1-2 extra facts drawn again from
    the banks (different phrasing), so aspects are usually expressed more than once.
    """
    if n <= 0:
        return []
    ratings = [max(1, min(5, round(poi.stars + rng.gauss(0.0, 0.9)))) for _ in range(n)]
    facts = _fact_sentences(rng, poi, kind, near)
    rng.shuffle(facts)
    buckets: list[list[str]] = [[] for _ in range(n)]
    # facts go to reviews rated 3+ when there are any: a sentence of a 1-2-star review reads as part of a
    # complaint (groundtrace.crs.kb.stance, review context) and is never quoted in support
    dealt = [j for j in range(n) if ratings[j] >= 3] or list(range(n))
    for i, sentence in enumerate(facts):
        buckets[dealt[i % len(dealt)]].append(sentence)
    reviews = []
    for j, body in enumerate(buckets):
        extra = _fact_sentences(rng, poi, kind, near)
        for sentence in rng.sample(extra, k=min(len(extra), rng.randint(1, 2))):
            if sentence not in body:
                body.append(sentence)
        stars = ratings[j]
        if stars >= 4:
            body.append(rng.choice(PRAISE))
        elif stars <= 2:
            body.append(rng.choice(COMPLAINTS))
        if rng.random() < 0.5:
            body.insert(0, rng.choice(FILLER))
        head, tail = body[:1], body[1:]
        rng.shuffle(tail)
        date = f"20{rng.randint(19, 25)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
        reviews.append(
            Review(
                review_id=f"{poi.poi_id}-rv{j + 1:02d}",
                poi_id=poi.poi_id,
                stars=float(stars),
                text=" ".join(head + tail),
                date=date,
            )
        )
    return reviews


def generate_demo_kb(
    seed: int = 0, *, city: str = "Lumen Bay", n_per_type: int = 60, reviews_per_poi: int = 8
) -> KnowledgeBase:
    """Generate the demo city: ``n_per_type`` POIs of each type with ``reviews_per_poi`` reviews each."""
    if n_per_type < 1:
        raise ValueError(f"n_per_type must be >= 1, got {n_per_type}")
    rng = random.Random(f"groundtrace-demo-kb:{seed}:{city}")
    slug = _slug(city)
    pois: list[POI] = []
    reviews: list[Review] = []
    used_names: set[str] = set()
    for poi_type, letter in (("restaurant", "r"), ("hotel", "h"), ("attraction", "a")):
        kinds = KINDS_BY_TYPE[poi_type]
        deck = [kinds[i % len(kinds)] for i in range(n_per_type)]  # balanced: every kind n/k times (±1)
        rng.shuffle(deck)
        for i in range(n_per_type):
            kind = deck[i]
            name = f"{rng.choice(NAME_PREFIXES)} {rng.choice(kind.nouns)}"
            while name in used_names:
                name = (
                    f"{rng.choice(NAME_PREFIXES)} {name}" if len(name) < 40 else f"{name} {len(used_names)}"
                )
            used_names.add(name)
            price = rng.choice(kind.price)
            lat, lon, radius = _place(rng)
            stars = rng.choices((2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0), weights=(4, 6, 12, 22, 28, 20, 8))[0]
            poi_id = f"{slug}-{letter}{i + 1:03d}"
            poi = POI(
                poi_id=poi_id,
                name=name,
                city=city,
                state="",
                poi_type=poi_type,
                lat=lat,
                lon=lon,
                stars=stars,
                review_count=reviews_per_poi,
                price_level=price,
                categories=[PARENT_CATEGORY[poi_type], kind.label, *kind.also],
                attributes=_attributes(rng, poi_type, kind, price),
                address=f"{rng.randint(1, 399)} {rng.choice(STREETS)} {rng.choice(STREET_SUFFIX)}",
            )
            pois.append(poi)
            reviews.extend(_reviews(rng, poi, kind, radius <= NEAR_KM, reviews_per_poi))
    return KnowledgeBase(pois, reviews, name=f"demo:{slug}:seed{seed}")


def bank_sentences() -> dict[tuple[str, object], tuple[str, ...]]:
    """Every phrasing bank keyed by ``(attribute, value)`` — used by tests of the evidence lexicon."""
    out: dict[tuple[str, object], tuple[str, ...]] = {}
    for value, sents in NOISE.items():
        out[("noise", value)] = sents
    for value, sents in WIFI.items():
        out[("wifi", value)] = sents
    for value, sents in ALCOHOL.items():
        out[("alcohol", value)] = sents
    for value, sents in AMBIENCE.items():
        out[("ambience", value)] = sents
    for value, sents in MEALS.items():
        out[("good_for_meal", value)] = sents
    for key, by_value in BOOLEANS.items():
        for flag, sents in by_value.items():
            out[(key, flag)] = sents
    for level, sents in PRICE.items():
        out[("price_level", level)] = sents
    for kinds in KINDS_BY_TYPE.values():
        for kind in kinds:
            out[("category", kind.label)] = kind.sentences
    out[("location", "near")] = LOCATION_NEAR
    out[("location", "far")] = LOCATION_FAR
    return out
