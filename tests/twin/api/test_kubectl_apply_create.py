"""`kubectl apply -f`, `create -f` (multi-document YAML) and the typed `create` commands (protobuf bodies)."""

import base64
import json

import yaml

NS = "test-hotel-reservation"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
DOCS = [
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "demo-config", "namespace": NS},
     "data": {"mode": "fast"}},
    {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "demo", "namespace": NS},
     "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "demo"}},
              "template": {"metadata": {"labels": {"app": "demo"}},
                           "spec": {"containers": [{"name": "web", "image": "nginx:1.25",
                                                    "ports": [{"containerPort": 80, "name": "http"}],
                                                    "volumeMounts": [{"name": "cfg", "mountPath": "/etc/demo"}]}],
                                    "volumes": [{"name": "cfg", "configMap": {"name": "demo-config"}}]}}}},
    {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "demo", "namespace": NS},
     "spec": {"selector": {"app": "demo"}, "ports": [{"port": 8080, "targetPort": "http"}]}},
]


def manifest(tmp_path, docs, name="app.yaml"):
    """Write documents as one multi-document YAML file."""
    path = tmp_path / name
    path.write_text(yaml.safe_dump_all(docs))
    return str(path)


def get(served, what: str) -> dict:
    """Return an object as JSON."""
    return json.loads(served.ok(f"get {what} -n {NS} -o json"))


def test_apply_creates_then_leaves_unchanged_then_configures(hotel, tmp_path):
    path = manifest(tmp_path, DOCS)
    assert hotel.ok(["apply", "-f", path]).splitlines() == [
        "configmap/demo-config created", "deployment.apps/demo created", "service/demo created"]
    assert LAST_APPLIED in get(hotel, "deploy demo")["metadata"]["annotations"]
    assert hotel.ok(["apply", "-f", path]).splitlines() == [
        "configmap/demo-config unchanged", "deployment.apps/demo unchanged", "service/demo unchanged"]
    changed = [dict(DOCS[0], data={"mode": "slow"}), DOCS[1], DOCS[2]]
    assert hotel.ok(["apply", "-f", manifest(tmp_path, changed, "v2.yaml")]).splitlines() == [
        "configmap/demo-config configured", "deployment.apps/demo unchanged", "service/demo unchanged"]
    assert get(hotel, "cm demo-config")["data"] == {"mode": "slow"}


def test_applied_workload_runs_and_mounts_its_config(hotel, tmp_path):
    hotel.ok(["apply", "-f", manifest(tmp_path, DOCS)])
    hotel.ok(f"rollout status deploy/demo -n {NS}")
    assert hotel.ok(f"exec deploy/demo -n {NS} -- cat /etc/demo/mode") == "fast"
    endpoints = get(hotel, "ep demo")["subsets"][0]
    assert endpoints["ports"] == [{"port": 80, "protocol": "TCP"}] and len(endpoints["addresses"]) == 1


def test_apply_changes_a_deployment_in_place(hotel, tmp_path):
    hotel.ok(["apply", "-f", manifest(tmp_path, DOCS)])
    newer = json.loads(json.dumps(DOCS[1]))
    newer["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1.26"
    assert hotel.ok(["apply", "-f", manifest(tmp_path, [newer], "v2.yaml")]) == "deployment.apps/demo configured\n"
    hotel.ok(f"rollout status deploy/demo -n {NS}")
    assert get(hotel, "deploy demo")["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "2"


def test_server_side_apply(hotel, tmp_path):
    out = hotel.ok(["apply", "--server-side", "-f", manifest(tmp_path, DOCS[:1])])
    assert out == "configmap/demo-config serverside-applied\n"


def test_create_from_file_then_already_exists(hotel, tmp_path):
    path = manifest(tmp_path, DOCS)
    assert hotel.ok(["create", "-f", path]).splitlines() == [
        "configmap/demo-config created", "deployment.apps/demo created", "service/demo created"]
    done = hotel.kubectl(["create", "-f", path])
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f'Error from server (AlreadyExists): error when creating "{path}": configmaps "demo-config" already exists',
        f'Error from server (AlreadyExists): error when creating "{path}": deployments.apps "demo" already exists',
        f'Error from server (AlreadyExists): error when creating "{path}": services "demo" already exists']


def test_create_of_an_invalid_object(hotel, tmp_path):
    bad = json.loads(json.dumps(DOCS[1]))
    del bad["spec"]["template"]["spec"]["containers"][0]["image"]
    done = hotel.kubectl(["create", "-f", manifest(tmp_path, [bad])])
    assert done.stderr.strip() == ('The Deployment "demo" is invalid: spec.template.spec.containers[0].image: '
                                   "Required value")


def test_create_configmap(hotel):
    assert hotel.ok(f"create configmap flags -n {NS} --from-literal=a=b --from-literal=c=d") == \
        "configmap/flags created\n"
    assert get(hotel, "cm flags")["data"] == {"a": "b", "c": "d"}
    done = hotel.kubectl(f"create configmap flags -n {NS} --from-literal=a=b")
    assert done.stderr.strip() == 'error: failed to create configmap: configmaps "flags" already exists'


def test_create_secret(hotel):
    assert hotel.ok(f"create secret generic s1 -n {NS} --from-literal=password=hunter2") == "secret/s1 created\n"
    secret = get(hotel, "secret s1")
    assert secret["type"] == "Opaque" and base64.b64decode(secret["data"]["password"]) == b"hunter2"
    assert hotel.ok(f"get secret s1 -n {NS}").splitlines()[1].split()[:3] == ["s1", "Opaque", "1"]


def test_create_namespace_gets_its_defaults(hotel):
    assert hotel.ok("create namespace scratch") == "namespace/scratch created\n"
    assert hotel.ok("get ns scratch").splitlines()[1].split()[:2] == ["scratch", "Active"]
    assert hotel.ok("get sa,cm -n scratch -o name").split() == ["serviceaccount/default",
                                                                 "configmap/kube-root-ca.crt"]


def test_create_deployment_runs_its_pods(hotel):
    assert hotel.ok(f"create deployment web -n {NS} --image=nginx:1.25 --replicas=2") == \
        "deployment.apps/web created\n"
    assert hotel.ok(f"rollout status deploy/web -n {NS}").splitlines()[-1] == \
        'deployment "web" successfully rolled out'
    statuses = [line.split()[2] for line in hotel.ok(f"get pods -n {NS} -l app=web").splitlines()[1:]]
    assert statuses == ["Running", "Running"]


def test_create_in_a_missing_namespace(hotel):
    done = hotel.kubectl("create configmap x -n nosuchns --from-literal=a=b")
    assert done.stderr.strip() == 'error: failed to create configmap: namespaces "nosuchns" not found'
