"""`Kube` against a served twin: each verb by resource name, the three patch types, exec, logs, waits, close.

The patch types differ on lists, so each patch test reads back what the server applied: a strategic merge patch
merges containers by name, a merge patch replaces the whole list, a JSON patch edits one path. Fault injectors
depend on this; it must hold on kubernetes 30.1 (AIOpsLab's pin, which has no `_content_type`) and on the newer
client this project installs.
"""

from __future__ import annotations

import doctest
from datetime import UTC, datetime

import pytest
from kubernetes.client.rest import ApiException

from aoi.kube import Kube, client, kinds, tolerate, waits
from aoi.twin import build_twin
from aoi.twin.testing import Served

SOCIAL, NAME = "test-social-network", "compose-post-service"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """One served social-network twin; each test changes a different object."""
    twin = Served(build_twin(["social-network"], seed=0), tmp_path_factory.mktemp("kube"))
    yield twin
    twin.close()


@pytest.fixture(scope="module")
def kube(served):
    with Kube.from_kubeconfig(served.kubeconfigs["admin"], clock=served.twin.clock.now) as admin:
        yield admin


def _container(kube, name: str) -> dict:
    """Return the first container of a Deployment's pod template."""
    return kube.get("deployments", SOCIAL, name)["spec"]["template"]["spec"]["containers"][0]


def test_strategic_patch_merges_containers_by_name(kube):
    body = {"spec": {"template": {"spec": {"containers": [{"name": NAME, "image": "example/compose:2"}]}}}}
    kube.patch("deployments", SOCIAL, NAME, body)
    box = _container(kube, NAME)
    assert box["image"] == "example/compose:2"
    assert box["command"] == ["ComposePostService"]  # kept: merged into the existing container


def test_merge_patch_replaces_the_container_list(kube):
    name = "home-timeline-service"
    body = {"spec": {"template": {"spec": {"containers": [{"name": name, "image": "example/home:2"}]}}}}
    kube.patch("deployments", SOCIAL, name, body, how="merge")
    box = _container(kube, name)
    assert box["image"] == "example/home:2"
    assert "command" not in box  # replaced: a merge patch swaps lists whole


def test_merge_patch_null_removes_a_config_map_key(kube):
    name = "media-mongodb"
    kube.patch("configmaps", SOCIAL, name, {"data": {"extra": "1"}}, how="merge")
    kube.patch("configmaps", SOCIAL, name, {"data": {"extra": None}}, how="merge")
    assert "extra" not in kube.get("configmaps", SOCIAL, name)["data"]
    assert "mongod.conf" in kube.get("configmaps", SOCIAL, name)["data"]


def test_json_patch_edits_one_path(kube):
    kube.patch("services", SOCIAL, "user-service", [{"op": "replace", "path": "/spec/ports/0/targetPort",
                                                     "value": 9999}], how="json")
    assert kube.get("services", SOCIAL, "user-service")["spec"]["ports"][0]["targetPort"] == 9999


