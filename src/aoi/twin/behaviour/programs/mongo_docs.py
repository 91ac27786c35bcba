"""What the apps keep in MongoDB: databases seeded as their services create them, documents generated on read."""

from __future__ import annotations

import hashlib

from aoi.twin.behaviour.programs.basics import hex_id, rng_for
from aoi.twin.behaviour.programs.mongo_values import Special

# What the services create at start-up (HotelReservation's "Generating test data...", SocialNetwork's indexes).
COLLECTIONS = {
    "geo-db": {"geo": 80}, "rate-db": {"inventory": 80}, "profile-db": {"hotels": 80},
    "recommendation-db": {"recommend": 80}, "reservation-db": {"reservation": 1, "number": 80},
    "user-db": {"user": 501},
    "user": {"user": 962}, "social-graph": {"social-graph": 962}, "post": {"post": 0},
    "user-timeline": {"user-timeline": 0}, "url-shorten": {"url-shorten": 0}, "media": {"media": 0},
}
SOCIAL_STORES = {"user-mongodb": "user", "social-graph-mongodb": "social-graph", "post-storage-mongodb": "post",
                 "user-timeline-mongodb": "user-timeline", "url-shorten-mongodb": "url-shorten",
                 "media-mongodb": "media"}
SYSTEM_DBS = ("config", "local")
SHOWN = 1000  # documents generated per collection at most (enough for find/limit/filters)
HOTELS = [("Clift Hotel", "495", "Geary St", "94102", "(415) 775-4700"),
          ("W San Francisco", "181", "3rd St", "94103", "(415) 777-5300"),
          ("Hotel Zetta", "55", "5th St", "94103", "(415) 543-8555"),
          ("Hotel Vitale", "8", "Mission St", "94105", "(415) 278-3700"),
          ("Phoenix Hotel", "601", "Eddy St", "94109", "(415) 776-1380"),
          ("St. Regis San Francisco", "125", "3rd St", "94109", "(415) 284-4000")]


def store_databases(app, component: str) -> list[str]:
    """Return the databases the app's services keep on a MongoDB component."""
    if app is None:
        return []
    dbs = [spec["mongo"]["db"] for spec in app.components.values()
           if (spec.get("mongo") or {}).get("service") == component and spec["mongo"].get("db")]
    return sorted(set(dbs)) or ([SOCIAL_STORES[component]] if component in SOCIAL_STORES else [])


def seed(data, app, component: str) -> None:
    """Create the databases the app's services would have created on this server's volume (once)."""
    for db in store_databases(app, component):
        if db not in data.databases:
            data.databases[db] = dict(COLLECTIONS.get(db, {}))


def object_id(*parts) -> Special:
    """Return a deterministic ObjectId for a document."""
    rng = rng_for("oid", *parts)
    return Special("ObjectId", f"{0x683d6a50 + rng.randrange(3600):08x}{hex_id(rng, 16)}")


def generate(db: str, coll: str, i: int) -> dict:
    """Return document i of a seeded collection."""
    doc = {"_id": object_id(db, coll, i)}
    n, hotel = str(i + 1), HOTELS[i % len(HOTELS)]
    lat, lon = round(37.7835 + (i % 40) * 0.0021, 4), round(-122.41 + (i // 2 % 40) * 0.0018, 4)
    if coll == "geo":
        doc |= {"hotelId": n, "lat": lat, "lon": lon}
    elif coll == "inventory":
        doc |= {"hotelId": n, "code": "RACK", "inDate": "2015-04-09", "outDate": "2015-04-10",
                "roomType": {"bookableRate": 109.0 + i % 3 * 30, "totalRate": 109.0 + i % 3 * 30,
                             "totalRateInclusive": 123.17 + i % 3 * 30, "code": "KNG", "currency": "USD",
                             "roomDescription": "King sized bed"}}
    elif coll == "hotels":
        doc |= {"id": n, "name": hotel[0], "phoneNumber": hotel[4], "description": f"A stay at {hotel[0]}.",
                "address": {"streetNumber": hotel[1], "streetName": hotel[2], "city": "San Francisco",
                            "state": "CA", "country": "United States", "postalCode": hotel[3], "lat": lat,
                            "lon": lon}}
    elif coll == "recommend":
        doc |= {"hId": n, "lat": lat, "lon": lon, "rate": [2.5, 3.5, 4.5][i % 3], "price": 109.0 + i % 5 * 40}
    elif coll == "number":
        doc |= {"hotelId": n, "numberOfRoom": 200}
    elif coll == "reservation":
        doc |= {"hotelId": "4", "customerName": "Alice", "inDate": "2015-04-09", "outDate": "2015-04-10",
                "number": 1}
    else:
        doc |= _social(db, coll, i)
    return doc


def _social(db: str, coll: str, i: int) -> dict:
    """Return a SocialNetwork document (or a plain numbered one)."""
    if db == "user-db":
        return {"username": f"Cornell_{i}", "password": hashlib.sha256((str(i) * 10).encode()).hexdigest()}
    if coll == "user":
        salt = hex_id(rng_for("salt", i), 32)
        return {"user_id": Special("NumberLong", i), "first_name": f"first_name_{i}",
                "last_name": f"last_name_{i}", "username": f"username_{i}", "salt": salt,
                "password": hashlib.sha256(f"password_{i}{salt}".encode()).hexdigest()}
    if coll == "social-graph":
        follows = [Special("NumberLong", (i + k * 7) % 962) for k in (1, 2, 3)]
        return {"user_id": Special("NumberLong", i), "followers": follows, "followees": follows[::-1]}
    return {"n": i}


def documents(store: dict, key: tuple, count: int) -> list[dict]:
    """Return a collection's documents: generated ones first, then those inserted through the shell."""
    volume, db, coll = key
    inserted = store.get(key, [])
    generated = max(count - len(inserted), 0)
    return [generate(db, coll, i) for i in range(min(generated, SHOWN))] + inserted


def matches(doc: dict, query: dict) -> bool:
    """Tell whether a document has every field a query asks for (equality only)."""
    for path, want in query.items():
        value = doc
        for part in path.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        if value != want and not (isinstance(want, (int, float)) and isinstance(value, (int, float))
                                  and float(value) == float(want)):
            return False
    return True


def project(doc: dict, fields: dict | None) -> dict:
    """Apply a find projection ({a: 1} keeps, {a: 0} drops; _id stays unless dropped)."""
    if not fields:
        return doc
    keep = {k for k, v in fields.items() if v}
    if keep:
        return {k: v for k, v in doc.items() if k in keep or (k == "_id" and fields.get("_id", 1))}
    return {k: v for k, v in doc.items() if k not in fields}


def size_on_disk(collections: dict[str, int]) -> int:
    """Return a plausible sizeOnDisk for a database."""
    return 8192 + sum(4096 + 4096 * (1 + n // 40) for n in collections.values())
