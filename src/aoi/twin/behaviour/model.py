"""The behaviour model: which process runs where, what it listens on, and how chaos touches it."""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from aoi.apps.catalog import App
from aoi.twin.behaviour import effects
from aoi.twin.behaviour.appruntime import CatalogRuntime
from aoi.twin.behaviour.logformat import format_line
from aoi.twin.behaviour.network import LANDING_READS, ROUTE_READS, StoreMemo
from aoi.twin.kubelet.runtime import Boot

ACTIVE_CHAOS = ("chaos",)  # the key of the active network faults among the lookups kept while holding still


@dataclass
class Process:
    """The main process of one container, as the behaviour model knows it."""

    app: str
    program: str
    component: str | None  # the component whose code this program is
    port: int | None  # where it listens once serving
    listening: bool = True
    retry: str = ""  # why it is still retrying its start-up (not listening yet)
    state: dict = field(default_factory=dict)  # program-specific facts (credentials, flags, ...)


def learn_programs(app: App, runtime: CatalogRuntime) -> dict[str, list[str]]:
    """Map each program to the components whose pods run it, from the app's healthy manifests."""
    from aoi.twin.core.selectors import map_matches

    services = [d for d in app.documents if d.get("kind") == "Service"]
    out: dict[str, list[str]] = {}
    for doc in app.documents:
        if doc.get("kind") not in ("Deployment", "StatefulSet", "DaemonSet"):
            continue
        labels = doc["spec"]["template"]["metadata"].get("labels") or {}
        owner = next((s["metadata"]["name"] for s in services
                      if s["metadata"]["name"] in app.components and map_matches(s["spec"].get("selector"), labels)),
                     None)
        for c in doc["spec"]["template"]["spec"]["containers"]:
            found = runtime.program(c, {"metadata": {"namespace": app.namespace}})
            if found and owner and owner not in out.setdefault(found[1], []):
                out[found[1]].append(owner)
    return out


