"""The twin's Chaos Mesh controller: PodChaos and NetworkChaos effects over simulated time, status, early deletion."""

from __future__ import annotations

import math

import pytest

from aoi.twin import build_twin
from aoi.twin.controllers.chaos import PAUSE_IMAGE, ChaosController, image_key, network_faults
from aoi.twin.controllers.chaos_spec import parse_duration, select_pods
from aoi.twin.core import operations

NS = "test-hotel-reservation"


@pytest.fixture
def twin():
    """A HotelReservation twin with the chaos controller."""
    twin = build_twin(["hotel-reservation"], seed=0)
    if "chaos" not in twin.controllers:
        twin.add_controller(ChaosController())
    return twin


def create(twin, kind: str, name: str, spec: dict) -> dict:
    """Create a chaos object as the API server would."""
    plural = {"PodChaos": "podchaos", "NetworkChaos": "networkchaos"}[kind]
    body = {"apiVersion": "chaos-mesh.org/v1alpha1", "kind": kind, "metadata": {"name": name, "namespace": NS},
            "spec": spec}
    with twin.lock:
        return operations.create(twin, twin.resource(plural), NS, body)


def delete(twin, plural: str, name: str) -> None:
    """Delete a chaos object as the API server would."""
    with twin.lock:
        operations.delete(twin, twin.resource(plural), NS, name)


def pod_of(twin, service: str) -> dict:
    """Return the one pod of a HotelReservation service."""
    [pod] = twin.list("pods", NS, lambda p: p["metadata"]["labels"].get("io.kompose.service") == service)
    return pod


def container(pod: dict) -> dict:
    """Return the first container status of a pod."""
    return pod["status"]["containerStatuses"][0]


def conditions(obj: dict) -> dict:
    """Return a chaos object's conditions as type -> status."""
    return {c["type"]: c["status"] for c in obj["status"]["conditions"]}


def selector(service: str) -> dict:
    """Return AIOpsLab's selector for a HotelReservation service."""
    return {"labelSelectors": {"io.kompose.service": service}}


def test_pod_failure_holds_the_pod_unready_for_its_duration(twin):
    before = pod_of(twin, "user")
    restarts = container(before)["restartCount"]
    original = before["spec"]["containers"][0]["image"]
    create(twin, "PodChaos", "pod-failure-experiment",
           {"action": "pod-failure", "mode": "one", "duration": "100s", "selector": selector("user")})
    pod = pod_of(twin, "user")
    assert pod["spec"]["containers"][0]["image"] == PAUSE_IMAGE
    key = image_key("pod-failure-experiment", "pod-failure", "hotel-reserv-user")
    assert pod["metadata"]["annotations"][key] == original
    chaos = twin.get("podchaos", NS, "pod-failure-experiment")
    assert conditions(chaos) == {"AllRecovered": "False", "Paused": "False", "Selected": "True", "AllInjected": "True"}
    assert chaos["status"]["experiment"]["desiredPhase"] == "Run"
    assert chaos["status"]["experiment"]["containerRecords"][0]["id"] == f"{NS}/{pod['metadata']['name']}"
    for step in (10, 40, 40):  # inside the 100 s window
        twin.advance(step)
        assert not container(pod_of(twin, "user"))["ready"]
    assert container(pod_of(twin, "user"))["restartCount"] > restarts
    twin.advance(60)  # recovered at 100 s, then the original image starts again
    pod = pod_of(twin, "user")
    assert pod["metadata"]["name"] == before["metadata"]["name"]
    assert pod["spec"]["containers"][0]["image"] == original and container(pod)["ready"]
    chaos = twin.get("podchaos", NS, "pod-failure-experiment")
    assert conditions(chaos)["AllRecovered"] == "True" and conditions(chaos)["AllInjected"] == "False"
    assert chaos["status"]["experiment"]["desiredPhase"] == "Stop"
    assert chaos["status"]["experiment"]["containerRecords"][0]["recoveredCount"] == 1


