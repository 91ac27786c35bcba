"""The API server under hostile input: review kinds are create-only, dry runs change nothing, and malformed
requests of every shape get a Kubernetes Status (never a dropped connection, a hang or a 5xx)."""

import http.client
import json
import socket
import ssl
from urllib.parse import urlsplit

import pytest
import yaml

from aoi.twin.api.fuzz import nested

NS = "test-hotel-reservation"
SSAR = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
CM = f"/api/v1/namespaces/{NS}/configmaps"


def tls() -> ssl.SSLContext:
    """Return a client context for the twin's self-signed loopback certificate."""
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    return context


def request(served, method: str, path: str, body: bytes = b"", role: str = "admin", headers: dict | None = None):
    """Send one request with http.client; return (status, headers, parsed JSON body or raw bytes)."""
    url = urlsplit(served.server.url)
    conn = http.client.HTTPSConnection(url.hostname, url.port, context=tls(), timeout=10)
    sent = {"Authorization": f"Bearer {served.twin.credentials[role]}", "Content-Type": "application/json",
            **(headers or {})}
    conn.request(method, path, body=body, headers=sent)
    resp = conn.getresponse()
    data = resp.read()
    conn.close()
    try:
        return resp.status, dict(resp.getheaders()), json.loads(data)
    except ValueError:
        return resp.status, dict(resp.getheaders()), data


def raw(served, data: bytes, timeout: float = 10.0) -> tuple[int, bytes]:
    """Write raw bytes on a fresh TLS connection; return the answer's status and body (read to the close)."""
    url = urlsplit(served.server.url)
    with (socket.create_connection((url.hostname, url.port), timeout=timeout) as sock,
          tls().wrap_socket(sock) as conn):
        conn.sendall(data)
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), body


def head(served, method: str, path: str, extra: str = "", role: str = "admin") -> bytes:
    """Return a request head (ending in the blank line) carrying a role's token."""
    return (f"{method} {path} HTTP/1.1\r\nHost: twin\r\nConnection: close\r\n"
            f"Authorization: Bearer {served.twin.credentials[role]}\r\n{extra}\r\n").encode()


def assert_status(body, code: int) -> None:
    """Assert a Kubernetes Status body for an error with the given code."""
    assert isinstance(body, dict), body
    assert (body["kind"], body["apiVersion"], body["status"], body["code"]) == ("Status", "v1", "Failure", code)
    assert body["message"]


