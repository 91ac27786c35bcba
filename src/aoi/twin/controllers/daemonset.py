"""DaemonSet controller: one pod per eligible node, pinned by node affinity, rolled one node at a time."""

from __future__ import annotations

from aoi.twin.controllers.base import Controller, owned, owner_keys
from aoi.twin.controllers.deployment import resolve_percent
from aoi.twin.controllers.history import HASH_LABEL, prune_revisions, revision_hash, sync_revision
from aoi.twin.controllers.replicaset import delete_owned_pod, new_pod, set_status
from aoi.twin.controllers.scheduler import node_selector_ok, tolerates
from aoi.twin.controllers.statefulset import ready_for
from aoi.twin.core import operations

COMPONENT = "daemonset-controller"
GENERATION_LABEL = "pod-template-generation"
# The tolerations the controller adds to every daemon pod (util.AddOrUpdateDaemonPodTolerations).
DAEMON_TOLERATIONS = (("node.kubernetes.io/not-ready", "NoExecute"), ("node.kubernetes.io/unreachable", "NoExecute"),
                      ("node.kubernetes.io/disk-pressure", "NoSchedule"),
                      ("node.kubernetes.io/memory-pressure", "NoSchedule"),
                      ("node.kubernetes.io/pid-pressure", "NoSchedule"),
                      ("node.kubernetes.io/unschedulable", "NoSchedule"))
NETWORK_TOLERATION = ("node.kubernetes.io/network-unavailable", "NoSchedule")


def add_daemon_tolerations(spec: dict) -> None:
    """Append the standard daemon tolerations a pod spec lacks."""
    wanted = DAEMON_TOLERATIONS + ((NETWORK_TOLERATION,) if spec.get("hostNetwork") else ())
    tolerations = spec.setdefault("tolerations", [])
    for key, effect in wanted:
        tol = {"key": key, "operator": "Exists", "effect": effect}
        if not any(all(t.get(k) == v for k, v in tol.items()) and not t.get("value") for t in tolerations):
            tolerations.append(tol)


def pin_to_node(spec: dict, node: str) -> None:
    """Replace the required node affinity with a term matching the node's name, as the controller does."""
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
    affinity = spec.setdefault("affinity", {}).setdefault("nodeAffinity", {})
    affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": [term]}


def target_node(pod: dict) -> str | None:
    """Return the node a daemon pod runs on or is pinned to."""
    if pod["spec"].get("nodeName"):
        return pod["spec"]["nodeName"]
    required = (((pod["spec"].get("affinity") or {}).get("nodeAffinity") or {})
                .get("requiredDuringSchedulingIgnoredDuringExecution") or {})
    for term in required.get("nodeSelectorTerms") or []:
        for field in term.get("matchFields") or []:
            if field.get("key") == "metadata.name" and field.get("values"):
                return field["values"][0]
    return None


def placements(ds: dict, nodes: list[dict]) -> dict[str, tuple[bool, bool]]:
    """Return node name -> placement(ds, node) for every node (the daemon's pod spec prepared once)."""
    probe = daemon_probe(ds)
    return {node["metadata"]["name"]: placement(ds, node, probe) for node in nodes}


def daemon_probe(ds: dict) -> dict:
    """Return the daemon's pod (spec only) with the tolerations the controller adds."""
    probe = {"spec": dict(ds["spec"]["template"].get("spec") or {})}
    probe["spec"]["tolerations"] = list(probe["spec"].get("tolerations") or [])
    add_daemon_tolerations(probe["spec"])
    return probe


def placement(ds: dict, node: dict, probe: dict | None = None) -> tuple[bool, bool]:
    """Return (should run, may keep running) for the daemon on a node: selectors, affinity and taints."""
    probe = probe or daemon_probe(ds)
    if not node_selector_ok(probe, node):
        return False, False
    taints = [t for t in node["spec"].get("taints") or [] if not tolerates(probe, t)]
    return (not any(t.get("effect") in ("NoSchedule", "NoExecute") for t in taints),
            not any(t.get("effect") == "NoExecute" for t in taints))


