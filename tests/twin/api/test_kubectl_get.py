"""`kubectl get` against the twin: every resource's columns, every output format, selectors, sorting and watch."""

import json
import re

import pytest
import yaml

NS = "test-hotel-reservation"
HEADERS = {
    "pods": "NAME READY STATUS RESTARTS AGE",
    "deploy": "NAME READY UP-TO-DATE AVAILABLE AGE",
    "rs": "NAME DESIRED CURRENT READY AGE",
    "svc": "NAME TYPE CLUSTER-IP EXTERNAL-IP PORT(S) AGE",
    "ep": "NAME ENDPOINTS AGE",
    "endpointslices": "NAME ADDRESSTYPE PORTS ENDPOINTS AGE",
    "cm": "NAME DATA AGE",
    "pvc": "NAME STATUS VOLUME CAPACITY ACCESS MODES STORAGECLASS VOLUMEATTRIBUTESCLASS AGE",
    "sa": "NAME SECRETS AGE",
    "events": "LAST SEEN TYPE REASON OBJECT MESSAGE",
}
CLUSTER_HEADERS = {
    "pv": "NAME CAPACITY ACCESS MODES RECLAIM POLICY STATUS CLAIM STORAGECLASS VOLUMEATTRIBUTESCLASS REASON AGE",
    "sc": "NAME PROVISIONER RECLAIMPOLICY VOLUMEBINDINGMODE ALLOWVOLUMEEXPANSION AGE",
    "nodes": "NAME STATUS ROLES AGE VERSION",
    "ns": "NAME STATUS AGE",
}


def words(line: str) -> str:
    """Collapse a table line's column padding."""
    return " ".join(line.split())


def rows(out: str) -> list[list[str]]:
    """Split a table into its data rows (cells split on runs of spaces)."""
    return [re.split(r"\s{2,}", line.strip()) for line in out.splitlines()[1:] if line.strip()]


@pytest.mark.parametrize("kind", sorted(HEADERS))
def test_namespaced_resources_print_kubernetes_columns(cluster, kind):
    out = cluster.ok(f"get {kind} -n {NS}")
    assert words(out.splitlines()[0]) == HEADERS[kind]
    assert len(out.splitlines()) > 1


@pytest.mark.parametrize("kind", sorted(CLUSTER_HEADERS))
def test_cluster_resources_print_kubernetes_columns(cluster, kind):
    out = cluster.ok(f"get {kind}")
    assert words(out.splitlines()[0]) == CLUSTER_HEADERS[kind]
    assert len(out.splitlines()) > 1


def test_secrets_print_their_columns(cluster):
    secrets = cluster.ok("get secrets -n astronomy-shop")
    assert words(secrets.splitlines()[0]) == "NAME TYPE DATA AGE"
    assert rows(secrets)[0][:3] == ["grafana", "Opaque", "3"]


def test_jobs_print_their_columns(hotel):
    hotel.ok(["create", "job", "once", "-n", NS, "--image=busybox", "--", "sh", "-c", "echo ok"])
    hotel.twin.advance(10)
    out = hotel.ok(f"get jobs -n {NS} -o wide")
    assert words(out.splitlines()[0]) == "NAME STATUS COMPLETIONS DURATION AGE CONTAINERS IMAGES SELECTOR"
    assert rows(out)[0][:3] == ["once", "Complete", "1/1"] and rows(out)[0][6] == "busybox"


def test_pods_rows_carry_ready_status_restarts_and_age(cluster):
    table = rows(cluster.ok(f"get pods -n {NS}"))
    assert len(table) == 19
    frontend = next(r for r in table if r[0].startswith("frontend-"))
    assert re.fullmatch(r"frontend-[a-z0-9]{8,10}-[a-z0-9]{5}", frontend[0])
    assert frontend[1:4] == ["1/1", "Running", "0"]
    assert re.fullmatch(r"\d+m(\d+s)?", frontend[4])


def test_wide_adds_ip_and_node(cluster):
    out = cluster.ok(f"get pods -n {NS} -o wide -l io.kompose.service=frontend")
    assert words(out.splitlines()[0]) == "NAME READY STATUS RESTARTS AGE IP NODE NOMINATED NODE READINESS GATES"
    row = rows(out)[0]
    assert re.fullmatch(r"10\.244\.\d+\.\d+", row[5]) and row[6] == "kind-worker" and row[7:] == ["<none>", "<none>"]


