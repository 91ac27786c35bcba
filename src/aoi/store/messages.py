"""The messages sent to models, stored once per store: content-addressed and zlib-compressed.

A probe's conversation grows by two messages a call and the system prompts repeat in every episode, so storing each
step's messages inline would keep most of them many times over. Instead `messages` holds each distinct message once
(key: sha256 of its JSON bytes, value: those bytes compressed, with a count of the episodes using it), and a stored
step keeps the list of keys under REFS; deleting or replacing an episode frees the messages nobody else uses. Steps
without messages (stores older than schema 2, model calls that sent none) keep no REFS key.
"""

from __future__ import annotations

import hashlib
import sqlite3
import zlib
from collections.abc import Iterable

import orjson

REFS = "message_refs"  # the key of a stored step that replaces its `messages`
LEVEL = 6  # zlib's default trade-off between size and speed
CHUNK = 500  # keys per `IN (...)` lookup, well under SQLite's variable limit


def create_tables(conn: sqlite3.Connection) -> None:
    """Create the message table (schema 1 -> 2); `uses` counts the episodes that reference a message."""
    conn.execute("CREATE TABLE messages (sha256 TEXT PRIMARY KEY, uses INTEGER NOT NULL, body BLOB NOT NULL)")


def digest(body: bytes) -> str:
    """Return the key of a message's JSON bytes.

    Example:
        >>> digest(b'{"role":"user","content":"hi"}')[:12]
        'ae760f5ba03c'
    """
    return hashlib.sha256(body).hexdigest()


def detach(data: dict) -> dict[str, bytes]:
    """Replace each step's `messages` in a to_dict() record by their keys; return {key: JSON bytes} of them.

    Example:
        >>> data = {"steps": [{"messages": [{"role": "user", "content": "hi"}] * 2}, {"messages": None}]}
        >>> bodies = detach(data)
        >>> len(bodies), len(data["steps"][0]["message_refs"]), "messages" in data["steps"][1]
        (1, 2, False)
    """
    bodies: dict[str, bytes] = {}
    for step in data.get("steps") or []:
        messages = step.pop("messages", None)
        if messages is None:
            continue
        refs = []
        for message in messages:
            body = orjson.dumps(message, default=str, option=orjson.OPT_NON_STR_KEYS)
            refs.append(digest(body))
            bodies.setdefault(refs[-1], body)
        step[REFS] = refs
    return bodies


def keys(record: dict) -> set[str]:
    """Return the message keys a stored record references.

    Example:
        >>> sorted(keys({"steps": [{"message_refs": ["b", "a"]}, {"message_refs": ["a"]}, {}]}))
        ['a', 'b']
    """
    return {key for step in record.get("steps") or [] for key in step.get(REFS, ())}


def write(conn: sqlite3.Connection, bodies: dict[str, bytes]) -> None:
    """Count one more use of each message an episode references, storing (compressed) those not stored yet."""
    have = set(_existing(conn, bodies))
    conn.executemany("UPDATE messages SET uses = uses + 1 WHERE sha256 = ?", [(key,) for key in have])
    conn.executemany("INSERT INTO messages (sha256, uses, body) VALUES (?, 1, ?)",
                     [(key, zlib.compress(body, LEVEL)) for key, body in bodies.items() if key not in have])


def release(conn: sqlite3.Connection, used: set[str]) -> None:
    """Count one use less of each key an episode referenced; delete the messages nobody uses any more."""
    conn.executemany("UPDATE messages SET uses = uses - 1 WHERE sha256 = ?", [(key,) for key in used])
    conn.executemany("DELETE FROM messages WHERE sha256 = ? AND uses <= 0", [(key,) for key in used])


def attach(conn: sqlite3.Connection, records: Iterable[dict]) -> list[dict]:
    """Put the full messages back into stored records (in place) and return them."""
    records = list(records)
    steps = [step for data in records for step in data.get("steps") or [] if REFS in step]
    found = _bodies(conn, {key for step in steps for key in step[REFS]})
    for step in steps:
        missing = [key for key in step[REFS] if key not in found]
        if missing:
            raise KeyError(f"message {missing[0]} is referenced but not stored; the store was edited by hand or "
                           f"damaged: run `PRAGMA integrity_check` on it or save the episode again")
        step["messages"] = [orjson.loads(found[key]) for key in step.pop(REFS)]
    return records


def _existing(conn: sqlite3.Connection, keys: Iterable[str]) -> Iterable[str]:
    """Yield the keys already stored (their bodies need no compressing)."""
    keys = list(keys)
    for start in range(0, len(keys), CHUNK):
        chunk = keys[start:start + CHUNK]
        marks = ", ".join("?" * len(chunk))
        yield from (row[0] for row in conn.execute(f"SELECT sha256 FROM messages WHERE sha256 IN ({marks})", chunk))


def _bodies(conn: sqlite3.Connection, keys: set[str]) -> dict[str, bytes]:
    """Return {key: JSON bytes} of the stored keys among `keys`."""
    keys_list, found = list(keys), {}
    for start in range(0, len(keys_list), CHUNK):
        chunk = keys_list[start:start + CHUNK]
        marks = ", ".join("?" * len(chunk))
        for key, body in conn.execute(f"SELECT sha256, body FROM messages WHERE sha256 IN ({marks})", chunk):
            found[key] = zlib.decompress(body)
    return found


def stats(conn: sqlite3.Connection) -> dict:
    """Return {stored, stored_bytes, compressed_bytes}: distinct messages and their sizes (for figures and tests)."""
    count, packed = conn.execute("SELECT COUNT(*), COALESCE(SUM(length(body)), 0) FROM messages").fetchone()
    raw = sum(len(zlib.decompress(body)) for (body,) in conn.execute("SELECT body FROM messages"))
    return {"stored": count, "stored_bytes": raw, "compressed_bytes": packed}
