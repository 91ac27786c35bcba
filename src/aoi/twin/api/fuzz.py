"""A seeded fuzzer for the API server: random and malformed requests over raw TLS sockets, with a tally.

Standard library only, so a benchmark can load this file by path and fuzz an older twin with it.
"""

from __future__ import annotations

import json
import random
import socket
import ssl
from collections import Counter
from dataclasses import dataclass, field
from urllib.parse import urlsplit

METHODS = ("GET", "GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "TRACE", "BREW")
SHAPES = (b'"x"', b'{"metadata":"x"}', b'{"spec":null}', b"[]", b"42", b"null", b"not json", b"{", b"",
          b'{"metadata":{"name":7}}', b'{"metadata":{"labels":"x"}}', b'{"kind":"Status","metadata":{}}',
          b'{"spec":{"replicas":"many"}}', b'{"metadata":{"name":"fz"},"spec":{"containers":"x"}}',
          b"\xff\xfe\x00garbage", b"a: [1, 2", b"- 1\n- 2\n", b'{"dryRun":"All"}', b'{"deleteOptions":"x"}',
          b'[{"op":"replace","path":"/spec","value":1}]', b'[{"op":"explode"}]', b'{"metadata":{"name":null}}',
          b'{"metadata":{"name":"fz"},"spec":{"containers":[{"name":1,"image":[]}]}}',
          b'{"spec":{"template":{"spec":{"nodeSelector":"x"}}}}', b'{"kind":"Pod","metadata":{"name":"fz"}}',
          b'{"spec":null,"status":null}', b'{"kind":"Node","apiVersion":"v1","metadata":{"name":"kind-worker"}}',
          b'{"metadata":{"name":"\xed\xa0\x80"}}', b'{"metadata":{"name":"\\ud800"}}',
          b'metadata:\n  name: "a\\ud800"\n', b'metadata:\n  labels:\n    k: "\\udc80"\n',
          b'{"metadata":{"name":"a\\u0001b"}}', b'{"metadata":{"name":"fz","labels":{"k":"\xff"}}}')
# Object names that are no valid name at all: control characters, the UTF-8 bytes of a lone surrogate, invalid
# UTF-8, a percent-escaped surrogate (written as latin-1 characters, one per byte on the wire).
ODD_NAMES = ("a\x01b", "\xed\xa0\x80", "\xff\xfe", "caf\xe9", "%ED%A0%80", "\x7f", "\x00")
VERSIONS = ("HTTP/2.0", "HTTP/1.2", "HTTP/9.9", "HTTP/1", "HTTP/1.1x", "FTP/1.1")  # 505, or 400 when malformed
TYPES = ("application/json", "application/yaml", "application/merge-patch+json",
         "application/strategic-merge-patch+json", "application/json-patch+json", "application/apply-patch+yaml",
         "application/vnd.kubernetes.protobuf", "text/plain", "", "application/json; charset=utf-16")
QUERIES = ("watch=true&timeoutSeconds=abc", "watch=1&timeoutSeconds=-5", "watch=true&timeoutSeconds=0",
           "timeoutSeconds=1e99", "limit=-1", "limit=abc", "labelSelector=%%%", "labelSelector=a%20in%20(",
           "fieldSelector=spec.x==", "dryRun=All", "dryRun=bogus", "gracePeriodSeconds=x",
           "tailLines=x", "sinceSeconds=-1", "limitBytes=x", "container=nope",
           "resourceVersion=x&watch=true&timeoutSeconds=1",
           "includeObject=Bogus", "pretty=maybe", "propagationPolicy=Sideways", "%zz=%zz", "a=" + "b" * 3000)


@dataclass
class Tally:
    """What the fuzzed requests got back."""

    sent: int = 0
    statuses: Counter = field(default_factory=Counter)
    server_errors: int = 0
    dropped: int = 0
    hangs: int = 0
    failures: list = field(default_factory=list)  # (outcome, request line) of the first bad outcomes

    def record(self, outcome, line: str) -> None:
        """Count one outcome: an HTTP status code, 'dropped' or 'hang'."""
        self.sent += 1
        self.statuses[outcome] += 1
        error = isinstance(outcome, int) and outcome >= 500 and outcome != 505  # 505: an HTTP version refused
        bad = outcome in ("dropped", "hang") or error
        self.server_errors += error
        self.dropped += outcome == "dropped"
        self.hangs += outcome == "hang"
        if bad and len(self.failures) < 20:
            self.failures.append((outcome, line[:160]))

    def summary(self) -> str:
        """Return one line of figures."""
        return (f"requests={self.sent} 5xx_but_505={self.server_errors} dropped={self.dropped} hangs={self.hangs} "
                f"statuses={dict(sorted((str(k), v) for k, v in self.statuses.items()))}")


@dataclass
class Probe:
    """One request to send."""

    method: str
    target: str
    headers: dict
    body: bytes
    truncated: bool = False  # Content-Length claims more than is sent
    version: str = "HTTP/1.1"

    def line(self) -> str:
        """Return a one-line description for reports."""
        return f"{self.method} {self.target} {self.headers.get('Content-Type', '')} body={self.body[:40]!r}"


def nested(depth: int, yaml_style: bool = False) -> bytes:
    """Return a body nested `depth` levels deep (JSON objects, or YAML block mappings).

    Example:
        >>> nested(2)
        b'{"a":{"a":{}}}'
    """
    if yaml_style:
        return "".join(" " * i + "a:\n" for i in range(depth)).encode() + b" " * depth + b"x\n"
    return b'{"a":' * depth + b"{}" + b"}" * depth


def _body(rng: random.Random) -> bytes:
    """Return a body of a random wrong (or occasionally right) shape."""
    pick = rng.random()
    if pick < 0.55:
        return rng.choice(SHAPES)
    if pick < 0.65:
        deep = rng.choice((50, 200, 1000, 5000))
        return nested(deep, yaml_style=deep <= 1000 and rng.random() < 0.5)
    if pick < 0.67:
        return b'{"a":"' + b"x" * (4 * 1024 * 1024) + b'"}'  # over the API server's 3 MiB limit
    if pick < 0.75:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64)))
    if pick < 0.85:
        return json.dumps({"apiVersion": "v1", "kind": "ConfigMap",
                           "metadata": {"name": f"fz-{rng.randrange(10**6)}"}, "data": {"k": "v"}}).encode()
    return json.dumps({"kind": rng.choice(["Eviction", "DeleteOptions", "Scale", "SelfSubjectAccessReview"]),
                       "apiVersion": "v1", "metadata": {"name": "x"}, "spec": rng.choice([None, "x", {}, []]),
                       "deleteOptions": rng.choice([None, "x", {"dryRun": "All"}, {"dryRun": ["All"]}])}).encode()