class DaemonSetController(Controller):
    """Keep one pod of each DaemonSet on every node it should run on."""

    name = "daemonset"
    watches = ("daemonsets", "pods", "nodes")

    def keys_for(self, twin, kind, res, obj):
        if res.kind == "Pod":
            return owner_keys(obj, "DaemonSet")
        if res.kind == "Node":
            return [(d["metadata"]["namespace"], d["metadata"]["name"]) for d in twin.list("daemonsets")]
        return super().keys_for(twin, kind, res, obj)

    def reconcile(self, twin, key):
        ds = twin.get("daemonsets", *key)
        if ds is None or ds["metadata"].get("deletionTimestamp"):
            return
        rev, revs = sync_revision(twin, ds)
        nodes = twin.list("nodes")
        places = placements(ds, nodes)
        self._clean(twin, ds, places)
        if (ds["spec"].get("updateStrategy") or {}).get("type", "RollingUpdate") == "RollingUpdate":
            self._roll(twin, ds, places)
        self._fill(twin, ds, nodes, places)
        by_node = self._by_node(twin, ds)
        self._status(twin, ds, places, by_node)
        live = {rev["metadata"]["name"]} | {r["metadata"]["name"] for r in revs if r["metadata"]["labels"].get(
            HASH_LABEL) in {p["metadata"]["labels"].get(HASH_LABEL) for ps in by_node.values() for p in ps}}
        prune_revisions(twin, ds, revs, live)

    def _by_node(self, twin, ds) -> dict[str, list[dict]]:
        """Return the daemon's live (not terminating) pods by target node, oldest first."""
        out: dict[str, list[dict]] = {}
        pods = owned(twin, "pods", ds)
        for pod in sorted(pods, key=lambda p: (p["metadata"].get("creationTimestamp", ""), p["metadata"]["name"])):
            if not pod["metadata"].get("deletionTimestamp"):
                out.setdefault(target_node(pod) or "", []).append(pod)
        return out

    # --- placement ---
    def _clean(self, twin, ds, places) -> None:
        """Delete failed pods, extra pods on a node, and pods on nodes they may no longer run on."""
        keep = {name: place[1] for name, place in places.items()}
        for node, pods in self._by_node(twin, ds).items():
            for i, pod in enumerate(pods):
                if (pod.get("status") or {}).get("phase") == "Failed":
                    twin.record(ds, "Warning", "FailedDaemonPod", f"Found failed daemon pod "
                                f"{pod['metadata']['namespace']}/{pod['metadata']['name']} on node {node}, "
                                "will try to kill it", COMPONENT)
                if i > 0 or not keep.get(node) or (pod.get("status") or {}).get("phase") == "Failed":
                    delete_owned_pod(twin, ds, pod, COMPONENT)

    def _fill(self, twin, ds, nodes, places) -> None:
        """Create a pod on every eligible node that has none."""
        by_node = self._by_node(twin, ds)
        for node in nodes:
            if places[node["metadata"]["name"]][0] and node["metadata"]["name"] not in by_node:
                self._create(twin, ds, node, nodes)

    def _create(self, twin, ds, node, nodes) -> None:
        """Create one daemon pod pinned to a node."""
        base = ds["metadata"]["name"]
        labels = {HASH_LABEL: revision_hash(ds), GENERATION_LABEL: str(ds["metadata"].get("generation", 1))}
        pod = new_pod(twin, ds, f"{base}-{twin.ids.suffix()}", labels)
        pod["metadata"]["generateName"] = f"{base}-"
        add_daemon_tolerations(pod["spec"])
        pin_to_node(pod["spec"], node["metadata"]["name"])
        stored = operations.create(twin, twin.resource("pods"), ds["metadata"]["namespace"], pod)
        twin.record(ds, "Normal", "SuccessfulCreate", f"Created pod: {stored['metadata']['name']}", COMPONENT)

    # --- rolling update ---
    def _roll(self, twin, ds, places) -> None:
        """Replace pods of old revisions: unavailable ones at once, available ones within maxUnavailable."""
        now, min_ready = twin.clock.now(), ds["spec"].get("minReadySeconds", 0)
        current = revision_hash(ds)
        eligible = {name for name, place in places.items() if place[0]}
        by_node = self._by_node(twin, ds)
        unavailable = sum(1 for n in eligible if not any(ready_for(p, now) >= min_ready for p in by_node.get(n, [])))
        ru = (ds["spec"].get("updateStrategy") or {}).get("rollingUpdate") or {}
        budget = max(resolve_percent(ru.get("maxUnavailable", 1), len(eligible), True), 1) - unavailable
        for node in sorted(eligible & set(by_node)):
            pod = by_node[node][0]
            if pod["metadata"]["labels"].get(HASH_LABEL) == current:
                continue
            if ready_for(pod, now) < min_ready:
                delete_owned_pod(twin, ds, pod, COMPONENT)
            elif budget > 0:
                budget -= 1
                delete_owned_pod(twin, ds, pod, COMPONENT)

    # --- status ---
    def _count(self, twin, ds, pod, counts, current: str) -> None:
        """Count a node's daemon pod as scheduled, ready, available and updated."""
        now, min_ready = twin.clock.now(), ds["spec"].get("minReadySeconds", 0)
        counts["current"] += 1
        counts["ready"] += ready_for(pod, now) >= 0
        counts["available"] += ready_for(pod, now) >= min_ready
        counts["updated"] += pod["metadata"]["labels"].get(HASH_LABEL) == current
        if 0 <= ready_for(pod, now) < min_ready:  # look again once it has been ready long enough
            key = (ds["metadata"]["namespace"], ds["metadata"]["name"])
            twin.schedule(min_ready - ready_for(pod, now), self.name, key)

    def _status(self, twin, ds, places, by_node) -> None:
        """Report scheduled, ready, available, updated and misscheduled counts."""
        counts = dict.fromkeys(("desired", "current", "miss", "ready", "available", "updated"), 0)
        current = revision_hash(ds)  # once per status, not once per pod
        for name, place in places.items():
            pods = by_node.get(name, [])
            should_run = place[0]
            counts["desired"] += should_run
            counts["miss"] += bool(pods) and not should_run
            if should_run and pods:
                self._count(twin, ds, pods[0], counts, current)
        set_status(twin, "daemonsets", ds, {
            "currentNumberScheduled": counts["current"], "desiredNumberScheduled": counts["desired"],
            "numberAvailable": counts["available"], "numberMisscheduled": counts["miss"],
            "numberReady": counts["ready"], "numberUnavailable": counts["desired"] - counts["available"],
            "observedGeneration": ds["metadata"].get("generation", 1), "updatedNumberScheduled": counts["updated"]},
            keep=("currentNumberScheduled", "desiredNumberScheduled", "numberMisscheduled", "numberReady"))