# --- the review kinds are create-only -------------------------------------------------------------------------
@pytest.mark.parametrize("method, path", [("GET", SSAR), ("DELETE", SSAR), ("PATCH", SSAR),
                                          ("GET", "/apis/authentication.k8s.io/v1/selfsubjectreviews"),
                                          ("DELETE", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews")])
def test_probe_may_only_create_review_kinds(cluster, method, path):
    before = cluster.twin.store.rv
    code, _, body = request(cluster, method, path, b'{"metadata":{"name":"x"}}', role="probe")
    assert code == 403 and "is forbidden: User \"system:serviceaccount:aoi:probe\" cannot" in body["message"]
    code, _, body = request(cluster, method, path, b"{}", role="admin")
    assert code == 405 and body["reason"] == "MethodNotAllowed"
    assert cluster.twin.store.rv == before


def test_review_kinds_are_never_stored_and_have_no_named_paths(cluster):
    review = {"kind": "SelfSubjectAccessReview", "apiVersion": "authorization.k8s.io/v1",
              "metadata": {"name": "keep-me"}, "spec": {"resourceAttributes": {"verb": "get", "resource": "pods"}}}
    code, _, body = request(cluster, "POST", SSAR, json.dumps(review).encode(), role="probe")
    assert code == 201 and body["status"]["allowed"] is True
    for method in ("GET", "PATCH", "DELETE"):
        code, _, body = request(cluster, method, f"{SSAR}/keep-me", b"{}")
        assert code == 404 and body["reason"] == "NotFound"
    listing = cluster.kubectl("get selfsubjectaccessreviews", role="probe")
    assert 'cannot list resource "selfsubjectaccessreviews"' in listing.stderr
    assert "(MethodNotAllowed)" in cluster.kubectl("get selfsubjectaccessreviews").stderr


def test_non_resource_reviews_follow_the_roles(hotel):
    assert hotel.kubectl("auth can-i get /metrics", role="probe").stdout.strip() == "no"
    assert hotel.kubectl("auth can-i get /healthz", role="probe").stdout.strip() == "yes"
    assert hotel.kubectl("auth can-i post /healthz", role="probe").stdout.strip() == "no"
    assert hotel.kubectl("auth can-i get /metrics").stdout.strip() == "yes"
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "metrics-reader"},
            "rules": [{"nonResourceURLs": ["/metrics", "/logs/*"], "verbs": ["get"]}]}
    hotel.ok("apply -f -", stdin=yaml.safe_dump(role).encode())
    hotel.ok("create clusterrolebinding probe-metrics --clusterrole=metrics-reader --serviceaccount=aoi:probe")
    assert hotel.kubectl("auth can-i get /metrics", role="probe").stdout.strip() == "yes"
    assert hotel.kubectl("auth can-i get /logs/kube-apiserver.log", role="probe").stdout.strip() == "yes"
    assert hotel.kubectl("auth can-i get /debug", role="probe").stdout.strip() == "no"
    listed = hotel.ok("auth can-i --list", role="probe")
    assert "[/metrics]" in listed and "[/healthz]" in listed


# --- dry runs on subresources ---------------------------------------------------------------------------------
def pods_snapshot(served) -> str:
    """Return every pod's name, uid, node and deletion mark."""
    return served.ok("get pods -A --no-headers -o custom-columns=N:.metadata.name,U:.metadata.uid,"
                     "NODE:.spec.nodeName,DEL:.metadata.deletionTimestamp")


def test_server_dry_run_drain_leaves_every_pod_in_place(hotel):
    before, rv = pods_snapshot(hotel), hotel.twin.store.rv
    done = hotel.kubectl("drain kind-worker --dry-run=server --ignore-daemonsets --delete-emptydir-data")
    assert done.returncode == 0, done.stderr
    assert "(server dry run)" in done.stdout and "evicting pod" in done.stdout
    assert pods_snapshot(hotel) == before
    assert hotel.ok("get node kind-worker -o jsonpath={.spec.unschedulable}") == ""
    assert hotel.twin.store.rv == rv


@pytest.mark.parametrize("query, options", [("?dryRun=All", {}), ("", {"dryRun": ["All"]})])
def test_eviction_honours_both_dry_run_forms(hotel, query, options):
    pod = hotel.ok(f"get pods -n {NS} -l io.kompose.service=frontend -o name").split()[0].split("/")[1]
    eviction = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": pod, "namespace": NS},
                "deleteOptions": options}
    rv = hotel.twin.store.rv
    code, _, body = request(hotel, "POST", f"/api/v1/namespaces/{NS}/pods/{pod}/eviction{query}",
                            json.dumps(eviction).encode())
    assert code == 201 and body["status"] == "Success"
    assert hotel.twin.store.rv == rv and "deletionTimestamp" not in hotel.twin.get("pods", NS, pod)["metadata"]


def test_scale_status_and_token_dry_runs_change_nothing(hotel):
    rv, tokens = hotel.twin.store.rv, dict(hotel.twin.tokens)
    hotel.ok(f"scale deploy frontend -n {NS} --replicas=4 --dry-run=server")
    code, _, scale = request(hotel, "PUT", f"/apis/apps/v1/namespaces/{NS}/deployments/frontend/scale?dryRun=All",
                             json.dumps({"kind": "Scale", "apiVersion": "autoscaling/v1", "spec": {"replicas": 5},
                                         "metadata": {"name": "frontend", "namespace": NS}}).encode())
    assert code == 200 and scale["spec"]["replicas"] == 5
    hotel.ok(["patch", "deploy", "frontend", "-n", NS, "--subresource=status", "--type=merge", "--dry-run=server",
              "-p", '{"status":{"replicas":9}}'])
    code, _, issued = request(hotel, "POST", "/api/v1/namespaces/aoi/serviceaccounts/probe/token?dryRun=All",
                              b'{"kind":"TokenRequest","apiVersion":"authentication.k8s.io/v1","spec":{}}')
    assert code == 201 and issued["status"]["token"] == ""
    assert hotel.twin.store.rv == rv and hotel.twin.tokens == tokens
    assert hotel.twin.get("deployments", NS, "frontend")["spec"]["replicas"] == 1


