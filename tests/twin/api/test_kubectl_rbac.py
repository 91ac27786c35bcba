"""RBAC through kubectl: the probe only reads, the executor writes inside the app namespaces only."""

import re

import pytest
import yaml

NS = "test-hotel-reservation"
PROBE = "system:serviceaccount:aoi:probe"
EXECUTOR = "system:serviceaccount:aoi:executor"
CM = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "probe-cm", "namespace": NS}, "data": {"a": "b"}}


def forbidden(user: str, verb: str, resource: str, group: str = "", namespace: str = NS) -> str:
    """Return the authorizer's wording for a refused request (the part after `... is forbidden: `)."""
    scope = f'in the namespace "{namespace}"' if namespace else "at the cluster scope"
    return f'User "{user}" cannot {verb} resource "{resource}" in API group "{group}" {scope}'


def frontend(served) -> str:
    """Return the frontend pod's name."""
    return served.ok(f"get pods -n {NS} -l io.kompose.service=frontend -o name").split()[0].split("/")[1]


PROBE_WRITES = [
    (["create", "configmap", "x", "--from-literal=a=b"], "create", "configmaps", ""),
    (["patch", "deploy", "frontend", "-p", '{"spec":{"replicas":2}}'], "patch", "deployments", "apps"),
    (["delete", "deploy", "frontend"], "delete", "deployments", "apps"),
    (["scale", "deploy/frontend", "--replicas=2"], "patch", "deployments/scale", "apps"),
    (["set", "image", "deploy/frontend", "hotel-reserv-frontend=x:1"], "patch", "deployments", "apps"),
    (["label", "deploy", "frontend", "a=b"], "patch", "deployments", "apps"),
    (["annotate", "deploy", "frontend", "a=b"], "patch", "deployments", "apps"),
    (["rollout", "restart", "deploy/frontend"], "patch", "deployments", "apps"),
    (["get", "secrets"], "list", "secrets", ""),
]


@pytest.mark.parametrize("argv, verb, resource, group", PROBE_WRITES, ids=[" ".join(w[0][:2]) for w in PROBE_WRITES])
def test_probe_is_refused_every_write(cluster, argv, verb, resource, group):
    before = cluster.twin.store.rv
    done = cluster.kubectl([*argv, "-n", NS], role="probe")
    assert done.returncode == 1
    assert re.match(r"(Error from server \(Forbidden\)|error: failed to (create|patch)[^:]*): \S+( \S+)? is "
                    r"forbidden: ", done.stderr)
    assert forbidden(PROBE, verb, resource, group) in done.stderr
    assert cluster.twin.store.rv == before


def test_probe_cannot_apply_replace_exec_or_read_a_secret(cluster):
    before = cluster.twin.store.rv
    apply = cluster.kubectl("apply -f -", role="probe", stdin=yaml.safe_dump(CM).encode())
    assert apply.stderr.startswith('Error from server (Forbidden): error when creating "STDIN": configmaps is '
                                   "forbidden: ") and forbidden(PROBE, "create", "configmaps") in apply.stderr
    live = cluster.ok(f"get cm mongo-geo-script -n {NS} -o yaml")
    replace = cluster.kubectl("replace -f -", role="probe", stdin=live.encode())
    assert 'Error from server (Forbidden): error when replacing "STDIN"' in replace.stderr
    assert forbidden(PROBE, "update", "configmaps") in replace.stderr
    exec_ = cluster.kubectl(["exec", "-n", NS, frontend(cluster), "--", "ls"], role="probe")
    assert exec_.returncode == 1 and forbidden(PROBE, "create", "pods/exec") in exec_.stderr
    secret = cluster.kubectl("get secret grafana -n astronomy-shop -o yaml", role="probe")
    assert secret.stderr.strip() == ('Error from server (Forbidden): secrets "grafana" is forbidden: '
                                     + forbidden(PROBE, "get", "secrets", namespace="astronomy-shop"))
    assert cluster.twin.store.rv == before


