"""Chunked lists: `limit` and `continue` as kube-apiserver serves them (kubectl get pages 500 objects at a time).

A page ends with `metadata.continue`, an opaque token (base64 of JSON: the list's resourceVersion and the key after
the last object returned), and `metadata.remainingItemCount` when no selector filters the list. Objects come in
key order, so following the tokens yields every object exactly once while nothing changes; a page shows objects
as they are now. A token lives as long as etcd keeps its revision under kube-apiserver's default compaction (every 5
minutes, here of simulated time, so a busy twin never expires a list kubectl is paging through); an older one is
answered 410 Expired with a fresh token that continues at the latest version, as the API server answers.
A list without `limit`, or with fewer objects than it, is answered exactly as before: no `continue` key at all.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass

import orjson

from aoi.twin.core import errors
from aoi.twin.core.errors import ApiError

TOKEN_VERSION = "meta.k8s.io/v1"
LATEST = -1  # a token's resourceVersion meaning "continue at the latest version" (the 410 answer's hint)
COMPACTION_SECONDS = 300.0  # kube-apiserver's default --etcd-compaction-interval: how long a token stays valid
_INCONSISTENT = ("The provided continue parameter is too old to display a consistent list result. You can start a "
                 "new list without the continue parameter, or use the continue token in this response to retrieve "
                 "the remainder of the results. Continuing with the provided token results in an inconsistent list "
                 "- objects that were created, modified, or deleted between the time the first chunk was returned "
                 "and now may show up in the list.")


@dataclass(frozen=True)
class Page:
    """The objects of one page and the list metadata that goes with them."""

    objects: list[dict]
    metadata: dict


def encode_token(rv: int, start: str, issued: float) -> str:
    """Return a continue token for resuming at key `start` of the list taken at resourceVersion rv, at time `issued`.

    Example:
        >>> decode_token(encode_token(42, "default/web-1\\x00", 7.5))
        (42, 'default/web-1\\x00', 7.5)
    """
    body = orjson.dumps({"v": TOKEN_VERSION, "rv": rv, "start": start, "t": issued})
    return base64.urlsafe_b64encode(body).decode().rstrip("=")


def decode_token(token: str) -> tuple[int, str, float]:
    """Return (resourceVersion, start key, issue time) of a continue token; a malformed one is a 400 Bad Request."""
    try:
        body = orjson.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        if body.get("v") != TOKEN_VERSION or not isinstance(body.get("rv"), int) or not body.get("start") \
                or not isinstance(body.get("t"), (int, float)):
            raise ValueError("unknown token version or missing fields")
        return body["rv"], body["start"], float(body["t"])
    except (binascii.Error, ValueError, AttributeError, orjson.JSONDecodeError) as exc:
        raise errors.bad_request(f"continue key is not valid: {exc}; start the list again without `continue`") \
            from exc


def page(twin, route, objects: list[dict], filtered: bool) -> Page:
    """Cut the sorted `objects` of a list to the page `route` asks for (all of them when it sets no limit).

    Args:
        twin: the twin (its store's current resource version and its clock).
        route: the list request: `limit`, `continue` and `resourceVersion` query parameters.
        objects: every object the list selects, in the store's (namespace, name) order.
        filtered: whether a label or field selector chose them (the API server then gives no remaining count).

    Example:
        >>> page(twin, route_with("limit=2"), pods, filtered=False).metadata  # doctest: +SKIP
        {'resourceVersion': '812', 'continue': 'eyJ2Ijoi...', 'remainingItemCount': 3}
    """
    limit = _limit(route)
    rv = twin.store.rv
    if route.arg("continue"):
        rv, start = _resume(twin, route)
        objects = _from(objects, start, route)
        rv = twin.store.rv if rv == LATEST else rv
    elif route.arg("resourceVersion") == "0":
        limit = 0  # served from the watch cache, which ignores limit: the whole list in one answer
    meta = {"resourceVersion": str(rv)}
    if not limit or len(objects) <= limit:
        return Page(objects, meta)
    last = objects[limit - 1]["metadata"]
    meta["continue"] = encode_token(rv, _key_text(last, route) + "\x00", twin.clock.now())
    if not filtered:
        meta["remainingItemCount"] = len(objects) - limit
    return Page(objects[:limit], meta)


def _from(objects: list[dict], start: str, route) -> list[dict]:
    """Return the objects at or after key `start` (a trailing NUL, as tokens carry, means strictly after)."""
    first = _key_tuple(start.rstrip("\x00"), route)
    if start.endswith("\x00"):
        return [o for o in objects if _key(o) > first]
    return [o for o in objects if _key(o) >= first]


def _limit(route) -> int:
    """Return the page size (0: no limit); a limit that is not a number is a 400, a negative one means none."""
    text = route.arg("limit")
    try:
        return max(int(text), 0) if text else 0
    except ValueError:
        raise errors.bad_request(f'limit must be an integer, got "{text}"') from None


def _resume(twin, route) -> tuple[int, str]:
    """Decode the continue token; one past the compaction interval is 410 Expired carrying a fresh token."""
    rv, start, issued = decode_token(route.arg("continue"))
    now = twin.clock.now()
    if rv != LATEST and (rv < 0 or now - issued > COMPACTION_SECONDS):
        raise ExpiredContinue(encode_token(LATEST, start, now))
    return rv, start


class ExpiredContinue(ApiError):
    """410 Expired for a compacted continue token; the Status carries a token to go on inconsistently."""

    def __init__(self, token: str):
        super().__init__(410, "Expired", _INCONSISTENT)
        self.token = token

    def status(self) -> dict:
        """Return the Status with the fresh token in its list metadata, where kubectl and client-go look."""
        return {**super().status(), "metadata": {"continue": self.token}}


def _key(obj: dict) -> tuple[str, str]:
    meta = obj["metadata"]
    return meta.get("namespace", ""), meta["name"]


def _key_text(meta: dict, route) -> str:
    """Return an object's key relative to the listed collection: `name`, or `namespace/name` across namespaces."""
    if route.namespace or not route.resource.namespaced:
        return meta["name"]
    return f'{meta.get("namespace", "")}/{meta["name"]}'


def _key_tuple(text: str, route) -> tuple[str, str]:
    """Return the (namespace, name) a key of `_key_text` names (names and namespaces never hold a slash)."""
    if route.namespace or not route.resource.namespaced:
        return (route.namespace if route.resource.namespaced else "", text)
    namespace, _, name = text.partition("/")
    return namespace, name
