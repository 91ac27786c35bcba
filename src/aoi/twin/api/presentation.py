"""Adapters between kubectl's wall clock and the twin's simulated clock.

`kubectl describe` and `kubectl events` print ages such as `5m (x3 over 10m)` by subtracting timestamps from the
client's wall clock. The twin's clock is simulated (episodes start on 2025-06-02), so those commands would print
`545d`. For them alone, the responses carry the age-bearing timestamps shifted by (wall clock - twin clock); the
client then computes the simulated ages. Nothing is stored shifted and no other request sees the shift.
In the other direction, `kubectl rollout restart` sends the client's wall-clock time; it is restamped on the
twin's clock.
"""

from __future__ import annotations

import math
import time

import orjson

from aoi.twin.core.clock import parse_time, rfc3339, rfc3339_micro

CLIENT_AGE_COMMANDS = ("kubectl describe", "kubectl events")
EVENT_TIMES = ("firstTimestamp", "lastTimestamp", "eventTime")
# kubectl truncates ages to whole seconds: aim the shifted times this far past a whole second of simulated age,
# so that the moment between our answer and kubectl's rendering cannot tip the age into the next second.
MARGIN = 0.05


def clock_shift(twin, headers: dict, route=None) -> float | None:
    """Return the seconds to add to age-bearing timestamps for this request, or None when none apply.

    `kubectl describe` of Events themselves prints their absolute times, so only the events it fetches about
    another object (selected by involvedObject) are shifted.
    """
    command = headers.get("kubectl-command") or ""
    if command not in CLIENT_AGE_COMMANDS:
        return None
    if command == "kubectl describe" and route is not None and route.resource.kind == "Event" \
            and "involvedObject" not in route.arg("fieldSelector"):
        return None
    # The one wall-clock read of the twin, for presentation only: the client measures ages on its wall clock.
    wall = time.time()
    return wall - math.floor(twin.clock.now()) - MARGIN


def _shifted(stamp, shift: float):
    """Return a timestamp moved by shift, with microseconds so the fraction survives (Go parses it)."""
    t = parse_time(stamp) if isinstance(stamp, str) else None
    return stamp if t is None else rfc3339_micro(t + shift)


def present(obj: dict, kind: str, shift: float | None, listed: bool) -> dict:
    """Return obj as this client should see it: a shifted copy where ages are computed client-side.

    Events get their first/last/event times shifted; pods their deletion time (`Terminating (lasts 20s)`) and,
    in lists (the pods table of `describe node`), their creation time.
    """
    if shift is None:
        return obj
    if kind == "Event":
        return {**obj, **{k: _shifted(obj[k], shift) for k in EVENT_TIMES if obj.get(k)}}
    if kind != "Pod":
        return obj
    meta = dict(obj.get("metadata") or {})
    keys = ("deletionTimestamp", "creationTimestamp") if listed else ("deletionTimestamp",)
    meta.update({k: _shifted(meta[k], shift) for k in keys if meta.get(k)})
    return {**obj, "metadata": meta}


def present_all(objects: list[dict], kind: str, shift: float | None) -> list[dict]:
    """Return a list's items as present() shows them."""
    return objects if shift is None else [present(o, kind, shift, True) for o in objects]


RESTARTED_AT = "kubectl.kubernetes.io/restartedAt"


def restamp_restart(twin, headers: dict, body: bytes) -> bytes:
    """Stamp `kubectl rollout restart` with the twin's time instead of the client's wall clock.

    kubectl writes its own time.Now() into the pod template; left alone, that value would reach the template hash,
    hence the pod names, and the same seed and actions would no longer give the same cluster.
    """
    if (headers.get("kubectl-command") or "") != "kubectl rollout restart":
        return body
    try:
        patch = orjson.loads(body)
        annotations = patch["spec"]["template"]["metadata"]["annotations"]
    except (orjson.JSONDecodeError, KeyError, TypeError):
        return body
    if RESTARTED_AT not in annotations:
        return body
    annotations[RESTARTED_AT] = rfc3339(twin.clock.now())
    return orjson.dumps(patch)
