"""The twin's Chaos Mesh: PodChaos and NetworkChaos objects act on their pods for their duration, on the twin's clock.

- pod-failure: the target containers' images become the pause image (the kubelet restarts them) and stay unready;
  recovery puts the images back (another restart) and releases readiness.
- container-kill: each named container is killed once (the kubelet restarts it).
- pod-kill: the pod is deleted (its ReplicaSet makes a new one).
- NetworkChaos loss / delay: no pod change; the fault is published in `twin.extensions.chaos` (NetworkFaults)
  for the behaviour model to drop or slow the traffic of those pods.
Deleting the object recovers early (the `chaos-mesh/records` finalizer holds it until then).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from aoi.twin.controllers import chaos_spec as cs
from aoi.twin.controllers.base import Controller, Key
from aoi.twin.core import operations

PAUSE_IMAGE = "gcr.io/google-containers/pause:latest"
FINALIZER = "chaos-mesh/records"
COMPONENT = "chaos-controller-manager"


@dataclass(frozen=True)
class NetworkFault:
    """One network fault: traffic to and from `pod_names` is dropped or delayed from `since` until `until`."""

    namespace: str
    pod_names: tuple[str, ...]
    action: str  # loss | delay | duplicate | corrupt | partition | bandwidth
    loss_percent: float
    latency_seconds: float
    until: float  # simulated epoch seconds; math.inf without a duration; the recovery time once recovered
    jitter_seconds: float = 0.0
    correlation: float = 0.0
    direction: str = "to"
    source: str = ""  # "<namespace>/<NetworkChaos name>"
    since: float = -math.inf


class NetworkFaults:
    """The NetworkChaos faults the twin applies or applied (history kept, so past metric windows see them too).

    Example:
        >>> faults = NetworkFaults()
        >>> faults.put(NetworkFault("ns", ("user-1",), "loss", 99.0, 0.0, until=200.0, source="ns/loss", since=0.0))
        >>> [f.pod_names for f in faults.active(now=100.0)], faults.active(now=200.0)
        ([('user-1',)], [])
    """

    def __init__(self):
        self._faults: list[NetworkFault] = []

    def put(self, fault: NetworkFault) -> None:
        """Start a fault."""
        self._faults.append(fault)

    def end(self, source: str, now: float) -> None:
        """End the open faults of one NetworkChaos at `now`."""
        self._faults = [replace(f, until=now) if f.source == source and f.until > now else f for f in self._faults]

    def active(self, now: float) -> list[NetworkFault]:
        """Return the faults in force at `now`, ordered by start and source."""
        return sorted((f for f in self._faults if f.since <= now < f.until), key=lambda f: (f.since, f.source))

    def affecting(self, namespace: str, pod: str, now: float) -> list[NetworkFault]:
        """Return the faults in force at `now` on one pod."""
        return [f for f in self.active(now) if f.namespace == namespace and pod in f.pod_names]


def network_faults(twin) -> NetworkFaults:
    """Return the twin's NetworkFaults (created on first use), the read side for the behaviour model."""
    if twin.extensions.chaos is None:
        twin.extensions.chaos = NetworkFaults()
    return twin.extensions.chaos


@dataclass
class Injection:
    """What one chaos object did, so it can be undone."""

    kind: str
    action: str
    until: float
    pods: list[tuple[str, str, str]]  # (namespace, name, uid)
    records: list[dict] = field(default_factory=list)


def image_key(chaos_name: str, action: str, container: str) -> str:
    """Return the pod annotation Chaos Mesh keeps a container's original image under (the container name if long).

    Example:
        >>> image_key("pf", "pod-failure", "hotel-reserv-user")
        'chaos-mesh-pf-pod-failure-hotel-reserv-user-image'
        >>> image_key("pod-failure-experiment", "pod-failure", "hotel-reserv-user")
        'hotel-reserv-user'
    """
    key = f"chaos-mesh-{chaos_name}-{action}-{container}-image"
    return key if len(key) <= 63 else container


