"""Scenario problems on the cluster backend (a served twin on the wall clock): the same operations, judge and undo."""

from __future__ import annotations

import json

from aoi.env import make

from .test_cluster_backend import NS, cluster, shell  # noqa: F401 - `cluster` is a fixture used by name

SCENARIO = {
    "id": "geo-gone-cluster", "app": "hotel-reservation", "namespace": NS, "description": "geo scaled to zero",
    "fault": [{"kubectl": f"kubectl scale deployment/geo -n {NS} --replicas=0"},
              {"api": {"verb": "patch", "kind": "Deployment", "name": "geo",
                       "patch": {"metadata": {"annotations": {"scenario": "geo-gone"}}}}}],
    "symptoms": [{"command": f"kubectl get deployment geo -n {NS}", "pattern": r"(?m)^geo\s+0/0\s"}],
    "root_cause": {"system_level": "Virtualization", "fault_type": "Operation Error", "components": ["geo"]},
    "diagnostic_commands": [f"kubectl get deployments -n {NS}"],
    "solution_commands": [f"kubectl scale deployment/geo -n {NS} --replicas=1"],
}


def replicas(served) -> str:
    return served.ok(["get", "deploy", "geo", "-n", NS, "-o", "jsonpath={.spec.replicas}"])


def episode(served, tmp_path, task: str):
    path = tmp_path / "scenarios.jsonl"
    path.write_text(json.dumps(SCENARIO) + "\n")
    return make(f"scenario:geo-gone-cluster-{task}", backend="cluster", kubeconfig=served.kubeconfigs["admin"],
                after_inject=0.2, settle_limit=20.0, scenarios=[path])


def test_a_scenario_is_injected_by_kubectl_and_api_and_judged_on_a_cluster(cluster, tmp_path):  # noqa: F811
    env = episode(cluster, tmp_path, "mitigation")
    try:
        env.reset()
        assert replicas(cluster) == "0"
        assert cluster.ok(["get", "deploy", "geo", "-n", NS, "-o", "jsonpath={.metadata.annotations.scenario}"]) \
            == "geo-gone"
        env.step(shell(SCENARIO["solution_commands"][0]), role="executor")
        *_, info = env.step("```\nsubmit()\n```")
        assert info["results"]["success"] is True and info["results"]["strict_success"] is True
    finally:
        env.close()


def test_closing_a_scenario_episode_runs_its_solution(cluster, tmp_path):  # noqa: F811
    env = episode(cluster, tmp_path, "detection")
    env.reset()
    assert replicas(cluster) == "0"
    env.close()
    assert replicas(cluster) == "1"
