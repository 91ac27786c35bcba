"""serve-env's remote callers meet the same enforcement point as env.step: the probe's policy, the admin baseline."""

from __future__ import annotations

import threading
import time

import pytest
import uvicorn

from aoi.env.client import EnvClient
from aoi.env.server import bind, create_app
from aoi.problems import solutions

TOKEN = "policy-token-" + "y" * 16
NS = "test-social-network"


@pytest.fixture(scope="module")
def remote():
    """Serve the environment on 127.0.0.1 and open one session."""
    sock = bind(0)
    server = uvicorn.Server(uvicorn.Config(create_app(TOKEN, max_sessions=2), log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    with EnvClient(f"http://127.0.0.1:{sock.getsockname()[1]}", TOKEN) as client:
        session = client.make("k8s_target_port-misconfig-localization-1", max_steps=50)
        session.reset()
        yield session
        session.close()
    server.should_exit = True
    thread.join(10)
    sock.close()


@pytest.mark.parametrize("role, command", [
    ("probe", f"kubectl -v=6 get pods -n {NS}"),
    ("probe", f"kubectl --kubeconfig /tmp/admin.yaml delete pod -l app=user-service -n {NS}"),
    ("probe", f"kubectl create cm x --from-file=/etc/passwd --dry-run=client -o yaml -n {NS}"),
    ("probe", "kubectl config set-credentials aoi-probe --token=abc"),
    ("probe", f"kubectl -n {NS} edit deploy user-service"),
    ("probe", f"kubectl delete pod -l app=user-service -n {NS}"),
    (None, f"kubectl get pods -n {NS} -o go-template-file=/etc/passwd"),
    (None, "kubectl cluster-info dump --output-directory /tmp/aoi-dump"),
    (None, f"kubectl --token=abc get pods -n {NS}"),
])
def test_remote_callers_are_refused(remote, role, command):
    observation = remote.step(solutions.shell(command), role=role)[0]
    assert observation.startswith("Error: Forbidden by AOI's command policy"), observation


def test_remote_probe_still_reads(remote):
    assert "user-service" in remote.step(solutions.shell(f"kubectl get deploy -n {NS}"), role="probe")[0]