def _target(rng: random.Random, paths: list[str]) -> str:
    """Return a request target: a served path, a garbage path, with a good or bad query."""
    if rng.random() < 0.15:
        path = rng.choice(["/", "//", "/api/v1/../../etc", "/apis/x/y/z/w/v/u/t", "/%00", "/api/v1/namespaces//pods",
                           "/api/v1/namespaces/x/pods/y/z/w", "/apis/apps/v1/deployments/x/bogus", "*",
                           "/api/v1/pods/" + "a" * 300, "/openapi/v3/apis/none/v9", "/version/extra"])
    else:
        path = rng.choice(paths)
    if rng.random() < 0.05:
        path = path.rsplit("/", 1)[0] + "/" + rng.choice(ODD_NAMES)
    if rng.random() < 0.5:
        path += "?" + rng.choice(QUERIES)
    return path


def probes(rng: random.Random, paths: list[str], tokens: list[str], count: int):
    """Yield `count` random requests."""
    for _ in range(count):
        method = rng.choice(METHODS)
        headers = {}
        token = rng.choice(tokens + ["", "garbage", "Basic abc"]) if rng.random() < 0.2 else rng.choice(tokens)
        if token:
            headers["Authorization"] = token if " " in token else f"Bearer {token}"
        body = _body(rng) if method in ("POST", "PUT", "PATCH", "DELETE") or rng.random() < 0.05 else b""
        if rng.random() < 0.8:
            headers["Content-Type"] = rng.choice(TYPES)
        if rng.random() < 0.3:
            headers["Accept"] = rng.choice(["application/json;as=Table;v=v1;g=meta.k8s.io", "application/yaml",
                                            "*/*", "application/vnd.kubernetes.protobuf"])
        probe = Probe(method, _target(rng, paths), headers, body)
        if rng.random() < 0.02:
            probe.version = rng.choice(VERSIONS)
        _bend_length(rng, probe)
        yield probe