def test_deleting_the_object_recovers_early_and_releases_the_finalizer(twin):
    original = pod_of(twin, "user")["spec"]["containers"][0]["image"]
    create(twin, "PodChaos", "pod-kill", {"action": "pod-failure", "mode": "one", "duration": "200s",
                                          "selector": selector("user")})
    assert twin.get("podchaos", NS, "pod-kill")["metadata"]["finalizers"] == ["chaos-mesh/records"]
    twin.advance(20)
    delete(twin, "podchaos", "pod-kill")
    assert twin.get("podchaos", NS, "pod-kill") is None
    assert pod_of(twin, "user")["spec"]["containers"][0]["image"] == original
    twin.advance(40)
    assert container(pod_of(twin, "user"))["ready"]


def test_container_kill_restarts_the_named_container_once(twin):
    before = container(pod_of(twin, "frontend"))["restartCount"]
    create(twin, "PodChaos", "container-kill", {"action": "container-kill", "mode": "one", "duration": "200s",
                                                "selector": selector("frontend"),
                                                "containerNames": ["hotel-reserv-frontend"]})
    twin.advance(10)
    status = container(pod_of(twin, "frontend"))
    assert status["restartCount"] == before + 1 and status["ready"]
    assert status["lastState"]["terminated"]["exitCode"] == 137
    twin.advance(250)
    assert container(pod_of(twin, "frontend"))["restartCount"] == before + 1
    records = twin.get("podchaos", NS, "container-kill")["status"]["experiment"]["containerRecords"]
    assert records[0]["id"].endswith("/hotel-reserv-frontend") and records[0]["phase"] == "Not Injected"


def test_pod_kill_deletes_the_pod_and_its_replicaset_replaces_it(twin):
    old = pod_of(twin, "search")["metadata"]["name"]
    create(twin, "PodChaos", "kill", {"action": "pod-kill", "mode": "one", "selector": selector("search")})
    twin.advance(30)
    assert pod_of(twin, "search")["metadata"]["name"] != old


@pytest.mark.parametrize("action, extra, loss, latency", [
    ("loss", {"loss": {"loss": "99", "correlation": "100"}}, 99.0, 0.0),
    ("delay", {"delay": {"latency": "10s", "correlation": "100", "jitter": "0ms"}}, 0.0, 10.0)])
def test_network_chaos_is_published_for_its_duration(twin, action, extra, loss, latency):
    start = twin.clock.now()
    create(twin, "NetworkChaos", action, {"action": action, "mode": "one", "duration": "200s",
                                          "selector": {"namespaces": [NS], **selector("user")}, **extra})
    [fault] = network_faults(twin).active(twin.clock.now())
    assert (fault.namespace, fault.pod_names, fault.action) == (NS, (pod_of(twin, "user")["metadata"]["name"],), action)
    assert (fault.loss_percent, fault.latency_seconds, fault.until) == (loss, latency, start + 200)
    assert network_faults(twin).affecting(NS, pod_of(twin, "user")["metadata"]["name"], twin.clock.now()) == [fault]
    twin.advance(199)
    assert network_faults(twin).active(twin.clock.now()) == [fault]
    twin.advance(1)
    assert network_faults(twin).active(twin.clock.now()) == []
    assert network_faults(twin).active(start + 100) == [fault]  # history stays for past metric windows
    assert conditions(twin.get("networkchaos", NS, action))["AllRecovered"] == "True"


def test_network_chaos_deleted_early_ends_at_deletion(twin):
    create(twin, "NetworkChaos", "loss", {"action": "loss", "mode": "one", "duration": "200s",
                                          "selector": selector("user"), "loss": {"loss": "99"}})
    twin.advance(30)
    delete(twin, "networkchaos", "loss")
    assert network_faults(twin).active(twin.clock.now()) == []
    assert twin.get("networkchaos", NS, "loss") is None


