"""Per fault family: what kubectl, logs, traces and metrics show right after injection (nothing is scripted)."""

from __future__ import annotations

import csv
import re

import pytest

from aoi.env import make
from aoi.problems import solutions


@pytest.fixture
def episode():
    """Open an episode for a problem id; closed at the end of the test."""
    opened = []

    def open_(problem_id: str):
        env = make(problem_id)
        env.reset()
        opened.append(env)
        return env

    yield open_
    for env in opened:
        env.close()


def run(env, command: str) -> str:
    """Run exec_shell and return the observation without the trailing prompt."""
    return env.step(solutions.shell(command))[0].rsplit("\nPlease take the next action", 1)[0]


def call(env, api: str, *args) -> str:
    return env.step(solutions.action(api, *args))[0].rsplit("\nPlease take the next action", 1)[0]


def trace_rows(env, namespace: str) -> list[dict]:
    path = call(env, "get_traces", namespace, 5).split("exported to: ")[1].strip()
    with open(path) as handle:
        return list(csv.DictReader(handle))


def metric_rows(env, namespace: str, metric: str) -> list[dict]:
    folder = call(env, "get_metrics", namespace, 5).split("directory: ")[1].split("\n")[0]
    with open(f"{folder}/container/kpi_{metric}.csv") as handle:
        return list(csv.DictReader(handle))


def test_target_port_refuses_callers(episode):
    env = episode("k8s_target_port-misconfig-detection-1")
    port = "kubectl get svc user-service -n test-social-network -o jsonpath={.spec.ports[0].targetPort}"
    assert run(env, port) == "9999"
    assert "1/1" in run(env, "kubectl get pods -n test-social-network -l app=user-service")
    logs = call(env, "get_logs", "test-social-network", "compose-post-service")
    assert "<Host: user-service Port: 9090>: Connection refused" in logs
    assert "Non-2xx or 3xx responses" in call(env, "get_logs", "default", "wrk2-job")


def test_mongodb_tls_keeps_url_shorten_retrying(episode):
    env = episode("auth_miss_mongodb-detection-1")
    assert "requireTLS" in run(env, "kubectl get configmap url-shorten-mongodb -n test-social-network -o yaml")
    logs = call(env, "get_logs", "test-social-network", "url-shorten-service")
    assert "Failed to create mongodb index, try again" in logs
    assert "Running" in run(env, "kubectl get pods -n test-social-network -l app=url-shorten-service")


@pytest.mark.parametrize("problem_id, message", [
    ("revoke_auth_mongodb-detection-1", "not authorized on geo-db"),
    ("user_unregistered_mongodb-detection-2", "Authentication failed"),
    ("misconfig_app_hotel_res-detection-1", "no reachable servers")])
def test_broken_database_access_crash_loops_the_client(episode, problem_id, message):
    env = episode(problem_id)
    service = "rate" if problem_id.endswith("-2") else "geo"
    pods = run(env, f"kubectl get pods -n test-hotel-reservation -l io.kompose.service={service}")
    assert re.search(r"CrashLoopBackOff|Error|Running\s+[1-9]", pods), pods
    name = next(line.split()[0] for line in pods.splitlines()[1:] if line.split()[3] != "0")
    logs = run(env, f"kubectl logs {name} -n test-hotel-reservation --previous")
    assert message in logs


def test_scale_to_zero_leaves_no_pods(episode):
    env = episode("scale_pod_zero_social_net-detection-1")
    assert "0/0" in run(env, "kubectl get deploy user-service -n test-social-network")
    assert "user-service" not in run(env, "kubectl get pods -n test-social-network")


def test_missing_node_leaves_the_pod_pending(episode):
    env = episode("assign_to_non_existent_node_social_net-detection-1")
    assert "Pending" in run(env, "kubectl get pods -n test-social-network -l app=user-service")
    events = run(env, "kubectl get events -n test-social-network --field-selector reason=FailedScheduling")
    assert "didn't match Pod's node affinity/selector" in events


def test_container_kill_restarts_once(episode):
    env = episode("container_kill-detection")
    assert "container-kill" in run(env, "kubectl get podchaos -n test-hotel-reservation -o name")
    out = run(env, "kubectl get pods -n test-hotel-reservation -l io.kompose.service=geo")
    # one restart at deploy (MongoDB came up after geo), one from the kill
    assert re.search(r"\s2 \(\d+s ago\)", out), out


def test_pod_failure_makes_the_pod_unready(episode):
    env = episode("pod_failure_hotel_res-detection-1")
    assert "0/1" in run(env, "kubectl get pods -n test-hotel-reservation -l io.kompose.service=user")


def test_network_loss_drops_packets(episode):
    env = episode("network_loss_hotel_res-detection-1")
    assert "loss" in run(env, "kubectl get networkchaos -n test-hotel-reservation")
    rows = metric_rows(env, "test-hotel-reservation", "container_network_receive_packets_dropped_total")
    dropped = {r["cmdb_id"].rsplit(".", 1)[1].split("-")[0]: float(r["value"]) for r in rows}
    assert dropped["user"] > 0 and dropped["geo"] == 0


def test_flag_failures_show_in_traces(episode):
    env = episode("astronomy_shop_payment_service_failure-detection-1")
    rows = trace_rows(env, "astronomy-shop")
    failing = {(r["service_name"], r["operation_name"]) for r in rows if r["has_error"] == "True"}
    assert ("payment", "oteldemo.PaymentService/Charge") in failing


def test_high_cpu_flag_shows_in_metrics(episode):
    env = episode("astronomy_shop_ad_service_high_cpu-detection-1")
    top = run(env, "kubectl top pods -n astronomy-shop")
    cpu = {line.split()[0].split("-")[0]: int(line.split()[1].rstrip("m")) for line in top.splitlines()[1:]}
    assert cpu["ad"] > 500 > max(v for k, v in cpu.items() if k != "ad")


def test_redeploy_without_pv_leaves_claims_pending(episode):
    env = episode("redeploy_without_PV-detection-1")
    assert "Pending" in run(env, "kubectl get pvc geo-pvc -n test-hotel-reservation")
    assert "Released" in run(env, "kubectl get pv geo-pv")


def test_wrong_binary_runs_geo_in_the_profile_pod(episode):
    env = episode("wrong_bin_usage-detection-1")
    assert "1/1" in run(env, "kubectl get pods -n test-hotel-reservation -l io.kompose.service=profile")
    logs = call(env, "get_logs", "test-hotel-reservation", "profile")
    assert "Read database URL: mongodb-geo:27017" in logs


def test_noop_shows_a_healthy_app(episode):
    env = episode("noop_detection_social_network-1")
    pods = run(env, "kubectl get pods -n test-social-network --no-headers")
    assert all("1/1" in line and "Running" in line for line in pods.splitlines())