def _bend_length(rng: random.Random, probe: Probe) -> None:
    """Sometimes lie about the body's length: negative, not a number, huge, or more than is sent."""
    pick = rng.random()
    if pick < 0.04:
        probe.headers["Content-Length"] = rng.choice(["-1", "abc", "1e3", "99999999999", " 5", "0x10"])
    elif pick < 0.08 and probe.body:
        probe.headers["Content-Length"] = str(len(probe.body) + rng.randrange(1, 100))
        probe.truncated = True
    elif pick < 0.09:
        probe.headers["Transfer-Encoding"] = "chunked"
        probe.body = f"{len(probe.body):x}\r\n".encode() + probe.body + b"\r\n0\r\n\r\n"
    else:
        probe.headers["Content-Length"] = str(len(probe.body))


def _encode(probe: Probe, host: str) -> bytes:
    """Return the request's bytes on the wire."""
    head = [f"{probe.method} {probe.target} {probe.version}", f"Host: {host}", "Connection: close"]
    head += [f"{k}: {v}" for k, v in probe.headers.items()]
    return ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + probe.body


def _read_head(conn) -> int | None:
    """Read a response's status line and headers; return the status code, None when the server closed first."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return None
        data += chunk
    return int(data.split(b" ", 2)[1])


def send(host: str, port: int, probe: Probe, context: ssl.SSLContext, timeout: float):
    """Send one request; return its status code, 'dropped' (closed with no response) or 'hang' (timed out)."""
    try:
        with (socket.create_connection((host, port), timeout=timeout) as raw,
              context.wrap_socket(raw, server_hostname=host) as conn):
            try:
                conn.sendall(_encode(probe, f"{host}:{port}"))
            except (ConnectionError, ssl.SSLError):
                pass  # the server may answer (413, 401) before taking the whole body: read that answer
            code = _read_head(conn)
    except TimeoutError:
        return "hang"
    except (ConnectionError, ssl.SSLError, OSError):
        return "dropped"
    return "dropped" if code is None else code


def run(url: str, tokens: list[str], paths: list[str], count: int = 2500, seed: int = 0,
        timeout: float = 5.0) -> Tally:
    """Fuzz the API server at url with `count` seeded random requests and return the tally.

    Example:
        >>> run(served.server.url, [token], ["/api/v1/pods"], count=10).dropped  # doctest: +SKIP
        0
    """
    parts = urlsplit(url)
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE  # a loopback twin with a self-signed cert
    tally = Tally()
    for probe in probes(random.Random(seed), paths, tokens, count):
        tally.record(send(parts.hostname, parts.port, probe, context, timeout), probe.line())
    return tally


def served_paths(resources, namespaces: list[str], names: list[str]) -> list[str]:
    """Return collection, object and subresource paths for served resources (tuples of group, version, plural,
    namespaced, subresources)."""
    paths = []
    for group, version, plural, namespaced, subs in resources:
        base = f"/api/{version}" if not group else f"/apis/{group}/{version}"
        scopes = [f"{base}/namespaces/{ns}/{plural}" for ns in namespaces] if namespaced else [f"{base}/{plural}"]
        for scope in scopes:
            paths.append(scope)
            for name in names:
                paths.append(f"{scope}/{name}")
                paths += [f"{scope}/{name}/{sub}" for sub in subs]
    return paths
