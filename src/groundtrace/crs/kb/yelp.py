"""Stream the Yelp Open Dataset files into :class:`~groundtrace.crs.schema.POI` / ``Review`` records.

Files: ``yelp_academic_dataset_business.json`` and ``yelp_academic_dataset_review.json``, one JSON object
per line (the review file is ~5 GB). Everything here streams line by line in binary mode: memory is
constant in the file size, progress is reported in bytes through an optional ``on_bytes`` callback.

Real-data quirks handled
------------------------
* Attribute values are often *strings holding Python literals*: ``"u'quiet'"``, ``"'none'"``, ``"None"``,
  ``"True"``, ``"{'romantic': False, 'classy': None}"``. :func:`parse_literal` decodes them with
  :func:`ast.literal_eval` (never ``eval``) and never raises.
* ``categories``, ``hours``, ``attributes`` may be null or missing; the last line may lack ``\\n``.
* A malformed line (bad JSON, invalid UTF-8, an unpaired surrogate escape such as ``"\\ud800"``, not an
  object, nested deeper than 100 levels, longer than 8 MiB, missing required field, an id that is not a
  string, latitude outside [-90, 90] or longitude outside [-180, 180]) is recorded as a
  :class:`~groundtrace.core.files.errors.LineError` ``file:line: message`` and skipped; the rest is read.
* A repeated ``business_id`` (or ``review_id``) is reported as ``duplicate ...; skipped`` and only its
  first line is kept — never silently merged, never compared as records.

Category mapping (:data:`CATEGORY_RULES`, first matching rule wins — the precedence):
hotel (lodging keywords, not a rest stop) > restaurant ("Restaurants") > attraction (museums, parks,
landmarks, arts, tours, escape rooms, bowling, golf courses, ...; not when a shop, salon, tattoo or
transport category says it is a business selling something else) > restaurant (weaker food keywords such
as "Food", "Cafes", unless a shop keyword such as "Grocery" is present). A hotel with a restaurant is a
hotel; a museum with a café is an attraction; a restaurant that also hosts music ("Arts & Entertainment")
stays a restaurant. ``"Hotels & Travel"`` alone is not a hotel (it is Yelp's parent of car rental,
airports, travel agents...). *A restaurant inside a hotel*: Yelp tags some hotel restaurants with
"Hotels" too ("Restaurant R'evolution": Cajun/Creole, Restaurants, Hotels); when the only lodging category
is "Hotels", "Restaurants" is present and the business name has no lodging word (:data:`LODGING_NAME_RE`:
hotel, inn, suites, resort, lodge, motel, hostel, B&B ...), it is a restaurant (:func:`classify` with
``name``).
"""

from __future__ import annotations

import ast
import copy
import json
import re
import warnings
from collections.abc import Callable, Container, Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from groundtrace.core.files.errors import LineError
from groundtrace.core.files.jsonl import iter_jsonl, json_type_name
from groundtrace.core.files.validation import validation_message
from groundtrace.crs.schema import POI, Review

BUSINESS_FILE = "yelp_academic_dataset_business.json"
REVIEW_FILE = "yelp_academic_dataset_review.json"

#: A decoded attribute value: None, bool, int, float, str, or list/dict (str keys) of these.
LiteralValue = None | bool | int | float | str | list[Any] | dict[str, Any]

_MAX_LITERAL_CHARS = 10_000  # longer strings are returned unparsed (literal_eval cost and recursion guard)
_LITERAL_START = re.compile(r"""^\s*(?:[uUbBrR]{0,2}['"]|[\[{(]|None\b|True\b|False\b|[-+]?(?:\d|\.\d))""")


def parse_literal(value: object) -> LiteralValue:
    """Decode one raw Yelp attribute value; never raises.

    Contract: non-strings are normalised and returned (a JSON ``true`` stays ``True``); a string that
    looks like a Python literal is decoded with :func:`ast.literal_eval` and normalised — tuples and
    lists become lists, sets become sorted lists of their ``repr``-sorted items, dict keys become
    ``str``; bytes are decoded as UTF-8 with replacement; anything else (complex numbers, non-literal
    text, over-long or over-deep input, a container holding any of these) is returned as the stripped
    original string (``repr`` for a non-string input). The result is always a :data:`LiteralValue`.
    """
    if not isinstance(value, str):
        try:
            return _normalise(value)
        except _Unsupported:
            return repr(value)
    decoded = _decode_text(value.strip())
    # cached containers are shared: hand out a copy so a caller's edit cannot leak into later results
    return copy.deepcopy(decoded) if isinstance(decoded, list | dict) else decoded


