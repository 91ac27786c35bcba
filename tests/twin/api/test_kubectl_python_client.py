"""The official `kubernetes` Python client against the twin, configured from a kubeconfig file."""

import pytest
from kubernetes import client, config
from kubernetes.client.rest import ApiException
from kubernetes.stream import stream

NS = "test-hotel-reservation"


def api_client(served, role: str = "admin") -> client.ApiClient:
    """Return an ApiClient built from the role's kubeconfig, as any user of the client would."""
    return config.new_client_from_config(config_file=str(served.kubeconfigs[role]))


@pytest.fixture
def core(hotel):
    return client.CoreV1Api(api_client(hotel))


@pytest.fixture
def apps(hotel):
    return client.AppsV1Api(api_client(hotel))


def frontend(core) -> client.V1Pod:
    """Return the frontend pod."""
    return core.list_namespaced_pod(NS, label_selector="io.kompose.service=frontend").items[0]


def test_version(hotel):
    info = client.VersionApi(api_client(hotel)).get_code()
    assert (info.major, info.minor, info.git_version) == ("1", "32", "v1.32.0")


def test_list_and_read(core, apps):
    pods = core.list_namespaced_pod(NS).items
    assert len(pods) == 19 and all(p.metadata.uid for p in pods)
    pod = frontend(core)
    again = core.read_namespaced_pod(pod.metadata.name, NS)
    assert again.status.pod_ip == pod.status.pod_ip and again.spec.node_name == "kind-worker"
    deployment = apps.read_namespaced_deployment("frontend", NS)
    assert deployment.status.ready_replicas == 1 and deployment.spec.selector.match_labels == {
        "io.kompose.service": "frontend"}
    assert len(core.list_node().items) == 2


def test_missing_object_raises_404(core):
    with pytest.raises(ApiException) as caught:
        core.read_namespaced_pod("nosuch", NS)
    assert caught.value.status == 404 and '"reason":"NotFound"' in caught.value.body


def test_patch_and_scale(apps, hotel):
    patched = apps.patch_namespaced_deployment("frontend", NS, {"metadata": {"labels": {"tier": "edge"}}})
    assert patched.metadata.labels["tier"] == "edge"
    scale = apps.patch_namespaced_deployment_scale("frontend", NS, {"spec": {"replicas": 2}})
    assert scale.spec.replicas == 2 and scale.status.selector == "io.kompose.service=frontend"
    hotel.twin.advance(10)
    assert apps.read_namespaced_deployment("frontend", NS).status.ready_replicas == 2
    json_patched = apps.patch_namespaced_deployment("frontend", NS, [
        {"op": "replace", "path": "/spec/replicas", "value": 1}])
    assert json_patched.spec.replicas == 1


def test_delete_pod_is_replaced(core, hotel):
    pod = frontend(core)
    core.delete_namespaced_pod(pod.metadata.name, NS)
    hotel.twin.advance(10)
    names = [p.metadata.name for p in core.list_namespaced_pod(NS, label_selector="io.kompose.service=frontend").items]
    assert len(names) == 1 and names[0] != pod.metadata.name


def test_create_and_delete_config_map(core):
    body = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="py-cm"), data={"k": "v"})
    assert core.create_namespaced_config_map(NS, body).data == {"k": "v"}
    core.delete_namespaced_config_map("py-cm", NS)
    with pytest.raises(ApiException) as caught:
        core.read_namespaced_config_map("py-cm", NS)
    assert caught.value.status == 404


def test_pod_logs(core):
    name = frontend(core).metadata.name
    text = core.read_namespaced_pod_log(name, NS, tail_lines=2)
    assert isinstance(text, str) and len(text.splitlines()) == 2 and " INF " in text
    with pytest.raises(ApiException) as caught:
        core.read_namespaced_pod_log(name, NS, previous=True)
    assert caught.value.status == 400


def test_exec_through_the_stream_helper(core):
    name = frontend(core).metadata.name
    out = stream(core.connect_get_namespaced_pod_exec, name, NS, command=["sh", "-c", "echo hi; hostname"],
                 stderr=True, stdin=False, stdout=True, tty=False)
    assert out == f"hi\n{name}\n"


def test_exec_exit_code_through_the_stream_helper(core):
    name = frontend(core).metadata.name
    resp = stream(core.connect_get_namespaced_pod_exec, name, NS, command=["sh", "-c", "echo no >&2; exit 4"],
                  stderr=True, stdin=False, stdout=True, tty=False, _preload_content=False)
    resp.run_forever(timeout=5)
    assert resp.read_stderr() == "no\n" and resp.returncode == 4


def test_probe_credentials_are_refused_writes(hotel):
    apps = client.AppsV1Api(api_client(hotel, "probe"))
    assert apps.read_namespaced_deployment("frontend", NS).metadata.name == "frontend"
    with pytest.raises(ApiException) as caught:
        apps.patch_namespaced_deployment("frontend", NS, {"spec": {"replicas": 3}})
    assert caught.value.status == 403 and "cannot patch resource" in caught.value.body