def test_a_bad_dry_run_value_is_refused(hotel):
    code, _, body = request(hotel, "POST", f"{CM}?dryRun=Maybe", b'{"metadata":{"name":"a"}}')
    assert code == 422 and "supported values" in body["message"]
    code, _, body = request(hotel, "DELETE", f"{CM}/kube-root-ca.crt", b'{"dryRun":"All"}')
    assert code == 400 and "dryRun must be a list of strings" in body["message"]


def test_subresources_only_take_their_own_verbs(hotel):
    pod = hotel.ok(f"get pods -n {NS} -o name").split()[0].split("/")[1]
    code, _, body = request(hotel, "DELETE", f"/api/v1/namespaces/{NS}/pods/{pod}/status")
    assert code == 405 and hotel.twin.get("pods", NS, pod) is not None
    code, _, body = request(hotel, "GET", f"/api/v1/namespaces/{NS}/pods/{pod}/bogus")
    assert code == 404 and body["reason"] == "NotFound"


# --- malformed input answers a Status -------------------------------------------------------------------------
DEPLOY = f"/apis/apps/v1/namespaces/{NS}/deployments"
MALFORMED = [
    ("POST", CM, b'"x"', "application/json", 400),
    ("POST", CM, b'{"metadata":"x"}', "application/json", 400),
    ("POST", CM, b'{"metadata":{"name":"a","labels":{"x":1}}}', "application/json", 400),
    ("POST", DEPLOY, b'{"metadata":{"name":"d"},"spec":{"replicas":"many"}}', "application/json", 400),
    ("PUT", f"{DEPLOY}/frontend/scale", b'{"spec":"x"}', "application/json", 400),
    ("POST", CM, b"[1, 2]", "application/yaml", 400),
    ("POST", CM, b"\xff\xfe\x00", "application/json", 400),
    ("POST", CM, nested(1000), "application/json", 400),
    ("POST", CM, nested(1000, yaml_style=True), "application/yaml", 400),
    ("PATCH", f"{CM}/kube-root-ca.crt", nested(1000, yaml_style=True), "application/apply-patch+yaml", 400),
    ("PATCH", f"{CM}/kube-root-ca.crt", nested(5000), "application/merge-patch+json", 400),
    ("DELETE", f"{CM}/kube-root-ca.crt", b"not json", "application/json", 400),
    ("DELETE", f"{CM}/kube-root-ca.crt", b'{"gracePeriodSeconds":"soon"}', "application/json", 400),
    ("POST", f"/api/v1/namespaces/{NS}/pods/nope/eviction", b'{"deleteOptions":"x"}', "application/json", 400),
    ("GET", f"{CM}?watch=true&timeoutSeconds=abc", b"", "", 400),
    ("GET", f"/api/v1/namespaces/{NS}/pods/x/log?tailLines=ten", b"", "", 400),
    ("GET", f"{CM}?includeObject=Everything", b"", "", 400),
    ("PATCH", f"{CM}/kube-root-ca.crt", b"{}", "text/plain", 415),
    ("POST", f"/api/v1/namespaces/{NS}/pods", b'{"metadata":{"name":"p"},"spec":{"containers":[{"name":1}]}}',
     "application/json", 400),
    ("POST", f"/api/v1/namespaces/{NS}/services", b'{"metadata":{"name":"s"},"spec":{"ports":[{"port":"x"}]}}',
     "application/json", 400),
    ("POST", CM, b'{"kind":"Pod","apiVersion":"v1","metadata":{"name":"not-a-cm"}}', "application/json", 400),
    ("PATCH", f"{DEPLOY}/frontend", b'{"spec":{"template":{"spec":{"nodeSelector":"x"}}}}',
     "application/merge-patch+json", 400),
    ("PATCH", f"{DEPLOY}/frontend", b'[{"op":"replace","path":"/spec/replicas","value":"x"}]',
     "application/json-patch+json", 400),
]


@pytest.mark.parametrize("method, path, body, ctype, code", MALFORMED, ids=[f"{m[0]} {m[2][:24]!r} {m[1][-30:]}"
                                                                         for m in MALFORMED])
def test_malformed_input_gets_a_status(hotel, method, path, body, ctype, code):
    rv = hotel.twin.store.rv
    got, _, status = request(hotel, method, path, body, headers={"Content-Type": ctype} if ctype else {})
    assert got == code
    assert_status(status, code)
    assert hotel.twin.store.rv == rv


