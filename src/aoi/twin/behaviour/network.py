"""In-cluster networking as a client sees it: DNS, Service ports, endpoints, listening processes, chaos."""

from __future__ import annotations

from dataclasses import dataclass

from aoi.twin.controllers.endpoints import OVER_CAPACITY, resolve_target_port
from aoi.twin.controllers.endpointslices import ready_pod_names
from aoi.twin.core.podstatus import is_ready

CLUSTER_DOMAIN = "svc.cluster.local"


@dataclass
class Reach:
    """The outcome of opening a connection to host:port from inside the cluster."""

    ok: bool
    error: str = ""  # "" | unresolved | refused | timeout
    service: dict | None = None
    pod: dict | None = None
    port: int = 0  # the pod port the connection lands on
    delay: float = 0.0  # extra latency from network chaos
    address: str = ""  # the IP:port a client dials


def find_service(twin, namespace: str, host: str) -> dict | None:
    """Resolve a DNS name or ClusterIP to a Service, as the cluster DNS and kube-proxy would."""
    parts = host.split(".")
    if parts[0].replace("-", "").isalnum() and not host[0].isdigit():
        ns = parts[1] if len(parts) > 1 and parts[1] != "svc" else namespace
        suffix = ".".join(parts[2:])
        if len(parts) > 2 and suffix not in ("svc", CLUSTER_DOMAIN):
            return None
        return twin.get("services", ns, parts[0])
    for svc in twin.list("services"):
        if svc["spec"].get("clusterIP") == host:
            return svc
    return None


def _service_port(svc: dict, port: int) -> dict | None:
    """Return the Service port entry for a port number."""
    return next((p for p in svc["spec"].get("ports") or [] if p.get("port") == port), None)


def _ready_backends(twin, svc: dict) -> list[dict]:
    """Return the ready pods behind a Service, as kube-proxy sees them: its Endpoints' ready addresses."""
    ns = svc["metadata"]["namespace"]
    ep = twin.get("endpoints", ns, svc["metadata"]["name"])
    names = sorted({a["targetRef"]["name"] for subset in (ep or {}).get("subsets") or []
                    for a in subset.get("addresses") or [] if (a.get("targetRef") or {}).get("kind") == "Pod"})
    if OVER_CAPACITY in ((ep or {}).get("metadata", {}).get("annotations") or {}):  # past 1,000: the slices
        names = ready_pod_names(twin, ns, svc["metadata"]["name"])
    pods = (twin.get("pods", ns, name) for name in names)
    return [p for p in pods if p is not None and is_ready(p)]


class StoreMemo:
    """Lookups that read only stored objects of some resources, kept from one request batch to the next while none of
    those objects changes.

    The store's change log tells what changed since the entries were computed: a change to a resource read empties
    the memo, and so does a log that no longer reaches back that far, or a new `epoch` (a count of the changes
    outside the store that the lookups depend on). A copy (a cloned twin's) starts empty: the clone's objects are
    other dicts than the ones the entries hold.
    """

    def __init__(self, reads: frozenset[str]):
        self.reads = reads  # the plurals of the resources the lookups read
        self.rv: int | None = None  # the store's resource version the entries hold for
        self.epoch = 0
        self.entries: dict = {}

    def __deepcopy__(self, memo) -> StoreMemo:
        """Start empty: see the class docstring."""
        return StoreMemo(self.reads)

    def current(self, store, epoch: int = 0) -> dict:
        """Return the entries valid now (emptied when an object they read changed or the epoch moved)."""
        if self.rv != store.rv or self.epoch != epoch:
            if self.epoch != epoch or not self._untouched(store):
                self.entries = {}
            self.rv, self.epoch = store.rv, epoch
        return self.entries

    def _untouched(self, store) -> bool:
        """Tell whether the log shows every change since the entries' version, and none to a resource read."""
        if self.rv is None or self.rv < store.oldest_rv():
            return False
        return not any(change.resource.plural in self.reads for change in store.log.since(self.rv))


ROUTE_READS = frozenset({"services", "endpoints", "endpointslices", "pods"})  # what _route reads
LANDING_READS = frozenset({"pods"})  # what _landing reads in the store


def _route(twin, namespace: str, host: str, port: int) -> tuple[dict | None, dict | None, str, list[dict]]:
    """Return (Service, its port entry, the address dialled, ready backends) for host:port from `namespace`."""
    svc = find_service(twin, namespace, host)
    if svc is None:
        return None, None, "", []
    address = f"{svc['spec'].get('clusterIP')}:{port}"
    entry = _service_port(svc, port)
    return svc, entry, address, (_ready_backends(twin, svc) if entry is not None else [])


def _landing(behaviour, pod: dict, target_port) -> tuple[int | None, bool]:
    """Return (the pod port a Service targetPort resolves to, whether a process of the pod listens there)."""
    target = resolve_target_port(pod, target_port)
    return target, target is not None and target in behaviour.listening_ports(pod)


def connect(twin, behaviour, namespace: str, host: str, port: int, pick: int = 0) -> Reach:
    """Open host:port from a pod in `namespace`; `pick` chooses among ready backends deterministically."""
    svc, entry, address, backends = _held_route(twin, behaviour, namespace, host, port)
    if svc is None:
        return Reach(False, "unresolved")
    if entry is None:
        return Reach(False, "timeout", svc, address=address)
    if not backends:
        return Reach(False, "refused", svc, address=address)
    pod = backends[pick % len(backends)]
    target, open_ = _held_landing(behaviour, pod, entry.get("targetPort", port))
    if not open_:
        return Reach(False, "refused", svc, pod, target or 0, address=address)
    lost, delay = behaviour.chaos_effect(pod, pick)
    if lost:
        return Reach(False, "timeout", svc, pod, target, delay, address)
    return Reach(True, "", svc, pod, target, delay, address)


def _held_route(twin, behaviour, namespace: str, host: str, port: int) -> tuple:
    """Return _route's answer; while holding still, kept until the store changes (a request batch asks the same
    few routes thousands of times, and so do the batches after it)."""
    if behaviour.still is None:
        return _route(twin, namespace, host, port)
    routes, key = behaviour.routes.current(twin.store), (namespace, host, port)
    found = routes.get(key)
    if found is None:
        found = routes[key] = _route(twin, namespace, host, port)
    return found


def _held_landing(behaviour, pod: dict, target_port) -> tuple[int | None, bool]:
    """Return _landing's answer; while holding still, kept until the pod or a process changes.

    What listens in a pod follows its spec, its containers' states (the kubelet publishes each start and exit in
    the pod's status) and its processes (behaviour.process_changes counts their starts and late listens).
    """
    if behaviour.still is None:
        return _landing(behaviour, pod, target_port)
    memo = behaviour.landings.current(behaviour.twin.store, behaviour.process_changes)
    key = (pod["metadata"]["uid"], target_port)
    found = memo.get(key)
    if found is None:
        found = memo[key] = _landing(behaviour, pod, target_port)
    return found
