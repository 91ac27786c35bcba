"""The Endpoints controller's patches equal a full rebuild: same objects, same writes, in the same order."""

from __future__ import annotations

import random

import orjson
import pytest

from aoi.twin import Twin
from aoi.twin.controllers.endpoints import EndpointsController, truncate_subsets
from aoi.twin.controllers.endpoints_delta import AddressView, materialize

NS = "default"


class FullRebuild(EndpointsController):
    """The reference: forget every Service's state before each reconcile, so each one rebuilds from all pods."""

    def _reconcile(self, twin, key) -> None:
        self._states.clear()
        super()._reconcile(twin, key)


def endpoints_twin(controller: EndpointsController) -> tuple[Twin, list]:
    """Return a twin running only this controller, and the list its Endpoints/slice writes are logged into."""
    twin = Twin(seed=7)
    twin.lock.acquire()  # held for the twin's life: the test is its only thread
    twin.add_controller(controller)
    writes: list = []
    twin.store.listeners.append(lambda kind, res, obj: writes.append(
        (kind, res.kind, obj["metadata"]["name"], orjson.dumps(obj))) if res.kind in ("Endpoints", "EndpointSlice")
        else None)
    for name, selector, target in (("web", {"app": "web"}, "http"), ("all", {"tier": "edge"}, 80)):
        twin.store.create(twin.resource("services"), {
            "metadata": {"name": name, "namespace": NS, "labels": {"svc": name}},
            "spec": {"selector": selector, "ports": [{"name": "p", "port": 80, "targetPort": target}]}})
    twin.settle()
    return twin, writes


def pod(i: int, rng: random.Random) -> dict:
    """Return a pod whose labels, named port, IP (shared now and then), readiness and phase are drawn by rng."""
    port = rng.choice([80, 80, 8080])
    return {"metadata": {"name": f"p{i:04d}", "namespace": NS, "labels": labels(rng)},
            "spec": {"nodeName": f"n{i % 3}", "containers": [{"name": "c", "ports": [
                {"name": "http", "containerPort": port}]}]},
            "status": status(rng)}


def labels(rng: random.Random) -> dict:
    """Return labels that select the pod into web, all, both or neither."""
    return {"app": rng.choice(["web", "web", "api"]), "tier": rng.choice(["edge", "x"])}


def status(rng: random.Random) -> dict:
    """Return a pod status: maybe no IP yet, maybe finished, Ready or not."""
    ip = rng.choice([None, f"10.0.{rng.randrange(3)}.{rng.randrange(250)}", "10.0.9.9"])
    return {"phase": rng.choice(["Running"] * 6 + ["Succeeded"]), **({"podIP": ip} if ip else {}),
            "conditions": [{"type": "Ready", "status": rng.choice(["True", "True", "False"])}]}


def step(twin: Twin, rng: random.Random, i: int) -> None:
    """Make one random change: create, delete, flip readiness, relabel, re-IP, terminate, or touch a Service."""
    pods = twin.list("pods", NS)
    action = rng.choice(["create"] * 5 + ["delete", "ready", "relabel", "status", "terminate", "service", "slice"])
    if action == "create" or not pods:
        twin.store.create(twin.resource("pods"), pod(i, rng))
        return
    target = rng.choice(pods)
    if action == "delete":
        twin.store.delete(twin.resource("pods"), NS, target["metadata"]["name"])
    elif action == "service":
        svc = twin.get("services", NS, rng.choice(["web", "all"]))
        svc["spec"]["ports"][0]["targetPort"] = rng.choice(["http", 80])
        twin.update("services", svc)
    elif action == "slice":
        slices = twin.list("endpointslices", NS)
        if slices:  # someone else deletes a slice: the next reconcile must notice
            twin.store.delete(twin.resource("endpointslices"), NS, rng.choice(slices)["metadata"]["name"])
    else:
        changed = {**target, "metadata": dict(target["metadata"]), "status": dict(target["status"])}
        if action == "ready":
            changed["status"]["conditions"] = [{"type": "Ready", "status": rng.choice(["True", "False"])}]
        elif action == "relabel":
            changed["metadata"]["labels"] = labels(rng)
        elif action == "status":
            changed["status"] = status(rng)
        else:
            changed["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
        twin.update("pods", changed)


def state(twin: Twin) -> bytes:
    """Return the Endpoints and EndpointSlices as stored, with the store's resourceVersion."""
    return orjson.dumps([twin.store.rv, twin.list("endpoints", NS), twin.list("endpointslices", NS)])


@pytest.mark.parametrize(("seed", "capacity"), [(1, 1000), (2, 1000), (3, 30), (4, 30)])
def test_patches_equal_full_rebuilds_over_random_pod_changes(seed, capacity):
    incremental, inc_writes = endpoints_twin(EndpointsController())
    reference, ref_writes = endpoints_twin(FullRebuild())
    for twin in (incremental, reference):
        twin.controllers["endpoints"].capacity = capacity  # 30: most states are cut, as past 1,000 pods
    rngs = random.Random(seed), random.Random(seed)
    for i in range(700):
        for twin, rng in zip((incremental, reference), rngs):
            step(twin, rng, i)
            if rng.random() < 0.3:  # several changes may land in one reconcile
                twin.settle()
        assert state(incremental) == state(reference), f"differs after change {i}"
    assert inc_writes == ref_writes
    assert len(incremental.list("endpointslices", NS)) >= 3  # the run reached several slices a Service


def test_pod_changes_reach_a_service_created_after_the_pod():
    twin, _ = endpoints_twin(EndpointsController())
    api = {"metadata": {"name": "a1", "namespace": NS, "labels": {"app": "api"}},
           "spec": {"containers": [{"name": "c", "ports": [{"containerPort": 80}]}]},
           "status": {"phase": "Running", "podIP": "10.0.0.5", "conditions": [{"type": "Ready", "status": "True"}]}}
    twin.store.create(twin.resource("pods"), api)
    twin.settle()  # the pod's change went to the Services there were: web and all
    twin.store.create(twin.resource("services"), {"metadata": {"name": "api", "namespace": NS},
                                                  "spec": {"selector": {"app": "api"}, "ports": [{"port": 80}]}})
    twin.settle()
    unready = twin.get("pods", NS, "a1")
    twin.update("pods", {**unready, "status": {**unready["status"], "conditions": [{"type": "Ready",
                                                                                    "status": "False"}]}})
    twin.settle()
    subsets = twin.get("endpoints", NS, "api")["subsets"]
    assert [[a["ip"] for a in s.get("notReadyAddresses", [])] for s in subsets] == [["10.0.0.5"]]


class Row:
    """A backend as an AddressView reads it: just its address."""

    def __init__(self, address: dict):
        self.address = address


def test_address_views_truncate_as_lists_do():
    rng = random.Random(5)
    for _ in range(200):
        runs = [[{"ip": f"{g}.{i}"} for i in range(rng.randrange(0, 9))] for g in range(4)]
        lists = [{"addresses": runs[0], "notReadyAddresses": runs[1], "ports": [1]},
                 {"addresses": runs[2], "notReadyAddresses": runs[3], "ports": [2]}]
        lists = [{k: v for k, v in s.items() if v} for s in lists]
        views = [{k: AddressView([a["ip"] for a in v], {a["ip"]: Row(a) for a in v}, (k,))
                  if k != "ports" else v for k, v in s.items()} for s in lists]
        capacity = rng.randrange(1, 20)
        assert truncate_subsets(views, capacity) == truncate_subsets(lists, capacity)
        assert orjson.dumps(materialize(views)) == orjson.dumps(lists)