def test_a_chaos_without_pods_waits_until_one_runs(twin):
    deployment = twin.get("deployments", NS, "user")
    deployment["spec"]["replicas"] = 0
    with twin.lock:
        operations.update(twin, twin.resource("deployments"), NS, "user", deployment)
    twin.advance(10)
    create(twin, "NetworkChaos", "delay", {"action": "delay", "mode": "one", "duration": "200s",
                                           "selector": selector("user"), "delay": {"latency": "10s"}})
    assert conditions(twin.get("networkchaos", NS, "delay"))["Selected"] == "False"
    deployment = twin.get("deployments", NS, "user")
    deployment["spec"]["replicas"] = 1
    with twin.lock:
        operations.update(twin, twin.resource("deployments"), NS, "user", deployment)
    twin.advance(10)
    assert conditions(twin.get("networkchaos", NS, "delay"))["AllInjected"] == "True"
    assert network_faults(twin).active(twin.clock.now())[0].pod_names == (pod_of(twin, "user")["metadata"]["name"],)


def test_an_invalid_duration_is_reported_as_an_event(twin):
    create(twin, "PodChaos", "bad", {"action": "pod-failure", "mode": "one", "duration": "ten seconds",
                                     "selector": selector("user")})
    events = [e for e in twin.list("events", NS) if e["involvedObject"]["name"] == "bad"]
    assert events[0]["reason"] == "Failed" and "invalid duration" in events[0]["message"]
    assert pod_of(twin, "user")["spec"]["containers"][0]["image"] != PAUSE_IMAGE


def test_selection_modes_and_durations(twin):
    chaos = {"metadata": {"namespace": NS}, "spec": {"mode": "all", "selector": {"labelSelectors": {}}}}
    everything = select_pods(twin, chaos)
    assert len(everything) == len(twin.list("pods", NS)) == 19
    chaos["spec"] = {"mode": "fixed-percent", "value": "10", "selector": {}}
    assert [p["metadata"]["name"] for p in select_pods(twin, chaos)] == [p["metadata"]["name"] for p in everything[:1]]
    chaos["spec"] = {"mode": "one", "selector": {"pods": {NS: [everything[3]["metadata"]["name"]]}}}
    assert select_pods(twin, chaos) == [everything[3]]
    assert parse_duration("200s") == 200 and parse_duration("1h1m") == 3660 and parse_duration("") == math.inf
    with pytest.raises(ValueError, match="invalid duration"):
        parse_duration("5 minutes")


def test_chaos_is_deterministic_by_seed():
    def run() -> list:
        twin = build_twin(["hotel-reservation"], seed=3)
        twin.add_controller(ChaosController())
        create(twin, "PodChaos", "pf", {"action": "pod-failure", "mode": "one", "duration": "30s",
                                        "selector": selector("user")})
        twin.advance(45)
        return [twin.get("podchaos", NS, "pf")["status"], pod_of(twin, "user")["status"]]

    assert run() == run()


def test_kubectl_shows_the_failing_pod(hotel):
    if "chaos" not in hotel.twin.controllers:
        hotel.twin.add_controller(ChaosController())
    hotel.ok(["apply", "-f", "-"], stdin=(
        "apiVersion: chaos-mesh.org/v1alpha1\nkind: PodChaos\nmetadata: {name: pod-failure-experiment, "
        f"namespace: {NS}}}\nspec: {{action: pod-failure, mode: one, duration: 100s, "
        "selector: {labelSelectors: {io.kompose.service: user}}}\n").encode())
    hotel.twin.advance(30)
    row = hotel.ok(f"get pods -n {NS} -l io.kompose.service=user --no-headers").split()
    assert row[1] == "0/1" and int(row[3]) >= 1
    assert "AllInjected" in hotel.ok(f"get podchaos pod-failure-experiment -n {NS} -o yaml")
    hotel.ok(f"delete podchaos pod-failure-experiment -n {NS}")
    assert hotel.kubectl(f"get podchaos -n {NS} -o name").stdout.strip() == ""