def test_nodes_wide_show_addresses_and_runtime(cluster):
    out = cluster.ok("get nodes -o wide")
    assert "INTERNAL-IP" in out and "CONTAINER-RUNTIME" in out
    control = next(r for r in rows(out) if r[0] == "kind-control-plane")
    assert control[1:3] == ["Ready", "control-plane"] and control[5] == "172.18.0.2"


def test_get_all_lists_every_workload_kind(cluster):
    out = cluster.ok(f"get all -n {NS}")
    blocks = out.strip().split("\n\n")
    prefixes = [b.splitlines()[1].split("/")[0] for b in blocks]
    assert prefixes == ["pod", "service", "deployment.apps", "replicaset.apps"]


def test_multiple_types_print_one_table_each(cluster):
    out = cluster.ok(f"get svc,ep -n {NS} -l io.kompose.service=geo")
    assert "service/geo" in out and "endpoints/geo" in out and "\n\n" in out


def test_json_is_a_list_of_full_objects(cluster):
    doc = json.loads(cluster.ok(f"get pods -n {NS} -o json"))
    assert doc["kind"] == "List" and doc["apiVersion"] == "v1"
    pod = doc["items"][0]
    assert pod["kind"] == "Pod" and pod["metadata"]["uid"] and pod["spec"]["containers"]
    assert {"phase", "conditions"} <= set(pod["status"])


