"""The cluster backend against a served twin in wall-clock mode: the real-cluster code path end to end."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from aoi.agents.runtime import run_episode
from aoi.config import load_config
from aoi.env import make
from aoi.env.cluster_access import ClusterError
from aoi.env.cluster_backend import recover_options
from aoi.env.twin_backend import TwinBackend, sim_budget
from aoi.faults import get as get_injector
from aoi.models.registry import load_model
from aoi.problems.oracles import strict_check
from aoi.problems.registry import make as make_problem
from aoi.problems.registry import problem_ids
from aoi.protocols import Backend
from aoi.twin import build_twin
from aoi.twin.core.clock import SimClock
from aoi.twin.factory import WARMUP_SECONDS
from aoi.twin.serving import Ticker
from aoi.twin.testing import Served

NS = "test-hotel-reservation"
FIX = ("kubectl patch deploy profile -n test-hotel-reservation --type json -p "
       "'[{\"op\":\"replace\",\"path\":\"/spec/template/spec/containers/0/command\",\"value\":[\"profile\"]}]'")


@pytest.fixture
def cluster(tmp_path):
    """HotelReservation served over HTTPS and following the wall clock, like a real cluster."""
    twin = build_twin(["hotel-reservation"], seed=0, clock=SimClock(time.time() - WARMUP_SECONDS))
    served = Served(twin, tmp_path)
    ticker = Ticker(twin).start()
    yield served
    ticker.stop()
    served.close()


def shell(command: str) -> str:
    return '```\nexec_shell("' + command.replace('"', '\\"') + '")\n```'


def cluster_env(served, problem_id: str, **options):
    return make(problem_id, backend="cluster", kubeconfig=served.kubeconfigs["admin"], after_inject=0.2, **options)


def command_of(served) -> str:
    path = "jsonpath={.spec.template.spec.containers[0].command}"
    return served.ok(["get", "deploy", "profile", "-n", NS, "-o", path])


def test_an_episode_injects_acts_as_each_role_and_is_judged(cluster):
    env = cluster_env(cluster, "wrong_bin_usage-mitigation-1")
    try:
        env.reset()
        assert isinstance(env.backend, Backend)  # the same protocol as the twin's
        assert command_of(cluster) == '["geo"]'  # injected by AOI's injector through the admin kubeconfig
        assert "profile-" in env.step(shell(f"kubectl get pods -n {NS}"), role="probe")[0]
        refused = env.step(shell(f"kubectl delete pod -l io.kompose.service=profile -n {NS}"), role="probe")[0]
        assert "Forbidden by AOI's command policy (probe role)" in refused  # the policy, then RBAC (below), say no
        assert env.backend.runner("probe").run(["auth", "can-i", "delete", "pods", "-n", NS]).stdout.strip() == "no"
        assert "deployment.apps/profile patched" in env.step(shell(FIX), role="executor")[0]
        _, _, terminated, _, info = env.step("```\nsubmit()\n```")
        assert terminated and info["results"]["success"] is True and info["results"]["strict_success"] is True
        assert env.backend.name == "cluster" and info["results"]["steps"] == 4
    finally:
        env.close()


def test_close_recovers_the_fault(cluster):
    env = cluster_env(cluster, "wrong_bin_usage-detection-1")
    env.reset()
    assert command_of(cluster) == '["geo"]'
    env.close()
    assert command_of(cluster) == '["profile"]'
    assert cluster.kubectl("get job wrk2-job -n default").returncode != 0  # the workload is gone too


def test_the_expert_detects_on_the_cluster(cluster):
    config = load_config(overrides={"model": "expert"}, environ={})
    env = cluster_env(cluster, "wrong_bin_usage-localization-1")
    try:
        traj = run_episode(env, config, dict.fromkeys(("observer", "probe", "executor", "compressor"),
                                                      load_model("expert")))
    finally:
        env.close()
    assert traj.backend == "cluster" and traj.results["success"] is True and traj.error is None


def test_a_missing_namespace_says_how_to_deploy(cluster):
    env = cluster_env(cluster, "scale_pod_zero_social_net-detection-1")
    with pytest.raises(ClusterError, match=r"namespace test-social-network does not exist.*kubectl apply -f .*"
                                           r"social-network/manifests"):
        env.reset()
    env.close()


@pytest.mark.parametrize("delete, message", [
    (["delete", "serviceaccount", "probe", "-n", "aoi"], "aoi/probe does not exist: apply AOI's identities"),
    (["delete", "clusterrolebinding", "aoi-probe"], "the probe identity cannot get pods in test-hotel-reservation")])
def test_missing_identities_say_how_to_apply_them(cluster, delete, message):
    cluster.ok(delete)
    env = cluster_env(cluster, "wrong_bin_usage-detection-1")
    with pytest.raises(ClusterError, match=message) as error:
        env.reset()
    assert "aoi rbac --namespace test-hotel-reservation | kubectl apply -f -" in str(error.value)
    env.close()
    assert command_of(cluster) == '["profile"]'  # nothing was injected


def test_make_checks_the_backend_options(tmp_path):
    with pytest.raises(ValueError, match="needs kubeconfig"):
        make("wrong_bin_usage-detection-1", backend="cluster")
    with pytest.raises(ValueError, match="does not exist"):
        make("wrong_bin_usage-detection-1", backend="cluster", kubeconfig=tmp_path / "nope.yaml")
    with pytest.raises(ValueError, match="takes no options"):
        make("wrong_bin_usage-detection-1", kubeconfig=tmp_path / "x.yaml")
    with pytest.raises(ValueError, match="'twin' or 'cluster'"):
        make("wrong_bin_usage-detection-1", backend="kind")


class FakeObservability(BaseHTTPRequestHandler):
    """Prometheus' query_range and Jaeger's services/traces APIs with canned answers."""

    pod = ""

    def do_GET(self):  # http.server's naming
        url, query = urlsplit(self.path), parse_qs(urlsplit(self.path).query)
        if url.path == "/api/v1/query_range":
            metric = query["query"][0].split("{")[0]
            labels = {"pod": self.pod, "instance": "kubernetes.default.svc:443", "interface": "eth0"}
            series = [{"metric": labels, "values": [[1700000015, "2.5"], [1700000000, "1.23456"]]},
                      {"metric": {**labels, "pod": "elsewhere-1"}, "values": [[1700000000, "9"]]}]
            body = {"status": "success", "data": {"resultType": "matrix", "result":
                    series if metric in ("container_threads", "container_network_receive_bytes_total") else []}}
        elif url.path == "/api/services":
            body = {"data": ["frontend", "jaeger-all-in-one"]}
        else:
            spans = [{"traceID": "t1", "spanID": "a", "operationName": "GET /hotels", "processID": "p1",
                      "startTime": 10, "duration": 30, "references": [], "tags": [{"key": "http.status_code",
                                                                                    "value": 500}]},
                     {"traceID": "t1", "spanID": "b", "operationName": "Nearby", "processID": "p2", "startTime": 12,
                      "duration": 8, "references": [{"refType": "CHILD_OF", "spanID": "a"}],
                      "tags": [{"key": "error", "value": True}]}]
            body = {"data": [{"traceID": "t1", "spans": spans, "processes": {"p1": {"serviceName": "frontend"},
                                                                              "p2": {"serviceName": "geo"}}}]}
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture
def observability(cluster):
    FakeObservability.pod = cluster.ok(["get", "pods", "-n", NS, "-l", "io.kompose.service=geo", "-o",
                                        "jsonpath={.items[0].metadata.name}"])
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeObservability)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()


def test_metrics_and_traces_come_from_prometheus_and_jaeger(cluster, observability):
    env = cluster_env(cluster, "noop_detection_hotel_reservation-1", prometheus_url=observability,
                      jaeger_url=observability)
    try:
        env.reset()
        exported = env.step(f"```\nget_metrics('{NS}', 5)\n```", role="probe")[0]
        assert "Metrics data exported to directory:" in exported and "kpi_container_threads.csv" in exported
        folder = exported.split("directory: ")[1].split("\n")[0]
        table = env.step(f"```\nread_metrics('{folder}/container/kpi_container_threads.csv')\n```")[0]
        assert f"kubernetes.default.svc:443.{FakeObservability.pod}" in table and "elsewhere" not in table
        assert table.splitlines()[1].split()[0] == "1700000000" and "1.235" in table
        network = env.step(f"```\nread_metrics('{folder}/container/kpi_container_network_receive_bytes_total.csv')"
                           "\n```")[0]
        assert "container_network_receive_bytes_total.eth0" in network
        traces = env.step(f"```\nget_traces('{NS}', 5)\n```")[0]
        path = traces.split("exported to: ")[1].split("\n")[0]
        rows = Path(path).read_text().splitlines()
        assert rows[0] == "trace_id,span_id,parent_span,service_name,operation_name,start_time,duration,has_error," \
                          "response"
        assert rows[1:] == ["t1,a,ROOT,frontend,GET /hotels,10,30,False,500", "t1,b,a,geo,Nearby,12,8,True,Unknown"]
    finally:
        env.close()


def test_telemetry_without_urls_says_what_to_configure(cluster):
    env = cluster_env(cluster, "noop_detection_hotel_reservation-1")
    try:
        env.reset()
        assert "no Prometheus URL configured" in env.step(f"```\nget_metrics('{NS}')\n```")[0]
        assert "--jaeger-url" in env.step(f"```\nget_traces('{NS}')\n```")[0]
    finally:
        env.close()


def test_aoi_run_takes_the_cluster_flags(cluster, tmp_path):
    import typer
    from typer.testing import CliRunner

    from aoi.agents.cli import run

    app = typer.Typer()
    app.command()(run)
    env = {"AOI_STORE": str(tmp_path / "t.db"), "AOI_AUDIT_LOG": str(tmp_path / "audit.jsonl")}
    args = ["--model", "expert", "--backend", "cluster", "--kubeconfig", str(cluster.kubeconfigs["admin"])]
    result = CliRunner(env=env).invoke(app, ["wrong_bin_usage-detection-1", *args])
    assert result.exit_code == 0, result.output
    assert "Detection Accuracy" in result.output and "Correct" in result.output
    missing = CliRunner(env=env).invoke(app, ["scale_pod_zero_social_net-detection-1", *args])
    assert missing.exit_code == 2 and "does not exist: deploy social-network" in missing.output


FAMILIES = sorted({make_problem(pid).family: pid for pid in reversed(problem_ids())
                   if make_problem(pid).backend == "twin" and make_problem(pid).fault.mechanism
                   not in ("noop", "pod_chaos", "network_chaos")}.values())


@pytest.mark.parametrize("problem_id", FAMILIES)
def test_recover_options_undo_every_fault(problem_id, tmp_path):
    """What close() passes to recover() restores the healthy state the strict oracle checks (on the twin's clock)."""
    problem = make_problem(problem_id)
    backend = TwinBackend(tmp_path)
    backend.start(problem, 0)
    try:
        cluster = backend.kube  # the episode's admin client, which the env's verdicts use too
        assert not strict_check(problem, cluster).ok
        fault = problem.fault
        with sim_budget(backend.twin, 600):
            get_injector(fault.mechanism).recover(backend.kube, fault.namespace, fault.target,
                                                  **recover_options(fault))
        backend.settle()
        assert strict_check(problem, cluster).ok, strict_check(problem, cluster).reasons
    finally:
        backend.close()


def test_settling_waits_for_a_patched_deployment_to_roll_out_not_only_for_ready_pods(monkeypatch):
    import types

    from aoi.env import cluster_backend

    ready = {"metadata": {"name": "profile-1"}, "status": {"phase": "Running",
                                                           "conditions": [{"type": "Ready", "status": "True"}]}}
    seen = {"old": {"observedGeneration": 1, "updatedReplicas": 0, "availableReplicas": 1, "replicas": 1},
            "new": {"observedGeneration": 2, "updatedReplicas": 1, "availableReplicas": 1, "replicas": 1}}
    answers = iter(["old", "old", "new"])  # the controller has not seen the patch for two polls

    class Kube:
        polls = 0

        def list(self, kind, namespace):
            if kind == "pods":
                return [ready]  # the old pod stays Ready until the new one replaces it
            Kube.polls += 1
            return [{"metadata": {"generation": 2}, "spec": {"replicas": 1}, "status": seen[next(answers)]}]

    monkeypatch.setattr(cluster_backend, "POLL", 0.0)
    backend = types.SimpleNamespace(kube=Kube(), problem=types.SimpleNamespace(namespace=NS), settle_limit=5.0)
    cluster_backend.ClusterBackend.settle(backend)
    assert Kube.polls == 3
