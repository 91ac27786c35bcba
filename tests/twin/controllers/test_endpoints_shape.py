"""Endpoints and EndpointSlices as Kubernetes shapes them: 100 endpoints a slice, 1,000 addresses an Endpoints."""

from __future__ import annotations

import os

import pytest

from aoi.twin import Twin, build_twin
from aoi.twin.behaviour.network import _ready_backends  # the routing seam the slices feed past 1,000
from aoi.twin.controllers.endpoints import OVER_CAPACITY, EndpointsController, truncate_subsets
from aoi.twin.controllers.endpointslices import MANAGED_BY, SERVICE_NAME, ready_pod_names, service_slices
from aoi.twin.core import operations

NS = "default"


def web_twin(replicas: int):
    """Return a bare twin running Deployment `web` with `replicas` pods behind Service `web` (named targetPort)."""
    twin = build_twin([], seed=0)
    template = {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "nginx:1.25",
                                         "ports": [{"containerPort": 80, "name": "http"}]}]}}
    with twin.lock:
        operations.create(twin, twin.resource("services"), NS, {
            "apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "labels": {"tier": "edge"}},
            "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": "http"}]}})
        operations.create(twin, twin.resource("deployments"), NS, {
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}}, "template": template}})
        settle(twin)
    return twin


def settle(twin) -> None:
    """Let the controllers and kubelets finish (pods started and ready)."""
    with twin.lock:
        twin.settle()
        twin.advance(60)


def scale(twin, replicas: int) -> None:
    """Scale Deployment `web` and let it settle."""
    with twin.lock:
        deployment = twin.get("deployments", NS, "web")
        operations.set_replicas(twin, twin.resource("deployments"), deployment, replicas)
    settle(twin)


def sizes(twin) -> list[int]:
    """Return the endpoint counts of Service web's slices, largest first."""
    return sorted((len(s.get("endpoints") or []) for s in service_slices(twin, NS, "web")), reverse=True)


@pytest.fixture(scope="module")
def web250():
    return web_twin(250)


def test_250_endpoints_make_three_slices_of_100_100_50(web250):
    slices = service_slices(web250, NS, "web")
    assert sizes(web250) == [100, 100, 50]
    for s in slices:
        meta = s["metadata"]
        assert meta["name"].startswith("web-") and meta["generateName"] == "web-"
        assert meta["labels"] == {"tier": "edge", SERVICE_NAME: "web", MANAGED_BY: "endpointslice-controller.k8s.io"}
        assert meta["ownerReferences"][0]["kind"] == "Service" and s["ports"] == [
            {"name": "", "port": 80, "protocol": "TCP"}]
    pods = {p["status"]["podIP"] for p in web250.list("pods", NS)}
    listed = [e["addresses"][0] for s in slices for e in s["endpoints"]]
    assert sorted(listed) == sorted(pods) and len(listed) == 250  # every pod once, in exactly one slice
    endpoints = web250.get("endpoints", NS, "web")
    assert len(endpoints["subsets"][0]["addresses"]) == 250 and "annotations" not in endpoints["metadata"]


def test_growing_by_one_touches_only_the_slice_with_room():
    twin = web_twin(250)
    before = {s["metadata"]["name"]: s["metadata"]["resourceVersion"] for s in service_slices(twin, NS, "web")}
    scale(twin, 251)
    after = {s["metadata"]["name"]: s["metadata"]["resourceVersion"] for s in service_slices(twin, NS, "web")}
    assert set(after) == set(before) and sizes(twin) == [100, 100, 51]
    assert sum(before[name] != after[name] for name in before) == 1  # the two full slices were not rewritten


def test_scaling_down_shrinks_and_drops_slices_then_keeps_one_placeholder():
    twin = web_twin(250)
    scale(twin, 30)
    assert sum(sizes(twin)) == 30 and all(0 < n <= 100 for n in sizes(twin))
    scale(twin, 0)
    (placeholder,) = service_slices(twin, NS, "web")
    assert placeholder["endpoints"] is None and placeholder["ports"] is None
    assert "subsets" not in twin.get("endpoints", NS, "web")
    scale(twin, 120)
    assert sizes(twin) == [100, 20]


