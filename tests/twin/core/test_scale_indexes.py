"""The store's indexes (sorted names, owners, nodes, owner tallies), the ReplicaSet controller that reads them,
timer batches and wall-clock catch-up that lets API calls in, and the field-wise clone."""

from __future__ import annotations

import threading

import orjson

from aoi.twin import build_twin
from aoi.twin.bootstrap import bootstrap, node_object
from aoi.twin.controllers.base import Controller, owned_by
from aoi.twin.controllers.replicaset import (
    BURST_REPLICAS,
    ReplicaSetController,
    create_owned_pod,
    delete_owned_pod,
    set_status,
)
from aoi.twin.core import operations
from aoi.twin.core.podstatus import is_ready, pod_rank
from aoi.twin.core.tables import bound_node, controller_uids, summary
from aoi.twin.factory import default_controllers
from aoi.twin.kubelet.runtime import PlainRuntime
from aoi.twin.twin import Twin

NS = "scale"


def rebuilt(table) -> dict:
    """Recompute every index of a table from its objects alone."""
    names: dict = {}
    owned: dict = {}
    nodes: dict = {}
    tally: dict = {}
    for key, obj in table.objects.items():
        names.setdefault(key[0], []).append(key[1])
        for uid in controller_uids(obj):
            owned.setdefault(uid, set()).add(key)
            counts = tally.setdefault((uid, key[0]), {})
            counts[summary(obj)] = counts.get(summary(obj), 0) + 1
        if bound_node(obj):
            nodes.setdefault(bound_node(obj), set()).add(key)
    return {"names": {ns: sorted(v) for ns, v in names.items()}, "owned": owned, "nodes": nodes, "tally": tally}


def indexed(table) -> dict:
    """Return a table's maintained indexes in the shape of rebuilt()."""
    return {"names": table.names, "owned": {uid: set(keys) for uid, keys in table.owned.items()},
            "nodes": {node: set(keys) for node, keys in table.on_node.items()}, "tally": table.tally}


def assert_consistent(twin) -> None:
    for res, table in twin.store._objects.items():
        assert indexed(table) == rebuilt(table), f"indexes of {res.plural} drifted from their objects"


def scale_twin(seed: int = 0, controllers=None):
    twin = build_twin([], seed=seed, warmup=10.0) if controllers is None else _bare(seed, controllers)
    with twin.lock:
        operations.create(twin, twin.resource("namespaces"), "", {"apiVersion": "v1", "kind": "Namespace",
                                                                  "metadata": {"name": NS}})
    return twin


def _bare(seed, controllers):
    twin = Twin(seed, runtime=PlainRuntime())
    for controller in controllers:
        twin.add_controller(controller)
    with twin.lock:
        bootstrap(twin)
        twin.advance(10.0)
    return twin


def replicaset(twin, replicas: int, name: str = "web") -> dict:
    body = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}}}
    with twin.lock:
        return operations.create(twin, twin.resource("replicasets"), NS, body)


def scale(twin, name: str, replicas: int) -> None:
    with twin.lock:
        rs = twin.get("replicasets", NS, name)
        rs["spec"]["replicas"] = replicas
        twin.update("replicasets", rs)
        twin.settle()


def dump(twin) -> bytes:
    """Every object of every resource, in list order, with the store's version: what must not change."""
    return orjson.dumps([twin.store.rv] + [twin.store.list(res) for res in sorted(twin.store.resources(),
                                                                                     key=lambda r: r.key)])