def test_probe_reads(cluster):
    pod = frontend(cluster)
    for command in (f"get pods,deploy,svc,cm -n {NS}", "get nodes,pv,ns", f"describe pod {pod} -n {NS}",
                    f"logs {pod} -n {NS} --tail=1", f"top pods -n {NS}", "top nodes", f"get events -n {NS}",
                    "describe node kind-worker"):
        assert cluster.ok(command, role="probe").strip(), command


@pytest.mark.parametrize("role, question, answer", [
    ("probe", "list pods", "yes"), ("probe", "get pods --subresource=log", "yes"), ("probe", "delete pods", "no"),
    ("probe", "get secrets", "no"), ("probe", "create pods --subresource=exec", "no"),
    ("executor", "patch deployments", "yes"), ("executor", "create pods --subresource=exec", "yes"),
    ("executor", "delete pods -n kube-system", "no"), ("executor", "create rolebindings", "no"),
    ("admin", "delete nodes", "yes"),
])
def test_auth_can_i(cluster, role, question, answer):
    done = cluster.kubectl(f"auth can-i {question} -n {NS}" if " -n " not in question else f"auth can-i {question}",
                           role=role)
    assert done.stdout.strip() == answer and done.returncode == (0 if answer == "yes" else 1)


def test_auth_can_i_cluster_scoped(cluster):
    done = cluster.kubectl("auth can-i delete nodes", role="executor")
    assert done.stdout.strip() == "no" and done.returncode == 1
    assert done.stderr.strip() == "Warning: resource 'nodes' is not namespace scoped"


def test_auth_can_i_list(cluster):
    out = cluster.ok(f"auth can-i --list -n {NS}", role="probe")
    assert out.splitlines()[0].split() == ["Resources", "Non-Resource", "URLs", "Resource", "Names", "Verbs"]
    rows = {line.split()[0]: line.split()[-3:] for line in out.splitlines()[1:] if not line.startswith(" ")}
    assert rows["pods"] == ["[get", "list", "watch]"] and rows["deployments.apps"] == ["[get", "list", "watch]"]
    assert rows["selfsubjectaccessreviews.authorization.k8s.io"] == ["[]", "[]", "[create]"]
    assert "secrets" not in rows


def test_executor_writes_and_execs_in_app_namespaces(hotel):
    assert hotel.ok(["exec", "-n", NS, frontend(hotel), "--", "echo", "in"], role="executor") == "in\n"
    assert hotel.ok(f"scale deploy/frontend -n {NS} --replicas=2", role="executor") == \
        "deployment.apps/frontend scaled\n"
    assert hotel.ok(f"create configmap fix -n {NS} --from-literal=a=b", role="executor") == "configmap/fix created\n"
    assert hotel.ok(f"rollout restart deploy/frontend -n {NS}", role="executor") == \
        "deployment.apps/frontend restarted\n"


@pytest.mark.parametrize("argv, verb, resource, group, namespace", [
    (["delete", "node", "kind-worker"], "delete", "nodes", "", ""),
    (["delete", "pv", "geo-pv"], "delete", "persistentvolumes", "", ""),
    (["delete", "namespace", NS], "delete", "namespaces", "", ""),
    (["create", "clusterrole", "x", "--verb=get", "--resource=pods"], "create", "clusterroles",
     "rbac.authorization.k8s.io", ""),
    (["create", "rolebinding", "x", "--clusterrole=admin", "--user=me", "-n", NS], "create", "rolebindings",
     "rbac.authorization.k8s.io", NS),
    (["label", "clusterrolebinding", "aoi-probe", "a=b"], "patch", "clusterrolebindings",
     "rbac.authorization.k8s.io", ""),
    (["delete", "pods", "--all", "-n", "kube-system"], "delete", "pods", "", "kube-system"),
])
def test_executor_cannot_delete_cluster_objects_or_change_rbac(hotel, argv, verb, resource, group, namespace):
    before = hotel.twin.store.rv
    done = hotel.kubectl(argv, role="executor")
    assert done.returncode == 1 and forbidden(EXECUTOR, verb, resource, group, namespace) in done.stderr
    assert hotel.twin.store.rv == before
