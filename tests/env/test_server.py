"""The HTTP environment server, driven through its client against a real uvicorn server on a free port."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
import uvicorn

from aoi.env import ENV_VERSION
from aoi.env.client import EnvClient, EnvServerError
from aoi.env.server import bind, create_app
from aoi.env.sessions import SessionPool, TooManySessions
from aoi.env.tokens import read_token, write_token
from aoi.problems import solutions

TOKEN = "test-token-" + "x" * 16
PORT_ID = "k8s_target_port-misconfig-detection-1"
NOOP_ID = "noop_detection_hotel_reservation-1"


@pytest.fixture(scope="module")
def url():
    """Serve a fresh app on 127.0.0.1 in a background thread; stop it after the module."""
    sock = bind(0)
    server = uvicorn.Server(uvicorn.Config(create_app(TOKEN, max_sessions=8), log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    server.should_exit = True
    thread.join(10)
    sock.close()


@pytest.fixture
def client(url):
    with EnvClient(url, TOKEN) as c:
        yield c


def in_parallel(*calls):
    """Run calls in threads at once; return their results in order."""
    results = [None] * len(calls)
    threads = [threading.Thread(target=lambda i=i, f=f: results.__setitem__(i, f())) for i, f in enumerate(calls)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def status_of(call) -> EnvServerError:
    with pytest.raises(EnvServerError) as err:
        call()
    return err.value


def test_every_route_but_health_needs_the_token(url):
    assert httpx.get(f"{url}/health").json()["status"] == "ok"
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}):
        r = httpx.get(f"{url}/problems", headers=headers)
        assert r.status_code == 401 and "bearer token" in r.json()["error"]
    with EnvClient(url, "wrong-token") as bad:
        assert status_of(lambda: bad.make(PORT_ID).reset()).status == 401
        assert status_of(lambda: bad.sessions()).status == 401


def test_no_cors_and_the_schema_needs_the_token(url):
    r = httpx.options(f"{url}/problems", headers={"Origin": "http://evil.example",
                                                   "Access-Control-Request-Method": "GET"})
    assert "access-control-allow-origin" not in r.headers
    refused = httpx.get(f"{url}/openapi.json")
    assert refused.status_code == 401 and "bearer token" in refused.json()["error"]
    spec = httpx.get(f"{url}/openapi.json", headers={"Authorization": f"Bearer {TOKEN}"}).json()
    assert spec["info"]["title"] == "AOI environment server" and "/sessions/{session_id}/step" in spec["paths"]
    assert "/openapi.json" not in spec["paths"] and "/health" in spec["paths"]
    for page in ("/docs", "/redoc", "/docs/oauth2-redirect"):  # browsers cannot send the token: no pages
        for headers in ({}, {"Authorization": f"Bearer {TOKEN}"}):
            assert httpx.get(f"{url}{page}", headers=headers).status_code == 404


def test_problem_listing_and_filters(client):
    everything = client.problems()
    assert len(everything) == 89
    assert set(everything[0]) == {"id", "task_type", "app", "namespace", "family", "target", "backend",
                                  "valid_targets"}
    hotel = client.problems(task_type="mitigation", app="hotel-reservation")
    assert hotel and {(p["task_type"], p["app"]) for p in hotel} == {("mitigation", "hotel-reservation")}


def test_two_concurrent_sessions_reach_their_own_verdicts(client):
    port, noop = client.make(PORT_ID), client.make(NOOP_ID)
    (task, info), _ = in_parallel(port.reset, noop.reset)
    assert port.session_id != noop.session_id and "test-social-network" in task
    assert info["env_version"] == ENV_VERSION and info["max_steps"] == 30 and info["task_type"] == "detection"
    looks = in_parallel(*(lambda r=r: r.step(solutions.shell(f"kubectl get pods -n {r.problem.namespace}"))
                          for r in (port, noop)))
    for obs, reward, terminated, truncated, info in looks:
        assert "NAME" in obs and (reward, terminated, truncated, info["steps"]) == (0.0, False, False, 1)
    verdicts = in_parallel(lambda: port.submit("Yes"), lambda: noop.submit("No"))
    for remote, (_, reward, terminated, _, info) in zip((port, noop), verdicts):
        assert terminated and reward == 1.0 and info["results"]["Detection Accuracy"] == "Correct"
        assert remote.done and remote.status()["results"]["strict_success"] is True
        err = status_of(lambda remote=remote: remote.step(solutions.shell("kubectl get pods -A")))
        assert err.status == 409 and "new session" in err.message
        remote.close()


def test_refusals(client):
    def create(problem_id, target=None):
        return lambda: client.request("POST", "/sessions", json={"problem_id": problem_id, "target": target})

    assert "did you mean" in status_of(create("k8s_target_port-misconfig-detection-9")).message
    assert "choose one of" in status_of(create(PORT_ID, target="no-such-service")).message
    flower = status_of(create("flower_node_stop-detection"))
    assert flower.status == 422 and "aiopslab" in flower.message
    with pytest.raises(ValueError, match="did you mean"):  # the client resolves the problem before any request
        client.make("k8s_target_port-misconfig-detection-9")
    with pytest.raises(RuntimeError, match="reset"):
        client.make(PORT_ID).step(solutions.shell("kubectl get pods"))
    assert status_of(lambda: client.request("POST", "/sessions", json={"seed": 1})).status == 422
    for method, suffix in (("GET", ""), ("POST", "/step"), ("POST", "/submit"), ("GET", "/trace"), ("DELETE", "")):
        err = status_of(lambda method=method, suffix=suffix: client.request(method, f"/sessions/nope{suffix}",
                                                                            json={"action": "x"}))
        assert err.status == 404 and "POST /sessions" in err.message


def test_roles_trace_and_delete(client):
    remote = client.make(PORT_ID)
    remote.reset()
    ns = remote.problem.namespace
    obs, *_ = remote.step(solutions.shell(f"kubectl delete pod --all -n {ns}"), role="probe")
    assert "Forbidden" in obs
    obs, _, terminated, _, _ = remote.submit("Yes", role="probe")
    assert not terminated and "cannot submit" in obs
    assert status_of(lambda: remote.step(solutions.shell("kubectl get pods"), role="root")).status == 422
    status = remote.status()
    assert (status["steps"], status["done"], status["results"], status["trace_length"]) == (2, False, None, 4)
    assert [e["role"] for e in remote.trace()] == ["assistant", "env"] * 2
    assert remote.session_id in [s["session_id"] for s in client.sessions()]
    remote.close()
    assert status_of(remote.status).status == 404
    assert remote.session_id not in [s["session_id"] for s in client.sessions()]
    remote.close()  # closing twice is harmless


def test_pool_caps_sessions_and_closes_idle_ones():
    pool = SessionPool(max_sessions=1, idle_timeout=0.2)
    session = pool.create(NOOP_ID)
    with pytest.raises(TooManySessions, match="max-sessions"):
        pool.create(NOOP_ID)
    time.sleep(0.3)
    assert pool.reap() == [session.id] and session.closed and len(pool) == 0


def test_token_files_are_private(tmp_path):
    path = write_token(tmp_path / "dir" / "token", "t" * 32)
    assert path.stat().st_mode & 0o777 == 0o600 and read_token(path) == "t" * 32
    path.chmod(0o644)
    with pytest.raises(ValueError, match="chmod 600"):
        read_token(path)


def test_serve_prints_where_the_token_is_and_never_the_token():
    code = "from aoi.env.server import serve; serve(0)"
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        url, token_file = re.search(r"at (http://127\.0\.0\.1:\d+) .*token in (\S+)", line).groups()
        token = read_token(Path(token_file))
        assert token not in line and oct(os.stat(token_file).st_mode & 0o777) == "0o600"
        with EnvClient.from_token_file(url, token_file) as c:
            assert c.health()["active_sessions"] == 0 and len(c.problems(task_type="analysis")) > 0
    finally:
        proc.send_signal(signal.SIGTERM)
        rest = proc.communicate(timeout=10)[0]
    assert token not in rest and not Path(token_file).exists()