def test_restart_deployment_stamps_the_template_with_the_cluster_clock(kube, served):
    done = kube.restart_deployment(SOCIAL, "user-timeline-service")
    stamp = done["spec"]["template"]["metadata"]["annotations"]["kubectl.kubernetes.io/restartedAt"]
    assert stamp == datetime.fromtimestamp(int(served.twin.clock.now()), tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert stamp.endswith("Z") and _container(kube, "user-timeline-service")["command"] == ["UserTimelineService"]


def test_unknown_patch_type_and_resource_are_refused_with_the_choices(kube):
    with pytest.raises(ValueError, match="choose one of: strategic, merge, json"):
        kube.patch("services", SOCIAL, "user-service", {}, how="apply")
    with pytest.raises(ValueError, match="unknown resource 'svc'; use one of: pods, services"):
        kube.get("svc", SOCIAL, "user-service")
    with pytest.raises(ValueError, match="get of service needs a namespace"):
        kube.get("services", None, "user-service")


def test_create_replace_delete_round_trip(kube, served):
    body = {"metadata": {"name": "kube-test"}, "data": {"a": "1"}}
    assert kube.create("configmaps", SOCIAL, body)["metadata"]["name"] == "kube-test"
    cm = kube.get("configmaps", SOCIAL, "kube-test")
    cm["data"] = {"b": "2"}
    assert kube.replace("configmaps", SOCIAL, "kube-test", cm)["data"] == {"b": "2"}
    assert served.twin.get("configmaps", SOCIAL, "kube-test")["data"] == {"b": "2"}
    kube.delete("configmaps", SOCIAL, "kube-test")
    with pytest.raises(ApiException) as gone:
        kube.get("configmaps", SOCIAL, "kube-test")
    assert gone.value.status == 404
    with tolerate(404):  # deleting it again is what tolerate(404) is for
        kube.delete("configmaps", SOCIAL, "kube-test")


def test_list_filters_by_labels_and_fields_and_reaches_cluster_scoped_kinds(kube, served):
    user = kube.list("pods", SOCIAL, labels={"service": "user-service"})
    assert [p["metadata"]["name"] for p in user] == [
        p["metadata"]["name"] for p in served.twin.list("pods", SOCIAL)
        if p["metadata"]["labels"].get("service") == "user-service"]
    assert [n["metadata"]["name"] for n in kube.list("namespaces", fields=f"metadata.name={SOCIAL}")] == [SOCIAL]
    assert kube.get("namespaces", None, SOCIAL)["metadata"]["name"] == SOCIAL
    assert {p["metadata"]["namespace"] for p in kube.list("pods")} >= {SOCIAL, "kube-system"}


def test_pods_of_a_service_and_a_deployment(kube):
    by_service = kube.pods_of("services", SOCIAL, "text-service")
    assert by_service and by_service == kube.pods_of("deployments", SOCIAL, "text-service")
    assert all(p["metadata"]["labels"]["service"] == "text-service" for p in by_service)


def test_custom_resources_go_through_the_custom_objects_api(kube, served):
    chaos = {"apiVersion": "chaos-mesh.org/v1alpha1", "kind": "PodChaos", "metadata": {"name": "kube-test"},
             "spec": {"action": "pod-kill", "mode": "one", "selector": {"labelSelectors": {"service": "text-service"}}}}
    kube.create("podchaos", SOCIAL, chaos)
    assert kube.get("podchaos", SOCIAL, "kube-test")["spec"]["action"] == "pod-kill"
    assert "kube-test" in served.ok(f"get podchaos -n {SOCIAL} -o name")
    kube.delete("podchaos", SOCIAL, "kube-test")
    assert kube.list("podchaos", SOCIAL) == []


def test_exec_and_logs(kube, served):
    pod = kube.pods_of("deployments", SOCIAL, "user-service")[0]["metadata"]["name"]
    code, out, err = kube.exec(SOCIAL, pod, None, ["echo", "hello"])
    assert (code, out, err) == (0, "hello\n", "")
    assert kube.exec(SOCIAL, pod, None, ["sh", "-c", "exit 3"])[0] == 3
    assert kube.logs(SOCIAL, pod) == served.ok(f"logs {pod} -n {SOCIAL}")
    assert kube.logs(SOCIAL, pod, tail=1) == served.ok(f"logs {pod} -n {SOCIAL} --tail 1")


def test_wait_rollout_returns_once_rolled_out_and_times_out_otherwise(kube, served):
    with served.twin.lock:
        served.twin.sim_deadline = served.twin.clock.now() + 120
    try:
        kube.restart_deployment(SOCIAL, "url-shorten-service")
        kube.wait_rollout(SOCIAL, "url-shorten-service", timeout=60)
        assert waits.rolled_out(kube.get("deployments", SOCIAL, "url-shorten-service"))
        kube.patch("deployments", SOCIAL, "media-service", {"spec": {"template": {"spec": {"nodeSelector": {
            "kubernetes.io/hostname": "no-such-node"}}}}})
        with pytest.raises(TimeoutError, match="did not finish rolling out within 5"):
            kube.wait_rollout(SOCIAL, "media-service", timeout=5)
    finally:
        with served.twin.lock:
            served.twin.sim_deadline = None


def test_close_drops_the_connections_and_a_later_call_opens_new_ones(served):
    kube = Kube.from_kubeconfig(served.kubeconfigs["admin"])
    kube.get("namespaces", None, SOCIAL)
    pools = kube.api_client.rest_client.pool_manager.pools
    assert len(pools) == 1
    kube.close()
    assert len(pools) == 0
    assert kube.get("namespaces", None, SOCIAL)["metadata"]["name"] == SOCIAL
    kube.close()


def test_a_client_keeps_working_when_another_folder_with_the_same_ca_is_removed(served, tmp_path):
    # Two episodes' kubeconfigs carry the same CA (twins cloned from one base); one episode closing (its folder
    # removed) must not take the other client's CA file with it, as the official client's shared cache did.
    import shutil

    text = served.kubeconfigs["admin"].read_text()
    first, second = tmp_path / "first", tmp_path / "second"
    for folder in (first, second):
        folder.mkdir()
        (folder / "admin.json").write_text(text)
    gone = Kube.from_kubeconfig(first / "admin.json")
    kept = Kube.from_kubeconfig(second / "admin.json")
    gone.close()
    shutil.rmtree(first)
    kept.api_client.rest_client.pool_manager.clear()  # a new connection reads the CA file again
    assert kept.get("services", SOCIAL, NAME)["metadata"]["name"] == NAME
    kept.close()


def test_doctests():
    for module in (kinds, client, waits):
        assert doctest.testmod(module).failed == 0
