"""Every object the API accepts is a valid object, and a controller that raises costs one object, never the cluster:
issue 23's node-spec reproduction, the server's defaulting and type checks, reconcile faults reported by Events and
the health paths, and errors that always get a Status whatever bytes a name or body holds."""

from __future__ import annotations

import http.client
import json
import socket
import ssl
from urllib.parse import urlsplit

import pytest

from aoi.twin.controllers.base import Controller

NS = "test-hotel-reservation"
NULL_SPEC = ["patch", "node", "kind-worker", "--type=merge", "-p", '{"spec":null}']


def tls() -> ssl.SSLContext:
    """Return a client context for the twin's self-signed loopback certificate."""
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    return context


def request(served, method: str, path: str, body: bytes = b"", ctype: str = "application/json"):
    """Send one admin request; return (status, body as JSON when it is JSON, else bytes)."""
    url = urlsplit(served.server.url)
    conn = http.client.HTTPSConnection(url.hostname, url.port, context=tls(), timeout=10)
    conn.request(method, path, body=body, headers={"Authorization": f"Bearer {served.twin.credentials['admin']}",
                                                   "Content-Type": ctype})
    resp = conn.getresponse()
    data = resp.read()
    conn.close()
    try:
        return resp.status, json.loads(data)
    except ValueError:
        return resp.status, data


def raw(served, data: bytes) -> tuple[int, bytes]:
    """Write raw request bytes; return the answer's status and body (None status: the server hung up unanswered)."""
    url = urlsplit(served.server.url)
    with socket.create_connection((url.hostname, url.port), timeout=10) as sock, tls().wrap_socket(sock) as conn:
        conn.sendall(data)
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    return (int(head.split(b" ", 2)[1]) if head else None), body


@pytest.mark.parametrize("role", ["admin", "executor"])
def test_a_null_node_spec_is_defaulted_and_the_cluster_keeps_reconciling(hotel, role):
    assert "node/kind-worker patched" in hotel.ok(NULL_SPEC, role=role)
    node = json.loads(hotel.ok("get node kind-worker -o json"))
    assert node["spec"] == {} and node["status"]["conditions"]  # defaulted like a real server's empty NodeSpec
    pod = hotel.ok(f"get pods -n {NS} -l io.kompose.service=geo -o name").split()[0]
    hotel.ok(f"delete {pod} -n {NS} --wait=false")
    hotel.twin.advance(60)
    assert not hotel.twin.faults.active, hotel.twin.faults.report()
    pods = hotel.ok(f"get pods -n {NS} -l io.kompose.service=geo --field-selector=status.phase=Running -o name")
    assert pods.split() and pod not in pods.split()
    assert hotel.ok("get --raw /readyz") == "ok"


@pytest.mark.parametrize(("patch", "code"), [
    ('{"spec":{"replicas":"2"}}', 400), ('{"spec":{"template":{"spec":{"containers":null}}}}', 422),
    ('{"metadata":{"labels":{"a":7}}}', 400), ('{"spec":{"template":{"spec":{"containers":[{"name":"x"}]}}}}', 422),
    ('{"spec":{"strategy":{"rollingUpdate":"x"}}}', 400), ('{"spec":{"minReadySeconds":1.5}}', 400),
])
def test_wrong_types_and_missing_fields_are_refused_with_a_status(hotel, patch, code):
    path = f"/apis/apps/v1/namespaces/{NS}/deployments/geo"
    status, body = request(hotel, "PATCH", path, patch.encode(), "application/merge-patch+json")
    assert status == code and body["kind"] == "Status", body
    assert body["reason"] == {400: "BadRequest", 422: "Invalid"}[code]
    assert request(hotel, "GET", path)[1]["spec"]["replicas"] == 1  # nothing was stored


