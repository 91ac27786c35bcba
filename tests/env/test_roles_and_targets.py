"""Role credentials through env.step, parametric targets, and the step protocol's edge cases."""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest

from aoi.env import make
from aoi.problems import solutions

NS = "test-social-network"


@pytest.fixture(scope="module")
def env():
    episode = make("k8s_target_port-misconfig-localization-1", max_steps=50)
    episode.reset()
    yield episode
    episode.close()


def shell(env, command: str, role=None) -> str:
    return env.step(solutions.shell(command), role=role)[0]


@pytest.mark.parametrize("command", [
    f"kubectl delete pod -l app=user-service -n {NS}",
    f"kubectl scale deployment user-service --replicas=3 -n {NS}",
    f"kubectl patch svc user-service -n {NS} -p '{{\"metadata\":{{\"labels\":{{\"x\":\"y\"}}}}}}'",
    f"kubectl label deployment user-service x=y -n {NS}",
    f"kubectl rollout restart deployment/user-service -n {NS}",
    f"kubectl set image deployment/user-service user-service=nginx -n {NS}",
    f"kubectl exec deploy/user-service -n {NS} -- ls",
    f"kubectl get secrets -n {NS}",
    f"kubectl create configmap x -n {NS} --from-literal=a=b"])
def test_probe_is_refused_every_write_exec_and_secret_read(env, command):
    before = shell(env, f"kubectl get deploy,svc -n {NS} -o yaml")
    observation = shell(env, command, role="probe")
    assert "Forbidden" in observation or "forbidden" in observation
    assert shell(env, f"kubectl get deploy,svc -n {NS} -o yaml") == before


@pytest.mark.parametrize("command", [f"kubectl get pods -n {NS}", f"kubectl describe svc user-service -n {NS}",
                                     f"kubectl logs deploy/compose-post-service -n {NS} --tail 2",
                                     f"kubectl top pods -n {NS}", "kubectl get nodes"])
def test_probe_reads(env, command):
    observation = shell(env, command, role="probe")
    assert "Forbidden" not in observation and "[ERROR]" not in observation


def test_probe_and_executor_cannot_submit(env):
    for role in ("probe", "executor"):
        observation = env.step(solutions.action("submit", ["user-service"]), role=role)[0]
        assert "cannot submit" in observation
    assert not env.done


def test_executor_writes_inside_the_app_but_not_cluster_scope(env):
    assert "labeled" in shell(env, f"kubectl label svc user-service probe-checked=yes -n {NS}", role="executor")
    assert "Forbidden" in shell(env, "kubectl delete node kind-worker", role="executor")
    assert "Forbidden" in shell(env, "kubectl delete clusterrole aoi-probe", role="executor")


def test_scripts_run_on_the_simulated_host_and_each_kubectl_meets_the_policy(env):
    assert shell(env, "rm -rf /tmp && ls /").startswith("root\n\n")  # the simulated host's files, never the real disk
    target = Path(f"/tmp/aoi-shell-{secrets.token_hex(8)}")
    assert shell(env, f"kubectl get pods -n {NS} > {target} && head -c 4 < {target}").startswith("NAME\nPlease")
    assert not target.exists()
    assert shell(env, f"kubectl get pods -n {NS}; kubectl delete pod x -n {NS}", role="probe").startswith(
        "Error: Forbidden by AOI's command policy (probe role): kubectl delete is a write")
    assert shell(env, "kubectl edit svc user-service").startswith("Error: Cannot use `kubectl edit`")


def test_pipes_into_filters_work(env):
    assert shell(env, f"kubectl get pods -n {NS} --no-headers | grep user-service | wc -l").strip().startswith("1")


def test_format_errors_are_observations(env):
    observation = env.step("```bash\nexec_shell('kubectl get pods')\n```")[0]
    assert observation.startswith("Error parsing response: ")
    assert "Invalid action: launch_rockets" in env.step("```\nlaunch_rockets()\n```")[0]


def test_parametric_target_moves_the_fault():
    episode = make("k8s_target_port-misconfig-detection-1", target="text-service")
    try:
        episode.reset()
        port = shell(episode, f"kubectl get svc text-service -n {NS} -o jsonpath={{.spec.ports[0].targetPort}}")
        assert port.startswith("9999")
        assert episode.problem.answers.localization[0] == "text-service"
    finally:
        episode.close()


def test_incompatible_target_lists_the_valid_ones():
    with pytest.raises(ValueError, match="user-service"):
        make("k8s_target_port-misconfig-detection-1", target="nginx-thrift")


def test_flower_needs_the_aiopslab_backend():
    with pytest.raises(ValueError, match="aiopslab"):
        make("flower_node_stop-detection")


def test_step_limit_truncates_and_still_scores():
    episode = make("noop_detection_hotel_reservation-1", max_steps=1)
    try:
        episode.reset()
        _, reward, terminated, truncated, info = episode.step(solutions.shell("kubectl get pods -A"))
        assert truncated and not terminated and reward == 0.0
        assert info["results"]["Detection Accuracy"] == "Invalid Format"
    finally:
        episode.close()