def test_yaml_of_one_object(cluster):
    doc = yaml.safe_load(cluster.ok(f"get deploy geo -n {NS} -o yaml"))
    assert doc["kind"] == "Deployment" and doc["apiVersion"] == "apps/v1"
    assert doc["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["cpu"] == "1"
    assert doc["status"]["observedGeneration"] == doc["metadata"]["generation"]


def test_name_jsonpath_and_custom_columns_agree(cluster):
    names = cluster.ok(f"get pods -n {NS} -o name").split()
    assert all(n.startswith("pod/") for n in names) and len(names) == 19
    jsonpath = cluster.ok(["get", "pods", "-n", NS, "-o", "jsonpath={.items[*].metadata.name}"]).split()
    assert ["pod/" + n for n in jsonpath] == names
    custom = cluster.ok(["get", "pods", "-n", NS, "-o", "custom-columns=NAME:.metadata.name,NODE:.spec.nodeName"])
    assert custom.splitlines()[0].split() == ["NAME", "NODE"]
    assert ["pod/" + r[0] for r in rows(custom)] == names


def test_label_selector(cluster):
    out = cluster.ok(f"get pods -n {NS} -l 'io.kompose.service in (geo,rate)' -o name")
    assert [n.split("-")[0] for n in out.split()] == ["pod/geo", "pod/rate"]
    assert cluster.ok(f"get pods -n {NS} -l io.kompose.service!=geo -o name").count("pod/geo-") == 0


def test_field_selector(cluster):
    phases = cluster.ok(["get", "pods", "-A", "--field-selector", "status.phase=Running,metadata.namespace=" + NS,
                         "-o", "jsonpath={.items[*].status.phase}"]).split()
    assert len(phases) == 19 and set(phases) == {"Running"}
    assert cluster.kubectl(f"get pods -n {NS} --field-selector status.phase=Failed").stdout == ""
    node = cluster.ok("get pods -A --field-selector spec.nodeName=kind-control-plane -o name")
    assert "pod/etcd-kind-control-plane" in node.split()


def test_all_namespaces_adds_the_namespace_column(cluster):
    out = cluster.ok("get pods -A")
    assert out.splitlines()[0].split()[:2] == ["NAMESPACE", "NAME"]
    namespaces = {r[0] for r in rows(out)}
    assert {"kube-system", NS, "test-social-network", "astronomy-shop"} <= namespaces


def test_show_labels(cluster):
    out = cluster.ok(f"get pods -n {NS} -l io.kompose.service=geo --show-labels")
    assert out.splitlines()[0].split()[-1] == "LABELS"
    assert re.search(r"io\.kompose\.service=geo,pod-template-hash=[a-z0-9]+$", out.splitlines()[1])


def test_sort_by_a_spec_field_uses_full_objects(cluster):
    out = cluster.ok(f"get svc -n {NS} --sort-by=.spec.clusterIP")
    ips = [r[2] for r in rows(out)]
    assert len(ips) == 20 and ips == sorted(ips)


def test_sort_events_by_last_timestamp(cluster):
    out = cluster.ok(f"get events -n {NS} --sort-by=.lastTimestamp")
    assert len(rows(out)) > 20


def test_missing_object(cluster):
    done = cluster.kubectl(f"get pod x -n {NS}")
    assert done.returncode == 1
    assert done.stderr.strip() == 'Error from server (NotFound): pods "x" not found'


def test_missing_object_in_missing_namespace(cluster):
    done = cluster.kubectl("get deploy x -n nosuchns")
    assert done.stderr.strip() == 'Error from server (NotFound): namespaces "nosuchns" not found'


def test_empty_namespace(cluster):
    done = cluster.kubectl("get pods -n nosuchns")
    assert done.returncode == 0 and done.stdout == ""
    assert done.stderr.strip() == "No resources found in nosuchns namespace."


def test_unknown_resource_type(cluster):
    done = cluster.kubectl("get nosuchtype")
    assert done.returncode == 1
    assert done.stderr.strip() == 'error: the server doesn\'t have a resource type "nosuchtype"'


def test_watch_ends_at_the_request_timeout(hotel):
    done = hotel.kubectl(f"get pods -n {NS} -l io.kompose.service=geo -w --request-timeout=5s")
    assert done.returncode == 0 and not done.timed_out
    assert done.stdout.splitlines()[0].split()[:2] == ["NAME", "READY"]


def test_watch_streams_table_rows_once_with_one_header(hotel):
    pod = hotel.ok(f"get pods -n {NS} -l io.kompose.service=frontend -o name").strip()
    hotel.ok(f"delete {pod} -n {NS} --wait=false")
    done = hotel.kubectl(f"get pods -n {NS} -l io.kompose.service=frontend -w --request-timeout=20s")
    lines = done.stdout.splitlines()
    assert done.returncode == 0 and sum(line.startswith("NAME") for line in lines) == 1
    statuses = [words(line).split()[2] for line in lines[1:]]
    assert "Terminating" in statuses and statuses[-1] == "Running" and len(lines) > 3


def test_policy_types_every_cluster_serves(cluster):
    for kind in ("networkpolicies", "ingresses", "poddisruptionbudgets"):
        done = cluster.kubectl(f"get {kind} -A")
        assert done.returncode == 0 and done.stderr.strip() == "No resources found"
    classes = rows(cluster.ok("get priorityclasses"))
    assert [r[:3] for r in classes] == [["system-cluster-critical", "2000000000", "false"],
                                       ["system-node-critical", "2000001000", "false"]]
    assert [r[0] for r in rows(cluster.ok("get crd"))] == ["networkchaos.chaos-mesh.org", "podchaos.chaos-mesh.org"]


def test_api_resources(cluster):
    out = cluster.ok("api-resources")
    assert words(out.splitlines()[0]) == "NAME SHORTNAMES APIVERSION NAMESPACED KIND"
    table = {words(line) for line in out.splitlines()[1:]}
    assert {"pods po v1 true Pod", "deployments deploy apps/v1 true Deployment",
            "nodes no v1 false Node", "endpointslices discovery.k8s.io/v1 true EndpointSlice"} <= table
    cluster_scoped = cluster.ok("api-resources --namespaced=false -o name").split()
    assert {"namespaces", "nodes", "persistentvolumes", "storageclasses.storage.k8s.io"} <= set(cluster_scoped)


def test_version(cluster):
    out = cluster.ok("version")
    assert "Server Version: v1.32.0" in out.splitlines()
    assert json.loads(cluster.ok("version -o json"))["serverVersion"]["minor"] == "32"


def test_cluster_info(cluster):
    lines = cluster.ok("cluster-info").splitlines()
    url = cluster.server.url
    assert lines[0] == f"Kubernetes control plane is running at {url}"
    assert lines[1] == f"CoreDNS is running at {url}/api/v1/namespaces/kube-system/services/kube-dns:dns/proxy"