def test_nulls_inside_known_fields_are_dropped(hotel):
    path = f"/apis/apps/v1/namespaces/{NS}/deployments/geo"
    patch = b'{"spec":{"template":{"spec":{"nodeSelector":null,"tolerations":null}}},"status":null}'
    status, body = request(hotel, "PATCH", path, patch, "application/strategic-merge-patch+json")
    assert status == 200, body
    status, body = request(hotel, "PUT", "/api/v1/nodes/kind-worker/status",
                           json.dumps({"metadata": {"name": "kind-worker"}, "status": None}).encode())
    assert status == 200 and body["status"] == {} and body["spec"], body
    hotel.twin.advance(30)
    assert not hotel.twin.faults.active, hotel.twin.faults.report()


class Brittle(Controller):
    """A controller with a bug: it raises on the ConfigMap named `boom` and counts the others it reconciles."""

    name = "brittle"
    watches = ("configmaps",)

    def __init__(self):
        self.seen = 0

    def reconcile(self, twin, key):
        if key[1] == "boom" and twin.get("configmaps", *key) is not None:
            raise KeyError("spec")
        self.seen += 1


def test_a_controller_that_raises_costs_one_object_and_is_reported(hotel):
    brittle = Brittle()
    hotel.twin.add_controller(brittle)
    hotel.ok(f"create configmap boom -n {NS}")  # the write succeeds; its reconcile fails
    hotel.ok(f"create configmap calm -n {NS}")
    assert brittle.seen == 1
    events = hotel.ok(f"get events -n {NS} --field-selector=involvedObject.name=boom -o json")
    event = json.loads(events)["items"][0]
    assert event["reason"] == "ReconcileError" and "KeyError: 'spec'" in event["message"]
    failing = hotel.kubectl("get --raw /readyz?verbose")
    assert failing.returncode == 1 and "[-]controllers failed: 1 object(s) fail to reconcile: brittle on" in \
        failing.stderr + failing.stdout
    assert hotel.ok("get --raw /livez") == "ok"  # unready, not dead: restarting would not help
    hotel.ok(f"scale deploy geo -n {NS} --replicas=2")  # the rest of the cluster keeps reconciling
    hotel.twin.advance(30)
    assert len(hotel.ok(f"get pods -n {NS} -l io.kompose.service=geo -o name").split()) == 2
    hotel.ok(f"delete configmap boom -n {NS}")  # its next reconcile succeeds: the fault is over
    assert hotel.ok("get --raw /healthz") == "ok" and hotel.twin.faults.total == 1


@pytest.mark.parametrize("body", [
    b'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: "a\\ud800b"\n',  # a lone surrogate escape
    b'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  labels:\n    k: "\\udc80"\n',
    b'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: "bad\\x01name"\n',
    b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"\xff\xfe"}}',  # invalid UTF-8
])
def test_malformed_text_in_a_body_gets_a_status(hotel, body):
    ctype = "application/yaml" if body.startswith(b"apiVersion") else "application/json"
    status, answer = request(hotel, "POST", f"/api/v1/namespaces/{NS}/configmaps", body, ctype)
    assert status in (400, 422) and answer["kind"] == "Status", answer


@pytest.mark.parametrize("name", ["a\x01b", "caf\xe9", "\x7f", "a b", "%ED%A0%80", "x\udc80"])
def test_malformed_names_in_a_path_get_a_status(hotel, name):
    path = f"/api/v1/namespaces/{NS}/configmaps/{name}".encode("utf-8", "surrogateescape")
    head = b"GET " + path + b" HTTP/1.1\r\nHost: twin\r\nConnection: close\r\nAuthorization: Bearer " + \
        hotel.twin.credentials["admin"].encode() + b"\r\n\r\n"
    status, body = raw(hotel, head)
    assert status in (400, 404) and json.loads(body)["kind"] == "Status", body


def test_a_surrogate_in_an_error_message_still_answers(hotel):
    patch = b'metadata:\n  labels:\n    k: "\\ud800"\n'
    status, body = request(hotel, "PATCH", f"/api/v1/namespaces/{NS}/configmaps/missing", patch,
                           "application/apply-patch+yaml")
    assert status == 400 and body["kind"] == "Status"