class ScanningReplicaSets(ReplicaSetController):
    """The ReplicaSet controller as it was before the indexes: every reconcile scans the namespace's pods."""

    def reconcile(self, twin, key):
        rs = twin.get("replicasets", *key)
        if rs is None or rs["metadata"].get("deletionTimestamp"):
            return
        pods = self._active(twin, rs)
        diff = rs["spec"].get("replicas", 1) - len(pods)
        for _ in range(max(diff, 0)):
            create_owned_pod(twin, rs, f"{rs['metadata']['name']}-{twin.ids.suffix()}", "replicaset-controller")
        if diff < 0:
            for pod in sorted(pods, key=pod_rank)[:-diff]:
                delete_owned_pod(twin, rs, pod, "replicaset-controller")
            pods = self._active(twin, rs)
        labels = rs["spec"]["template"]["metadata"]["labels"]
        ready = sum(1 for p in pods if is_ready(p))
        full = sum(1 for p in pods if all(p["metadata"].get("labels", {}).get(k) == v for k, v in labels.items()))
        set_status(twin, "replicasets", rs, {
            "replicas": len(pods), "fullyLabeledReplicas": full, "readyReplicas": ready,
            "availableReplicas": ready, "observedGeneration": rs["metadata"].get("generation", 1)}, keep=("replicas",))

    @staticmethod
    def _active(twin, rs):
        return [p for p in twin.list("pods", rs["metadata"]["namespace"]) if owned_by(p, rs)
                and not p["metadata"].get("deletionTimestamp") and p.get("status", {}).get("phase") not in
                ("Succeeded", "Failed")]


def controllers_with(rs_controller) -> list:
    return [rs_controller if c.name == "replicaset" else c for c in default_controllers()]


def play(twin) -> bytes:
    """Bring 300 pods up, relabel one out of the set, scale down to 120, delete a few pods; return the dump."""
    replicaset(twin, 300)
    twin.advance(30.0)
    with twin.lock:
        pod = twin.list("pods", NS)[7]
        pod["metadata"]["labels"]["extra"] = "yes"
        twin.update("pods", pod)
        twin.settle()
    scale(twin, "web", 120)
    twin.advance(30.0)
    with twin.lock:
        for pod in twin.list("pods", NS)[:5]:
            operations.delete(twin, twin.resource("pods"), NS, pod["metadata"]["name"])
    twin.advance(60.0)
    return dump(twin)


def test_a_replicaset_of_300_pods_behaves_exactly_as_the_scanning_controller_did():
    indexed_twin = scale_twin(controllers=controllers_with(ReplicaSetController()))
    scanning_twin = scale_twin(controllers=controllers_with(ScanningReplicaSets()))
    assert play(indexed_twin) == play(scanning_twin)
    rs = indexed_twin.get("replicasets", NS, "web")
    assert rs["status"]["replicas"] == rs["status"]["readyReplicas"] == 120
    assert_consistent(indexed_twin)


def test_indexes_follow_creates_updates_deletes_and_clones():
    twin = scale_twin()
    replicaset(twin, 40)
    twin.advance(20.0)
    assert_consistent(twin)
    with twin.lock:
        pods = twin.list("pods", NS)
        orphan = pods[3]
        orphan["metadata"]["ownerReferences"] = []  # released by its owner: leaves the owner index and tally
        twin.update("pods", orphan)
        twin.enqueue("replicaset", (NS, "web"))  # a resync notices the missing replica
        twin.settle()
    assert_consistent(twin)
    clone = twin.clone()
    scale(clone, "web", 5)
    clone.advance(60.0)
    assert_consistent(clone)
    assert_consistent(twin)
    assert len(twin.list("pods", NS)) == 41 and len(clone.list("pods", NS)) == 6  # the clone is independent


def test_lists_keep_namespace_then_name_order_and_owner_reads_match_scans():
    twin = scale_twin()
    replicaset(twin, 25)
    twin.advance(20.0)
    for res in twin.store.resources():
        keys = [(o["metadata"].get("namespace", ""), o["metadata"]["name"]) for o in twin.store.list(res)]
        assert keys == sorted(keys)
    rs = twin.get("replicasets", NS, "web")
    assert twin.store.owned(twin.resource("pods"), rs) == [p for p in twin.list("pods", NS) if owned_by(p, rs)]
    for node in twin.list("nodes"):
        name = node["metadata"]["name"]
        assert twin.store.on_node(twin.resource("pods"), name) == \
            twin.list("pods", None, lambda p, name=name: p["spec"].get("nodeName") == name)