class ChaosController(Controller):
    """Honour PodChaos and NetworkChaos objects for their duration."""

    name = "chaos"
    watches = ("podchaos", "networkchaos", "pods")

    def __init__(self):
        self.active: dict[Key, Injection] = {}
        self._waiting: set[Key] = set()  # objects still waiting for a pod to select

    def keys_for(self, twin, kind, res, obj):
        ns = obj["metadata"].get("namespace", "")
        if res.kind == "Pod":
            return [k for k in sorted(self._waiting) if k[0] == ns]
        return [(ns, f"{res.plural}/{obj['metadata']['name']}")]

    def subject(self, twin, key):
        ns, ref = key
        plural, _, name = ref.partition("/")
        return twin.get(plural, ns, name) or twin.get("namespaces", "", ns)

    def reconcile(self, twin, key):
        ns, ref = key
        plural, name = ref.split("/", 1)
        obj = twin.get(plural, ns, name)
        if obj is None or obj["metadata"].get("deletionTimestamp"):
            self._recover(twin, key, obj, plural)
            if obj is not None:
                self._finalize(twin, plural, obj)
            return
        injection = self.active.get(key)
        if injection is not None:
            if twin.clock.now() >= injection.until:
                twin.record(obj, "Normal", "TimeUp", "Time up according to the duration", COMPONENT)
                self._recover(twin, key, obj, plural)
        elif ((obj.get("status") or {}).get("experiment") or {}).get("desiredPhase") != "Stop":
            self._inject(twin, key, plural, obj)

    # --- inject ---
    def _inject(self, twin, key: Key, plural: str, obj: dict) -> None:
        """Select the pods, apply the action, record the status and schedule the recovery."""
        try:
            duration = cs.check_spec(obj.get("spec") or {})
        except ValueError as exc:
            twin.record(obj, "Warning", "Failed", str(exc), COMPONENT)
            return self._write(twin, plural, obj, cs.status([], False, False, False))
        pods = cs.select_pods(twin, obj)
        if not pods:
            self._waiting.add(key)
            return self._write(twin, plural, obj, cs.status([], False, False, True))
        self._waiting.discard(key)
        now = twin.clock.now()
        action = obj["spec"].get("action", "")
        injection = Injection(obj["kind"], action, now + duration,
                              [(p["metadata"]["namespace"], p["metadata"]["name"], p["metadata"]["uid"]) for p in pods])
        injection.records = [cs.applied(rid, now) for rid in self._apply(twin, obj, pods, injection)]
        self.active[key] = injection
        for entry in injection.records:
            twin.record(obj, "Normal", "Applied", f"Successfully apply chaos for {entry['id']}", COMPONENT)
        if FINALIZER not in obj["metadata"].setdefault("finalizers", []):
            obj["metadata"]["finalizers"].append(FINALIZER)
        self._write(twin, plural, obj, cs.status(injection.records, True, True, True))
        if math.isfinite(duration):
            twin.schedule(duration, self.name, key)

    def _apply(self, twin, obj: dict, pods: list[dict], injection: Injection) -> list[str]:
        """Apply the action to the selected pods; return the record ids."""
        if obj["kind"] == "NetworkChaos":
            network_faults(twin).put(_network_fault(obj, pods, twin.clock.now(), injection.until))
            return [_pod_id(p) for p in pods]
        if injection.action == "pod-failure":
            return [self._fail_pod(twin, obj, p) for p in pods]
        if injection.action == "container-kill":
            return [rid for p in pods for rid in self._kill_containers(twin, obj, p)]
        if injection.action == "pod-kill":
            grace = {"gracePeriodSeconds": int(obj["spec"].get("gracePeriod") or 0)}
            for p in pods:
                operations.delete(twin, twin.resource("pods"), p["metadata"]["namespace"], p["metadata"]["name"], grace)
            return [_pod_id(p) for p in pods]
        twin.record(obj, "Warning", "Failed", f"unsupported action {injection.action!r}", COMPONENT)
        return []

    def _fail_pod(self, twin, obj: dict, pod: dict) -> str:
        """Swap every container image for the pause image (the kubelet restarts them) and hold them unready."""
        annotations = pod["metadata"].setdefault("annotations", {})
        for c in pod["spec"]["containers"]:
            annotations.setdefault(image_key(obj["metadata"]["name"], "pod-failure", c["name"]), c["image"])
            c["image"] = PAUSE_IMAGE
        twin.update("pods", pod)
        self._hold_unready(twin, pod, True)
        return _pod_id(pod)

    def _kill_containers(self, twin, obj: dict, pod: dict) -> list[str]:
        """Kill the named containers once; return their record ids."""
        kubelet = twin.controllers.get("kubelet")
        key = (pod["metadata"]["namespace"], pod["metadata"]["name"])
        names = [c["name"] for c in pod["spec"]["containers"] if c["name"] in (obj["spec"].get("containerNames") or [])]
        for name in names:
            if kubelet is not None:
                kubelet.kill(twin, key, name)
        return [f"{_pod_id(pod)}/{name}" for name in names]

    def _hold_unready(self, twin, pod: dict, unready: bool) -> None:
        """Force (or release) the unreadiness of every container of a pod."""
        kubelet = twin.controllers.get("kubelet")
        if kubelet is not None:
            for c in pod["spec"]["containers"]:
                kubelet.set_unready(twin, (pod["metadata"]["namespace"], pod["metadata"]["name"]), c["name"], unready)

    # --- recover ---
    def _recover(self, twin, key: Key, obj: dict | None, plural: str) -> None:
        """Undo what the object did (if anything is in force) and mark its records recovered."""
        self._waiting.discard(key)
        injection = self.active.pop(key, None)
        if injection is None:
            return
        if injection.kind == "NetworkChaos":
            network_faults(twin).end(f"{key[0]}/{key[1].split('/', 1)[1]}", twin.clock.now())
        elif injection.action == "pod-failure":
            for ns, name, uid in injection.pods:
                self._restore_pod(twin, ns, name, uid, key[1].split("/", 1)[1])
        if obj is None:
            return
        now = twin.clock.now()
        injection.records = [cs.recovered(entry, now) for entry in injection.records]
        for entry in injection.records:
            twin.record(obj, "Normal", "Recovered", f"Successfully recover chaos for {entry['id']}", COMPONENT)
        self._write(twin, plural, obj, cs.status(injection.records, True, False, False))

    def _restore_pod(self, twin, ns: str, name: str, uid: str, chaos_name: str) -> None:
        """Put the original images back (the kubelet restarts the containers) and release readiness."""
        pod = twin.get("pods", ns, name)
        if pod is None or pod["metadata"]["uid"] != uid:
            return
        annotations = pod["metadata"].get("annotations") or {}
        for c in pod["spec"]["containers"]:
            original = annotations.pop(image_key(chaos_name, "pod-failure", c["name"]), None)
            if original:
                c["image"] = original
        twin.update("pods", pod)
        self._hold_unready(twin, pod, False)

    def _finalize(self, twin, plural: str, obj: dict) -> None:
        """Drop our finalizer from a deleted object so the API server can remove it."""
        finalizers = obj["metadata"].get("finalizers") or []
        if FINALIZER in finalizers:
            body = {**obj, "metadata": {**obj["metadata"], "finalizers": [f for f in finalizers if f != FINALIZER]}}
            operations.update(twin, twin.resource(plural), obj["metadata"]["namespace"], obj["metadata"]["name"], body)

    def _write(self, twin, plural: str, obj: dict, status: dict) -> None:
        """Save the object with a new status when something changed."""
        if obj.get("status") != status:
            obj["status"] = status
            twin.update(plural, obj)


def _pod_id(pod: dict) -> str:
    """Return a record id: '<namespace>/<pod>'."""
    return f"{pod['metadata']['namespace']}/{pod['metadata']['name']}"


def _network_fault(obj: dict, pods: list[dict], since: float, until: float) -> NetworkFault:
    """Build the NetworkFault a NetworkChaos describes."""
    spec, action = obj["spec"], obj["spec"].get("action", "")
    loss, delay = spec.get("loss") or {}, spec.get("delay") or {}
    correlation = (loss or delay).get("correlation")
    return NetworkFault(obj["metadata"]["namespace"], tuple(p["metadata"]["name"] for p in pods), action,
                        cs.parse_percent(loss.get("loss")) if action == "loss" else 0.0,
                        cs.parse_duration(delay.get("latency") or "0s") if action == "delay" else 0.0, until,
                        cs.parse_duration(delay.get("jitter") or "0s") if action == "delay" else 0.0,
                        cs.parse_percent(correlation), spec.get("direction", "to"),
                        f"{obj['metadata']['namespace']}/{obj['metadata']['name']}", since)