def test_truncation_keeps_ready_addresses_first_in_proportion():
    subsets = [{"addresses": [{"ip": f"a{i}"} for i in range(600)], "notReadyAddresses": [{"ip": "n"}] * 10},
               {"addresses": [{"ip": f"b{i}"} for i in range(600)]}]
    assert truncate_subsets(subsets) is True
    assert [len(s["addresses"]) for s in subsets] == [500, 500] and "notReadyAddresses" not in subsets[0]
    mixed = [{"addresses": [{"ip": "r"}] * 990, "notReadyAddresses": [{"ip": "n"}] * 30}]
    assert truncate_subsets(mixed) is True
    assert (len(mixed[0]["addresses"]), len(mixed[0]["notReadyAddresses"])) == (990, 10)
    small = [{"addresses": [{"ip": "r"}] * 1000}]
    assert truncate_subsets(small) is False and len(small[0]["addresses"]) == 1000


def endpoints_only_twin(pods: int, ready: int) -> Twin:
    """Return a twin running only the endpoints controller over `pods` pods stored as running (the first `ready`
    of them Ready): one reconcile covers them all, so a thousand pods cost a moment."""
    twin = Twin(seed=0)
    twin.add_controller(EndpointsController())
    with twin.lock:
        twin.store.create(twin.resource("services"), {"metadata": {"name": "web", "namespace": NS},
                                                      "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}})
        for i in range(pods):
            status = "True" if i < ready else "False"
            twin.store.create(twin.resource("pods"), {
                "metadata": {"name": f"web-{i:04d}", "namespace": NS, "labels": {"app": "web"}},
                "spec": {"nodeName": "kind-worker", "containers": [{"name": "web", "image": "nginx:1.25"}]},
                "status": {"phase": "Running", "podIP": f"10.1.{i // 250}.{i % 250}",
                           "conditions": [{"type": "Ready", "status": status}]}})
        twin.settle()
    return twin


def test_endpoints_past_1000_keep_ready_addresses_and_are_annotated_while_slices_hold_all():
    twin = endpoints_only_twin(1200, ready=1100)
    endpoints = twin.get("endpoints", NS, "web")
    assert endpoints["metadata"]["annotations"] == {OVER_CAPACITY: "truncated"}
    (subset,) = endpoints["subsets"]
    assert len(subset["addresses"]) == 1000 and "notReadyAddresses" not in subset
    assert sizes(twin) == [100] * 12 and sum(e["conditions"]["ready"] for s in service_slices(twin, NS, "web")
                                             for e in s["endpoints"]) == 1100
    with twin.lock:
        for i in range(1000, 1200):
            twin.store.delete(twin.resource("pods"), NS, f"web-{i:04d}")
        twin.settle()
    endpoints = twin.get("endpoints", NS, "web")
    assert "annotations" not in endpoints["metadata"] and len(endpoints["subsets"][0]["addresses"]) == 1000
    assert sizes(twin) == [100] * 10


def test_traffic_reaches_ready_pods_past_the_truncation():
    twin = endpoints_only_twin(1100, ready=1100)
    names = ready_pod_names(twin, NS, "web")
    assert len(names) == 1100 and "web-1099" in names  # not among the 1,000 addresses the Endpoints kept
    routed = _ready_backends(twin, twin.get("services", NS, "web"))  # the behaviour model's kube-proxy view
    assert [p["metadata"]["name"] for p in routed] == names


@pytest.mark.skipif(not os.environ.get("AOI_SLOW_TESTS"),
                    reason="1,001 pods take minutes until pod bring-up is linear; set AOI_SLOW_TESTS=1 to run it")
def test_endpoints_past_1000_are_truncated_and_annotated_while_slices_hold_all():
    twin = web_twin(1001)
    endpoints = twin.get("endpoints", NS, "web")
    assert endpoints["metadata"]["annotations"] == {OVER_CAPACITY: "truncated"}
    assert sum(len(s.get("addresses") or []) for s in endpoints["subsets"]) == 1000
    assert sizes(twin) == [100] * 10 + [1]
    scale(twin, 1000)
    endpoints = twin.get("endpoints", NS, "web")
    assert "annotations" not in endpoints["metadata"] and len(endpoints["subsets"][0]["addresses"]) == 1000