def test_a_large_replicaset_creates_in_bursts_and_reaches_its_replicas():
    twin = scale_twin()
    replicaset(twin, BURST_REPLICAS * 2 + 10)
    creates = [e for e in twin.list("events", NS) if e["reason"] == "SuccessfulCreate"]
    assert len(creates) == BURST_REPLICAS * 2 + 10
    assert twin.get("replicasets", NS, "web")["status"]["replicas"] == BURST_REPLICAS * 2 + 10


class Ticks(Controller):
    """Count reconciles; each takes a millisecond of wall time (holding the lock, as real work does)."""

    name = "ticks"

    def __init__(self):
        self.runs = 0

    def reconcile(self, twin, key):
        self.runs += 1
        threading.Event().wait(0.001)


def ticking_twin(count: int):
    twin = Twin(0, runtime=PlainRuntime())
    twin.add_controller(Ticks())
    for i in range(count):
        twin.schedule(1.0 + (i // 10), "ticks", ("", str(i)))  # ten timers per simulated second
    return twin


def test_manual_time_holds_the_lock_through_a_catch_up():
    twin = ticking_twin(300)
    seen = []
    helper = threading.Thread(target=lambda: (twin.lock.acquire(), seen.append(twin.controllers["ticks"].runs),
                                              twin.lock.release()))
    with twin.lock:
        helper.start()
        twin.advance(100.0)
    helper.join()
    assert seen == [300]


def test_wall_clock_catch_up_lets_other_threads_take_the_lock_between_timers():
    twin = ticking_twin(300)
    twin.clock_mode = "wall"
    seen = []
    started = threading.Event()

    def helper():
        started.wait()
        with twin.lock:
            seen.append(twin.controllers["ticks"].runs)

    thread = threading.Thread(target=helper)
    thread.start()
    with twin.lock:
        twin.advance(1.0)  # the first ten timers, then let the helper start waiting
    started.set()
    twin.advance(100.0)
    thread.join()
    assert twin.controllers["ticks"].runs == 300
    assert seen and seen[0] < 300


def test_the_same_timers_give_the_same_cluster_in_manual_and_wall_clock_time():
    manual, wall = scale_twin(seed=4), scale_twin(seed=4)
    wall.clock_mode = "wall"
    for twin in (manual, wall):
        replicaset(twin, 30)
        twin.advance(45.0)
    assert dump(manual) == dump(wall)


def other_pod(twin, name: str) -> None:
    with twin.lock:
        operations.create(twin, twin.resource("pods"), NS, {
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": "other"}},
            "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}})


def test_a_replicaset_skips_a_pod_name_that_is_taken():
    twin = scale_twin()
    rehearsal = twin.clone()  # the same ids: find the name the ReplicaSet's first pod will draw
    other_pod(rehearsal, "placeholder")
    replicaset(rehearsal, 1)
    drawn = [p["metadata"]["name"] for p in rehearsal.list("pods", NS) if p["metadata"].get("ownerReferences")]
    other_pod(twin, drawn[0])  # taken before the ReplicaSet draws it
    replicaset(twin, 1)
    owned = [p for p in twin.list("pods", NS) if p["metadata"].get("ownerReferences")]
    assert len(owned) == 1 and owned[0]["metadata"]["name"] not in drawn


def test_the_scheduler_sees_node_changes_after_remembering_where_pods_fit():
    twin = scale_twin()
    replicaset(twin, 10)
    with twin.lock:
        node = node_object(twin, "extra", "172.18.0.9", "10.244.9.0/24", False)
        operations.create(twin, twin.resource("nodes"), "", {**node, "apiVersion": "v1", "kind": "Node"})
    scale(twin, "web", 20)
    placed = [p["spec"].get("nodeName") for p in twin.list("pods", NS)]
    assert placed.count("extra") == 10  # the new node was empty: every new pod went there
    with twin.lock:
        for name in ("kind-worker", "extra"):
            node = twin.get("nodes", "", name)
            node["spec"]["unschedulable"] = True
            twin.update("nodes", node)
    scale(twin, "web", 21)
    pending = [p for p in twin.list("pods", NS) if not p["spec"].get("nodeName")]
    assert len(pending) == 1
    assert any(e["reason"] == "FailedScheduling" and "unschedulable" in e["message"] for e in twin.list("events", NS))