# What the soak (tests/twin/test_soak.py, benchmarks/twin_soak.py) found, each once more by hand.
@pytest.mark.parametrize(("path", "patch", "code"), [
    (f"/apis/apps/v1/namespaces/{NS}/deployments/geo",
     '{"spec":{"strategy":{"rollingUpdate":{"maxUnavailable":"Always"}}}}', 422),
    (f"/apis/apps/v1/namespaces/{NS}/deployments/geo/status", '{"status":{"conditions":[{"lastUpdateTime":-1}]}}', 400),
    (f"/apis/apps/v1/namespaces/{NS}/deployments/geo", '{"spec":{"replicas":2147483648}}', 400),
])
def test_values_a_real_server_refuses_are_refused(hotel, path, patch, code):
    status, body = request(hotel, "PATCH", path, patch.encode(), "application/merge-patch+json")
    assert status == code and body["kind"] == "Status", body


def test_a_malformed_cron_schedule_is_invalid(hotel):
    cronjob = {"metadata": {"name": "tick"}, "spec": {"schedule": "*/1 * * * *x", "jobTemplate": {"spec": {
        "template": {"spec": {"containers": [{"name": "c", "image": "busybox"}], "restartPolicy": "Never"}}}}}}
    status, body = request(hotel, "POST", f"/apis/batch/v1/namespaces/{NS}/cronjobs", json.dumps(cronjob).encode())
    assert status == 422 and "spec.schedule" in body["message"], body


def test_odd_states_the_api_accepts_keep_the_controllers_going(hotel):
    pod = {"metadata": {"name": "lost"}, "spec": {"nodeName": "no-such-node",
                                                  "containers": [{"name": "c", "image": "busybox"}]}}
    assert request(hotel, "POST", f"/api/v1/namespaces/{NS}/pods", json.dumps(pod).encode())[0] == 201
    rs = hotel.ok(f"get rs -n {NS} -l io.kompose.service=geo -o name").split()[0]  # no longer the deployment's
    hotel.ok(["patch", rs, "-n", NS, "--type=merge", "-p", '{"spec":{"template":{"spec":{"restartPolicy":"Always",'
              '"terminationGracePeriodSeconds":5}}}}'])
    status, body = request(hotel, "PATCH", f"/apis/apps/v1/namespaces/{NS}/deployments/geo/status",
                           b'{"status":{"conditions":[{"status":"True"}]}}', "application/merge-patch+json")
    assert status == 200, body
    hotel.twin.advance(120)
    assert not hotel.twin.faults.active, hotel.twin.faults.report()
    assert json.loads(hotel.ok(f"get pod lost -n {NS} -o json"))["status"]["phase"] == "Pending"
    geo = json.loads(hotel.ok(f"get deploy geo -n {NS} -o json"))  # its template's RS name was taken: a new hash
    assert geo["status"]["collisionCount"] == 1 and geo["status"]["availableReplicas"] == 1


@pytest.mark.parametrize(("path", "status"), [
    (f"/apis/apps/v1/namespaces/{NS}/deployments/geo/status",
     {"conditions": [{"type": "Available", "status": "True"}]}),
    (f"/api/v1/namespaces/{NS}/pods/POD/status", {"conditions": [{"type": "Ready", "status": "True"}]}),
])
def test_conditions_missing_their_optional_fields_keep_the_controllers_going(hotel, path, status):
    pod = hotel.ok(f"get pods -n {NS} -l io.kompose.service=geo -o name").split()[0].split("/")[1]
    body = json.dumps({"status": status}).encode()
    answer = request(hotel, "PATCH", path.replace("POD", pod), body, "application/merge-patch+json")
    assert answer[0] == 200, answer
    hotel.ok(f"delete pod {pod} -n {NS} --wait=false")  # work for the deployment, the kubelet and the rest
    hotel.twin.advance(60)
    assert not hotel.twin.faults.active, hotel.twin.faults.report()
