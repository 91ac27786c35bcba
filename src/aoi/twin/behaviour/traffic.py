"""Load sources (wrk2 jobs, the demo's load generator) and start-up retry loops, driven by the twin's clock."""

from __future__ import annotations

import functools
import math
import posixpath
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from aoi.twin.behaviour.network import connect
from aoi.twin.behaviour.report import wrk_report
from aoi.twin.controllers.base import Controller

TICK = 1.0
RETRY_EVERY = 5.0


@dataclass
class Source:
    """A client sending requests at a fixed rate to an entry URL."""

    key: tuple[str, str]  # the client pod
    uid: str
    container: str
    url: str
    rate: float
    start: float
    end: float | None  # None: until the pod stops
    routes: list[dict]  # [{"operation": ..., "weight": ...}]
    sent: int = 0
    failed: int = 0
    timeouts: int = 0
    latencies: list[float] = field(default_factory=list)


def parse_wrk(argv: list[str]) -> dict:
    """Read rate, duration, script and URL from a wrk2 command line."""
    out = {"rate": 10.0, "duration": 10.0, "script": "", "url": "", "threads": 2, "connections": 2}
    names = {"-R": "rate", "--rate": "rate", "-d": "duration", "--duration": "duration", "-s": "script",
             "--script": "script", "-t": "threads", "-c": "connections"}
    for flag, value in zip(argv, argv[1:]):
        if flag in names:
            out[names[flag]] = value
    out["url"] = next((a for a in argv if a.startswith("http")), "")
    out["rate"] = float(out["rate"])
    out["duration"] = float(str(out["duration"]).rstrip("s") or 10)
    return out


@functools.lru_cache(maxsize=256)  # a source sends to one URL thousands of times
def host_port(url: str) -> tuple[str, int]:
    """Return the host and port a URL connects to.

    Example:
        >>> host_port("http://frontend:5000/hotels"), host_port("http://frontend-proxy/")
        (('frontend', 5000), ('frontend-proxy', 80))
    """
    parts = urlsplit(url)
    return parts.hostname or "", parts.port or 80


class TrafficController(Controller):
    """Send the workload through the apps and keep retrying programs retrying (one instance per twin)."""

    name = "traffic"

    def __init__(self):
        self.sources: list[Source] = []
        self.retrying: dict[tuple[str, str], tuple[tuple[str, str], float]] = {}  # (uid, container) -> (pod key, next)
        self._ticking = False

    # --- sources ---
    def start_wrk(self, pod: dict, container: dict) -> float:
        """Register a starting wrk2 container; return how long it runs."""
        twin = self._twin
        spec = parse_wrk((container.get("command") or []) + (container.get("args") or []))
        behaviour = twin.extensions.behaviour
        script = posixpath.basename(spec["script"])
        routes = behaviour.workload_routes(script)
        now = twin.clock.now()
        self.sources.append(Source((pod["metadata"]["namespace"], pod["metadata"]["name"]), pod["metadata"]["uid"],
                                   container["name"], spec["url"], spec["rate"], now, now + spec["duration"], routes))
        self._ensure_tick(twin)
        return spec["duration"]

    def start_continuous(self, pod: dict, container: dict, url: str, rate: float, routes: list[dict]) -> None:
        """Register a client that sends for as long as its pod runs."""
        now = self._twin.clock.now()
        self.sources.append(Source((pod["metadata"]["namespace"], pod["metadata"]["name"]), pod["metadata"]["uid"],
                                   container["name"], url, rate, now, None, routes))
        self._ensure_tick(self._twin)

    def watch_retry(self, pod: dict, container: str) -> None:
        """Re-check a program's start-up problem every few seconds until it is resolved."""
        key = (pod["metadata"]["namespace"], pod["metadata"]["name"])
        self.retrying[(pod["metadata"]["uid"], container)] = (key, self._twin.clock.now())
        self._ensure_tick(self._twin)

    # --- the tick ---
    def attach(self, twin) -> None:
        """Remember the twin (controllers are per twin)."""
        self._twin = twin

    def _ensure_tick(self, twin) -> None:
        if not self._ticking:
            self._ticking = True
            twin.schedule(TICK, self.name, ("", "tick"))

    def reconcile(self, twin, key):
        self._ticking = False
        now = twin.clock.now()
        with twin.extensions.behaviour.holding_still():  # requests change logs, spans and load, not routes
            for source in list(self.sources):
                self._send(twin, source, now)
        self._retry(twin, now)
        if self.sources or self.retrying:
            self._ensure_tick(twin)

    def _send(self, twin, source: Source, now: float) -> None:
        """Send the requests due by now; finish the source when its time is up or its pod is gone."""
        pod = twin.get("pods", *source.key)
        alive = pod is not None and pod["metadata"]["uid"] == source.uid
        stop = min(now, source.end) if source.end is not None else now
        due = math.floor((stop - source.start) * source.rate + 1e-9)
        behaviour = twin.extensions.behaviour
        while alive and source.sent < due:
            t = source.start + source.sent / source.rate
            self._one(twin, behaviour, source, pod, t)
        if alive and source.end is None:
            self._flood(twin, behaviour, source, pod, now)
        if not alive or (source.end is not None and now >= source.end):
            self.sources.remove(source)
            if alive and source.end is not None:
                for line in wrk_report(source, twin.clock.now()):
                    twin.controllers["kubelet"].logs.append(source.uid, source.container, 0, source.end, line)

    def _one(self, twin, behaviour, source: Source, client: dict, t: float) -> None:
        """Send one request from a source at time t."""
        source.sent += 1
        host, port = host_port(source.url)
        reach = connect(twin, behaviour, client["metadata"]["namespace"], host, port, behaviour.rng.randrange(1 << 16))
        if not reach.ok:
            source.failed += 1
            source.timeouts += reach.error == "timeout"
            return
        outcome = behaviour.request(reach.pod, source.routes, t)
        source.latencies.append(outcome.latency + reach.delay)
        source.failed += not outcome.ok

    def _flood(self, twin, behaviour, source: Source, client: dict, now: float) -> None:
        """Send the extra home-page requests a flood flag asks the client for (one tick's worth)."""
        app = behaviour.apps.get(client["metadata"]["namespace"])
        effect = behaviour.flag_effect(app, behaviour.component_of(client) or "") if app else None
        if not effect or not effect.flood_rps:
            return
        home = [{"operation": source.routes[0]["operation"], "weight": 1}]
        flood = Source(source.key, source.uid, source.container, source.url, effect.flood_rps, now - TICK, now, home)
        for k in range(int(effect.flood_rps * TICK)):
            self._one(twin, behaviour, flood, client, now - TICK + k / effect.flood_rps)

    def _retry(self, twin, now: float) -> None:
        """Let retrying programs try again."""
        behaviour = twin.extensions.behaviour
        for (uid, container), (key, last) in list(self.retrying.items()):
            if now - last < RETRY_EVERY:
                continue
            pod = twin.get("pods", *key)
            if pod is None or pod["metadata"]["uid"] != uid or behaviour.retry(pod, container, now):
                del self.retrying[(uid, container)]
            else:
                self.retrying[(uid, container)] = (key, now)