@lru_cache(maxsize=8192)
def _decode_text(text: str) -> LiteralValue:
    """:func:`parse_literal` of a stripped string. Cached: Yelp attribute strings repeat heavily
    (``"u'quiet'"``, ``"True"``, the same ``BusinessParking`` dicts) and ``ast.literal_eval`` dominates the
    business pass of a KB build."""
    if len(text) > _MAX_LITERAL_CHARS or not _LITERAL_START.match(text):
        return text
    try:
        if "\\" in text:  # an invalid escape would warn (DeprecationWarning/SyntaxWarning) on untrusted data
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return _normalise(ast.literal_eval(text))
        return _normalise(ast.literal_eval(text))
    except (_Unsupported, ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return text
    except Exception:  # noqa: BLE001 - literal_eval on untrusted input: any failure means "not a literal"
        return text


class _Unsupported(Exception):
    """A decoded value (or part of it) is not a :data:`LiteralValue`."""


def _normalise(obj: object, depth: int = 0) -> LiteralValue:
    if depth > 50:
        raise _Unsupported
    if obj is None or isinstance(obj, bool | int | float | str):
        return obj  # type: ignore[return-value]
    if isinstance(obj, bytes):
        return obj.decode("utf-8", errors="replace")
    if isinstance(obj, list | tuple):
        return [_normalise(x, depth + 1) for x in obj]
    if isinstance(obj, set | frozenset):
        return [_normalise(x, depth + 1) for x in sorted(obj, key=repr)]
    if isinstance(obj, dict):
        return {str(k): _normalise(v, depth + 1) for k, v in obj.items()}
    raise _Unsupported


# -- attributes --------------------------------------------------------------------------------------

#: Yelp boolean attributes → canonical keys (schema.ATTRIBUTE_KEYS).
BOOL_ATTRIBUTES: dict[str, str] = {
    "WheelchairAccessible": "wheelchair_accessible",
    "GoodForKids": "good_for_kids",
    "RestaurantsGoodForGroups": "good_for_groups",
    "OutdoorSeating": "outdoor_seating",
    "RestaurantsReservations": "takes_reservations",
    "DogsAllowed": "dogs_allowed",
    "BikeParking": "bike_parking",
    "HasTV": "has_tv",
    "HappyHour": "happy_hour",
    "RestaurantsDelivery": "delivery",
    "RestaurantsTakeOut": "takeout",
    "BusinessAcceptsCreditCards": "accepts_credit_cards",
    "ByAppointmentOnly": "by_appointment_only",
}

#: Yelp enumerated attributes → (canonical key, {raw value: canonical value}).
ENUM_ATTRIBUTES: dict[str, tuple[str, dict[str, str]]] = {
    "NoiseLevel": (
        "noise",
        {"quiet": "quiet", "average": "average", "loud": "loud", "very_loud": "very_loud"},
    ),
    "WiFi": ("wifi", {"free": "free", "paid": "paid", "no": "no"}),
    "Alcohol": ("alcohol", {"full_bar": "full_bar", "beer_and_wine": "beer_and_wine", "none": "none"}),
    "RestaurantsAttire": ("attire", {"casual": "casual", "dressy": "dressy", "formal": "formal"}),
}

#: Yelp dict attributes → (canonical key, allowed labels); value = sorted labels whose flag is True.
SET_ATTRIBUTES: dict[str, tuple[str, tuple[str, ...]]] = {
    "Ambience": (
        "ambience",
        ("romantic", "intimate", "classy", "hipster", "divey", "touristy", "trendy", "upscale", "casual"),
    ),
    "GoodForMeal": ("good_for_meal", ("breakfast", "brunch", "lunch", "dinner", "latenight", "dessert")),
}

PARKING_KINDS = ("garage", "street", "lot", "valet", "validated")


def _as_bool(value: LiteralValue) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    return None


def map_attributes(raw: object) -> tuple[dict[str, Any], int | None]:
    """Map a raw Yelp ``attributes`` object to ``(canonical attributes, price level)``.

    Unknown or unparseable values are left out (an absent key means "unknown"). Dict attributes
    (Ambience, GoodForMeal) become the sorted list of labels flagged True, and are dropped when every flag is
    None/unknown. ``parking`` is True when any BusinessParking kind is True, False when all known kinds are
    False. Price is ``RestaurantsPriceRange2`` as an int in 1..4, else None.
    """
    if not isinstance(raw, dict):
        return {}, None
    attrs: dict[str, Any] = {}
    for yelp_key, key in BOOL_ATTRIBUTES.items():
        if yelp_key in raw:
            flag = _as_bool(parse_literal(raw[yelp_key]))
            if flag is not None:
                attrs[key] = flag
    for yelp_key, (key, table) in ENUM_ATTRIBUTES.items():
        if yelp_key in raw:
            value = parse_literal(raw[yelp_key])
            if isinstance(value, str) and value.strip().lower() in table:
                attrs[key] = table[value.strip().lower()]
    for yelp_key, (key, labels) in SET_ATTRIBUTES.items():
        value = parse_literal(raw.get(yelp_key))
        if isinstance(value, dict):
            flags = {str(k).lower(): _as_bool(v) for k, v in value.items()}
            known = {k: f for k, f in flags.items() if k in labels and f is not None}
            if known:
                attrs[key] = sorted(k for k, f in known.items() if f)
    parking = parse_literal(raw.get("BusinessParking"))
    if isinstance(parking, dict):
        flags = [_as_bool(parking.get(kind)) for kind in PARKING_KINDS]
        if any(f is True for f in flags):
            attrs["parking"] = True
        elif any(f is False for f in flags):
            attrs["parking"] = False
    price = parse_literal(raw.get("RestaurantsPriceRange2"))
    price_level: int | None = None
    if isinstance(price, int) and not isinstance(price, bool) and 1 <= price <= 4:
        price_level = price
    return attrs, price_level


# -- categories --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CategoryRule:
    """``poi_type`` applies when any of ``any_of`` and none of ``none_of`` is among the categories."""

    poi_type: str
    any_of: frozenset[str]
    none_of: frozenset[str] = frozenset()


#: First matching rule wins (see module docstring for the precedence rationale). Case-insensitive.
CATEGORY_RULES: tuple[CategoryRule, ...] = (
    CategoryRule(
        "hotel",
        frozenset(
            {
                "hotels",
                "bed & breakfast",
                "hostels",
                "resorts",
                "guest houses",
                "motels",
                "inns",
                "campgrounds",
            }
        ),
        none_of=frozenset({"rest stops"}),
    ),
    CategoryRule("restaurant", frozenset({"restaurants"})),
    CategoryRule(
        "attraction",
        frozenset(
            {
                "museums",
                "art museums",
                "parks",
                "landmarks & historical buildings",
                "arts & entertainment",
                "tours",
                "walking tours",
                "art galleries",
                "zoos",
                "aquariums",
                "botanical gardens",
                "performing arts",
                "amusement parks",
                "planetarium",
                "observatories",
                "beaches",
                "hiking",
                "music venues",
                "theaters",
                "historical tours",
                "public art",
                "gardens",
                "stadiums & arenas",
                "casinos",
                "cinema",
                "local flavor",
                "wineries",
                "breweries",
                "escape games",
                "bowling",
                "trampoline parks",
                "playgrounds",
                "skating rinks",
                "golf",
                "mini golf",
                "boating",
                "jet skis",
                "water parks",
                "arcades",
                "haunted houses",
                "festivals",
            }
        ),
        none_of=frozenset(
            {
                "fashion",
                "shoe stores",
                "sports wear",
                "dance wear",
                "tattoo",
                "piercing",
                "hair salons",
                "psychics",
                "supernatural readings",
                "brewing supplies",
                "airport shuttles",
                "taxis",
                "buses",
                "photography stores & services",
                "wholesale stores",
                "sporting goods",
            }
        ),
    ),
    CategoryRule(
        "restaurant",
        frozenset({"food", "cafes", "food trucks", "bakeries", "desserts", "coffee & tea", "delis"}),
        none_of=frozenset(
            {
                "grocery",
                "convenience stores",
                "drugstores",
                "gas stations",
                "wholesale stores",
                "department stores",
            }
        ),
    ),
)


def split_categories(raw: object) -> list[str]:
    """Yelp's comma-separated ``categories`` string (or null) → stripped non-empty names, original order."""
    if isinstance(raw, list):
        items = [str(x) for x in raw]
    elif isinstance(raw, str):
        items = raw.split(",")
    else:
        return []
    return [c.strip() for c in items if c.strip()]


#: A lodging word in a business name (a hotel's restaurant tagged "Hotels" has none).
LODGING_NAME_RE = re.compile(
    r"\b(?:hotels?|inns?|suites|resorts?|lodges?|motels?|hostels?|b ?& ?b|bed and breakfast|guest ?house|"
    r"mansions?|marriott|hilton|hyatt|sheraton|westin|doubletree|courtyard|residence|plaza)\b",
    re.IGNORECASE,
)


def classify(
    categories: list[str], rules: tuple[CategoryRule, ...] = CATEGORY_RULES, *, name: str | None = None
) -> str | None:
    """POI type of a business from its categories (first matching rule), or None when none matches.

    With ``name``, a restaurant inside a hotel (module docstring) is a restaurant, not a hotel."""
    lowered = {c.lower() for c in categories}
    for rule in rules:
        if lowered & rule.any_of and not lowered & rule.none_of:
            if (
                rule.poi_type == "hotel"
                and name is not None
                and "restaurants" in lowered
                and lowered & rule.any_of == {"hotels"}
                and not LODGING_NAME_RE.search(name)
            ):
                return "restaurant"
            return rule.poi_type
    return None


# -- records -----------------------------------------------------------------------------------------


class RecordError(ValueError):
    """A well-formed JSON line that is not a usable record (missing or invalid required field)."""


SURROGATE_MESSAGE = "unpaired UTF-16 surrogate escape (e.g. \\ud800) in a text field: not valid text"


def _require_encodable(*texts: str) -> None:
    """Raise :class:`RecordError` when a kept string holds a lone surrogate (JSON ``"\\ud800"``), which no
    UTF-8 file or SQLite text can store (surrogate *pairs* are decoded by ``json`` into one character).
    Only the strings a record keeps are checked: attribute values are canonical enums and cannot hold one."""
    for text in texts:
        if not text.isascii():  # O(1) in CPython; only non-ASCII text can hold a surrogate
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:
                raise RecordError(SURROGATE_MESSAGE) from None


def _require_string_ids(obj: dict[str, Any], *keys: str) -> None:
    """Raise :class:`RecordError` when an id field is not a JSON string (Yelp ids are 22-character
    strings; an integer id would be turned into another id by ``str()`` and match nothing)."""
    for key in keys:
        value = obj[key]
        if not isinstance(value, str):
            raise RecordError(
                f"{key} must be a string, got {json_type_name(value)} ({json.dumps(value)[:40]})"
            )
        if not value.strip():
            raise RecordError(f"{key} is empty")


def business_to_poi(obj: dict[str, Any]) -> POI | None:
    """One business object → POI, or None when its categories map to no POI type.

    Raises :class:`RecordError` when a required field (business_id, name, latitude, longitude, stars)
    is missing or invalid.
    """
    if obj.get("business_id") is not None:  # a corrupt id is reported whatever the categories
        _require_string_ids(obj, "business_id")
    categories = split_categories(obj.get("categories"))
    poi_type = classify(categories, name=str(obj.get("name") or ""))
    if poi_type is None:
        return None
    missing = [k for k in ("business_id", "name", "latitude", "longitude", "stars") if obj.get(k) is None]
    if missing:
        raise RecordError(f"missing required field(s): {', '.join(missing)}")
    attrs, price = map_attributes(obj.get("attributes"))
    try:
        poi = POI(
            poi_id=str(obj["business_id"]),
            name=str(obj["name"]),
            city=str(obj.get("city") or "").strip(),
            state=str(obj.get("state") or "").strip(),
            poi_type=poi_type,  # type: ignore[arg-type]
            lat=float(obj["latitude"]),
            lon=float(obj["longitude"]),
            stars=float(obj["stars"]),
            review_count=int(obj.get("review_count") or 0),
            price_level=price,
            categories=categories,
            attributes=attrs,
            address=str(obj.get("address") or ""),
        )
    except (ValidationError, TypeError, ValueError) as exc:
        raise RecordError(_short_error(exc)) from None
    _require_encodable(poi.poi_id, poi.name, poi.city, poi.state, poi.address, *poi.categories)
    return poi


def review_from_obj(obj: dict[str, Any]) -> Review:
    """One review object → Review; raises :class:`RecordError` on missing/invalid fields."""
    missing = [k for k in ("review_id", "business_id", "stars", "text") if obj.get(k) is None]
    if missing:
        raise RecordError(f"missing required field(s): {', '.join(missing)}")
    _require_string_ids(obj, "review_id", "business_id")
    try:
        date = obj.get("date")
        review = Review(
            review_id=str(obj["review_id"]),
            poi_id=str(obj["business_id"]),
            stars=float(obj["stars"]),
            text=str(obj["text"]),
            date=None if date is None else str(date),
        )
    except (ValidationError, TypeError, ValueError) as exc:
        raise RecordError(_short_error(exc)) from None
    _require_encodable(review.review_id, review.poi_id, review.text, review.date or "")
    return review


def _short_error(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        return validation_message(exc, limit=len(exc.errors()))
    return str(exc)


# -- streaming ---------------------------------------------------------------------------------------

OnBytes = Callable[[int], None]


def iter_json_lines(
    path: Path,
    errors: list[LineError],
    on_bytes: OnBytes | None = None,
    prefilter: Callable[[bytes], bool] | None = None,
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for each JSON-object line of ``path`` (1-based numbers).

    Read through the shared reader ``groundtrace.core.files.jsonl.iter_jsonl``: lines are decoded as UTF-8
    (a byte-order mark opening the file is dropped), blank lines are skipped silently, and a line that is
    not valid UTF-8, longer than ``MAX_LINE_BYTES``, nested deeper than ``MAX_JSON_DEPTH`` (a 100,000-deep
    array would otherwise raise ``RecursionError``), bad JSON or not an object appends a
    :class:`LineError` and is skipped. ``prefilter(raw_line) -> False`` skips a line *unparsed* (so it is
    never reported even if malformed) — this is how the review stream avoids decoding reviews of unwanted
    businesses. ``on_bytes(n)`` is called with the bytes consumed, in chunks, for a progress bar.
    """
    for number, obj, error in iter_jsonl(path, objects_only=True, prefilter=prefilter, on_bytes=on_bytes):
        if error is not None:
            errors.append(error)
        else:
            yield number, obj


def stream_businesses(
    path: Path, errors: list[LineError], on_bytes: OnBytes | None = None, open_only: bool = False
) -> Iterator[POI]:
    """Every business of the file that maps to a POI type, as a :class:`POI` (others skipped silently).

    ``open_only`` skips businesses whose ``is_open`` is 0 (a missing ``is_open`` counts as open). A
    repeated ``business_id`` is reported as ``file:line`` and skipped (the first line wins).
    """
    first_line: dict[str, int] = {}
    for number, obj in iter_json_lines(path, errors, on_bytes):
        if open_only and obj.get("is_open", 1) in (0, False, "0"):
            continue
        try:
            poi = business_to_poi(obj)
        except RecordError as exc:
            errors.append(LineError(file=str(path), line=number, message=str(exc)))
            continue
        if poi is None:
            continue
        if poi.poi_id in first_line:
            message = (
                f"duplicate business_id {poi.poi_id!r} (first on line {first_line[poi.poi_id]}); skipped"
            )
            errors.append(LineError(file=str(path), line=number, message=message))
            continue
        first_line[poi.poi_id] = number
        yield poi


_BUSINESS_ID_RE = re.compile(rb'"business_id" ?: ?"([^"\\]*)"')


def business_id_prefilter(wanted: Container[str]) -> Callable[[bytes], bool]:
    """A cheap line test: False only when the line's ``business_id`` is found and is not in ``wanted``.

    Sound because an unescaped ``"business_id":"`` can only be a JSON key (quotes inside strings are
    escaped), and the id group stops at the first quote or backslash: an id with an escape does not
    match and goes, like any line where the key is not found, to the full parser.
    """

    def keep(raw: bytes) -> bool:
        match = _BUSINESS_ID_RE.search(raw)
        if match is None:  # unusual spacing or an escaped id: let the full parser decide
            return True
        return match.group(1).decode("utf-8", errors="replace") in wanted

    return keep


def stream_reviews(
    path: Path,
    errors: list[LineError],
    on_bytes: OnBytes | None = None,
    business_ids: Container[str] | None = None,
) -> Iterator[Review]:
    """Every review of the file as a :class:`Review`; with ``business_ids``, only reviews of those POIs.

    A repeated ``review_id`` among the yielded reviews is reported and skipped (memory: one id per
    yielded review)."""
    prefilter = business_id_prefilter(business_ids) if business_ids is not None else None
    seen: set[str] = set()  # ids of the reviews yielded (with business_ids, only those POIs' reviews)
    for number, obj in iter_json_lines(path, errors, on_bytes, prefilter=prefilter):
        try:
            review = review_from_obj(obj)
        except RecordError as exc:
            errors.append(LineError(file=str(path), line=number, message=str(exc)))
            continue
        if business_ids is None or review.poi_id in business_ids:
            if review.review_id in seen:
                message = f"duplicate review_id {review.review_id!r} (already read); skipped"
                errors.append(LineError(file=str(path), line=number, message=message))
                continue
            seen.add(review.review_id)
            yield review


def yelp_files(yelp_dir: Path) -> tuple[Path, Path]:
    """The business and review file paths of a Yelp download folder; clear error if one is missing."""
    business, review = yelp_dir / BUSINESS_FILE, yelp_dir / REVIEW_FILE
    for path in (business, review):
        if not path.is_file():
            raise FileNotFoundError(
                f"{path} not found: expected the Yelp Open Dataset JSON files in {yelp_dir}"
            )
    return business, review