def test_null_spec_counts_as_absent_and_kind_defaults_to_the_path(hotel):
    code, _, obj = request(hotel, "POST", CM, b'{"metadata":{"name":"nulls"},"spec":null,"data":{"a":"b"}}')
    assert code == 201 and obj["data"] == {"a": "b"} and "spec" not in obj
    assert (obj["kind"], obj["apiVersion"]) == ("ConfigMap", "v1")


@pytest.mark.parametrize("length, code", [("-1", 400), ("abc", 400), ("1e3", 400), (str(4 * 1024 * 1024), 413)])
def test_bad_content_length_is_refused_without_reading(hotel, length, code):
    got, body = raw(hotel, head(hotel, "POST", CM, f"Content-Length: {length}\r\nContent-Type: application/json\r\n"))
    assert got == code
    assert_status(json.loads(body), code)


def test_oversized_chunked_body_is_refused(hotel):
    chunk = b"x" * (1024 * 1024)
    data = b"".join(b"100000\r\n" + chunk + b"\r\n" for _ in range(4)) + b"0\r\n\r\n"
    got, body = raw(hotel, head(hotel, "POST", CM, "Transfer-Encoding: chunked\r\n") + data)
    assert got == 413 and json.loads(body)["reason"] == "RequestEntityTooLarge"


def test_a_body_shorter_than_its_length_times_out(hotel):
    hotel.server.read_timeout = 0.3
    got, body = raw(hotel, head(hotel, "POST", CM, "Content-Length: 100\r\n") + b'{"metadata":', timeout=10)
    assert got == 408 and json.loads(body)["reason"] == "Timeout"
    assert request(hotel, "GET", "/version")[0] == 200


def test_a_silent_client_is_disconnected(hotel):
    hotel.server.read_timeout = 0.3
    url = urlsplit(hotel.server.url)
    with socket.create_connection((url.hostname, url.port), timeout=10) as sock:
        assert sock.recv(1) == b""  # no TLS handshake from us: the server gives up and closes


def test_unauthenticated_body_is_refused_before_it_is_read(hotel):
    start_rv = hotel.twin.store.rv
    data = b"POST " + CM.encode() + b" HTTP/1.1\r\nHost: twin\r\nContent-Length: 1000\r\n\r\n"
    got, body = raw(hotel, data, timeout=5)  # the promised 1000 bytes never come: only a 401 can end this
    assert got == 401 and json.loads(body)["reason"] == "Unauthorized"
    assert hotel.twin.store.rv == start_rv


def test_head_options_and_unknown_methods(cluster):
    code, headers, body = request(cluster, "GET", f"{CM}/kube-root-ca.crt")
    hcode, hheaders, hbody = request(cluster, "HEAD", f"{CM}/kube-root-ca.crt")
    assert (hcode, hbody) == (200, b"") and hheaders["Content-Length"] == headers["Content-Length"]
    assert request(cluster, "HEAD", f"{CM}/missing")[0] == 404
    code, _, body = request(cluster, "OPTIONS", CM)
    assert code == 405 and body["reason"] == "MethodNotAllowed"
    code, _, body = request(cluster, "OPTIONS", CM, role="probe")
    assert code == 403
    for method in ("TRACE", "BREW"):
        code, _, body = request(cluster, method, CM)
        assert code == 405 and body["kind"] == "Status"
    code, body = raw(cluster, b"GARBAGE\r\n\r\n")
    assert code == 400 and json.loads(body)["kind"] == "Status"


def test_the_connection_survives_an_error(cluster):
    url = urlsplit(cluster.server.url)
    conn = http.client.HTTPSConnection(url.hostname, url.port, context=tls(), timeout=10)
    auth = {"Authorization": f"Bearer {cluster.twin.credentials['admin']}"}
    conn.request("POST", CM, body=b'"x"', headers=auth)
    answer = conn.getresponse()
    assert answer.status == 400 and json.loads(answer.read())["kind"] == "Status"
    conn.request("GET", "/version", headers=auth)
    assert json.loads(conn.getresponse().read())["gitVersion"].startswith("v1.")
    conn.close()


# --- shutdown -------------------------------------------------------------------------------------------------
def test_stop_closes_the_listening_socket(settled_hotel, tmp_path):
    from aoi.twin.testing import Served

    served = Served(settled_hotel, tmp_path)
    assert request(served, "GET", "/version")[0] == 200
    served.close()
    url = urlsplit(served.server.url)
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection((url.hostname, url.port), timeout=2).close()
    assert not served.server._thread.is_alive()