class Behaviour:
    """Attach to a twin as twin.extensions.behaviour; the catalog runtime asks it to boot containers."""

    def __init__(self, twin, apps: list[App], seed: int):
        self.twin = twin
        self.apps = {app.namespace: app for app in apps if app.namespace}
        self.by_name = {app.name: app for app in apps}
        self.runtime: CatalogRuntime = twin.runtime
        self.implements = {app.name: learn_programs(app, self.runtime) for app in apps}
        self.processes: dict[tuple[str, str], Process] = {}
        self.rng = random.Random(seed * 7919 + 17)
        self.still: dict | None = None  # network lookups memoized while the cluster holds still (holding_still)
        self.routes = StoreMemo(ROUTE_READS)  # Service routes while holding still, kept until what they read changes
        self.landings = StoreMemo(LANDING_READS)  # whether a pod port listens, while holding still (same)
        self.process_changes = 0  # processes started or starting to listen: what else the landings read
        self.flags: dict[str, dict[str, str]] = {}  # namespace -> flag -> variant value, as flagd loaded them
        self._effects: dict[str, tuple[dict, dict]] = {}  # namespace -> (its flags, (component, op) -> effect)

    @contextmanager
    def holding_still(self) -> Iterator[None]:
        """Memoize network lookups for a stretch in which no object, process or clock changes (a request batch)."""
        self.still = {}
        try:
            yield
        finally:
            self.still = None

    # --- what is running ---
    def process(self, pod: dict, container: str) -> Process | None:
        """Return the process of a container, if it was booted by this model."""
        return self.processes.get((pod["metadata"]["uid"], container))

    def component_of(self, pod: dict) -> str | None:
        """Return the component a pod belongs to (by the app's service label)."""
        app = self.apps.get(pod["metadata"]["namespace"])
        if app is None or not app.service_label:
            return None
        return (pod["metadata"].get("labels") or {}).get(app.service_label)

    def listening_ports(self, pod: dict) -> set[int]:
        """Return the ports the pod's running processes accept connections on."""
        ports = set()
        kubelet = self.twin.controllers["kubelet"]
        run = kubelet.runs.get((pod["metadata"]["namespace"], pod["metadata"]["name"]))
        for c in pod["spec"]["containers"]:
            state = run.containers.get(c["name"]) if run else None
            if state is None or state.phase != "running":
                continue
            proc = self.process(pod, c["name"])
            declared = {p.get("containerPort") for p in c.get("ports") or []}
            if proc is None:
                ports |= declared
            elif proc.listening and proc.port:
                ports.add(proc.port)
                if proc.component == self.component_of(pod):  # its own image: every port it declares is served
                    ports |= declared
        return ports

    def chaos_effect(self, pod: dict, pick: int) -> tuple[bool, float]:
        """Return (packet lost, added delay) for a connection to pod under active network chaos."""
        chaos = self.twin.extensions.chaos
        if chaos is None:
            return False, 0.0
        faults = self.still.get(ACTIVE_CHAOS) if self.still is not None else None
        if faults is None:  # once per stretch of holding still: faults come and go with the clock, not in a batch
            faults = chaos.active(self.twin.clock.now())
            if self.still is not None:
                self.still[ACTIVE_CHAOS] = faults
        lost, delay = False, 0.0
        for fault in faults:
            if fault.namespace == pod["metadata"]["namespace"] and pod["metadata"]["name"] in fault.pod_names:
                if fault.action == "loss" and self.rng.random() * 100 < fault.loss_percent:
                    lost = True
                delay += fault.latency_seconds
        return lost, delay

    def chaos_effect_at(self, pod: dict, t: float) -> float:
        """Return the fraction of packets network chaos drops for a pod at time t (no randomness)."""
        chaos = self.twin.extensions.chaos
        if chaos is None:
            return 0.0
        return max((f.loss_percent / 100 for f in chaos.active(t) if f.action == "loss"
                    and f.namespace == pod["metadata"]["namespace"] and pod["metadata"]["name"] in f.pod_names),
                   default=0.0)

    # --- booting ---
    def boot(self, twin, pod: dict, container: dict, restart_count: int) -> Boot:
        """Start a container's program and decide what it does (the runtime's hook)."""
        from aoi.twin.behaviour import boot as programs

        found = self.runtime.program(container, pod)
        if found is None:
            return self.runtime.default_boot(twin, pod, container)
        app, program = found
        candidates = self.implements.get(app.name, {}).get(program, [])
        own = self.component_of(pod)
        component = own if own in candidates else (candidates[0] if candidates else own)
        spec = app.components.get(component or "", {})
        proc = Process(app.name, program, component, spec.get("port"))
        self.processes[(pod["metadata"]["uid"], container["name"])] = proc
        self.process_changes += 1
        handler = programs.handler_for(app, program, pod, container)
        return handler(self, pod, container, app, proc)

    def log(self, pod: dict, container: str, t: float, app: App, program: str, level: str, source: str,
            message: str) -> None:
        """Append one line in the program's format to the container's current log."""
        kubelet = self.twin.controllers["kubelet"]
        run = kubelet.runs.get((pod["metadata"]["namespace"], pod["metadata"]["name"]))
        state = run.containers.get(container) if run else None
        if state is None:
            return
        fmt = (app.logs.get(program) or {}).get("format", "plain")
        kubelet.logs.append(pod["metadata"]["uid"], container, state.restarts, t,
                            format_line(fmt, t, level, source, message))

    # --- requests ---
    def workload_routes(self, script: str) -> list[dict]:
        """Return the weighted routes a workload script sends (e.g. mixed-workload_type_1.lua)."""
        for app in self.by_name.values():
            workload = (app.behaviour.get("workloads") or {}).get(script)
            if workload:
                return workload["routes"]
        return [{"operation": "HTTP GET /", "weight": 1}]

    def request(self, pod: dict, routes: list[dict], t: float):
        """Serve one request arriving at pod, choosing its kind by the routes' weights."""
        app = self.apps[pod["metadata"]["namespace"]]
        total = sum(r.get("weight", 1) for r in routes)
        pick, route = self.rng.random() * total, routes[-1]
        for candidate in routes:
            pick -= candidate.get("weight", 1)
            if pick < 0:
                route = candidate
                break
        sample = (app.behaviour.get("tracing") or {}).get("sample", 1.0)
        return self.engine.request(app, pod, self.component_of(pod) or "", route["operation"], t, sample)

    def flag_effect(self, app: App, component: str, operation: str | None = None) -> effects.FlagEffect:
        """Return what the flags flagd loaded do to a component's operation (shared: callers must not change it)."""
        flags = self.flags.get(app.namespace or "")
        if not flags:
            return effects.NONE
        # flagd's boot puts a new dict in self.flags on every (re)load and nothing edits one: kept with its effects
        # (and so alive, its identity never reused), a dict that is still in place means those effects still hold
        loaded, memo = self._effects.get(app.namespace, (None, {}))
        if loaded is not flags:
            memo = {}
            self._effects[app.namespace] = (flags, memo)
        key = (component, operation)
        if key not in memo:
            memo[key] = effects.flag_effect(flags, app, component, operation)
        return memo[key]

    def mongo_access_problem(self, app: App, component: str, reach) -> str:
        """Return why a component cannot use a MongoDB ("" when it can)."""
        return effects.mongo_access(self, app, component, reach)

    def log_error(self, pod: dict, app: App, kind: str, **fields) -> str:
        """Log an error line in the pod's main program format; return the message (what callers see)."""
        container = next((c["name"] for c in pod["spec"]["containers"] if self.process(pod, c["name"])), None)
        proc = self.process(pod, container) if container else None
        fields.setdefault("host", fields.get("callee"))
        fields.setdefault("caller", proc.component if proc else "")
        level, source, message = effects.render(effects.error_template(app, proc.program if proc else None, kind),
                                                fields)
        if proc is not None:
            self.log(pod, container, self.twin.clock.now(), self.by_name[proc.app], proc.program, level, source,
                     message)
        return message

    def retry(self, pod: dict, container: str, now: float) -> bool:
        """Retry a program's start-up (index creation); return True once it serves."""
        from aoi.twin.behaviour.boot import mongo_index_problem

        proc = self.process(pod, container)
        if proc is None or proc.listening:
            return True
        app = self.by_name[proc.app]
        problem = mongo_index_problem(self, pod["metadata"]["namespace"], proc.retry)
        if not problem:
            proc.listening, proc.retry = True, ""
            self.process_changes += 1
            for _, line in self.runtime.startup_lines(app, proc.program, pod, {"name": container}, now):
                self._append(pod, container, now, line)
            return True
        cpp = "".join(w.capitalize() for w in (proc.component or "").split("-"))
        self.log(pod, container, now, app, proc.program, "error", "utils_mongodb.h:76:CreateIndex",
                 f"Error in createIndexes: {problem}")
        self.log(pod, container, now, app, proc.program, "error", f"{cpp}.cpp:90:main",
                 "Failed to create mongodb index, try again")
        return False

    def _append(self, pod: dict, container: str, t: float, line: str) -> None:
        """Append an already formatted line to a container's current log."""
        kubelet = self.twin.controllers["kubelet"]
        run = kubelet.runs.get((pod["metadata"]["namespace"], pod["metadata"]["name"]))
        state = run.containers.get(container) if run else None
        if state is not None:
            kubelet.logs.append(pod["metadata"]["uid"], container, state.restarts, t, line)


def install(twin, apps: list[App], seed: int) -> Behaviour:
    """Attach the behaviour model (and its traffic engine and MongoDB state) to a twin before apps deploy."""
    from aoi.twin.behaviour.mongo import MongoState
    from aoi.twin.behaviour.requests import RequestEngine
    from aoi.twin.behaviour.telemetry import LoadBook, TraceStore
    from aoi.twin.behaviour.traffic import TrafficController

    twin.extensions.mongo = MongoState()
    behaviour = Behaviour(twin, apps, seed)
    behaviour.traces, behaviour.load = TraceStore(), LoadBook()
    behaviour.engine = RequestEngine(behaviour, behaviour.traces, behaviour.load)
    traffic = TrafficController()
    traffic.attach(twin)
    twin.add_controller(traffic)
    twin.extensions.behaviour = behaviour
    from aoi.twin.behaviour.metrics import BehaviourUsage

    twin.usage = BehaviourUsage(behaviour)
    from aoi.twin.behaviour.programs import register_all

    register_all(twin)  # mongo, redis-cli, curl, nc, nslookup... in every container
    return behaviour
