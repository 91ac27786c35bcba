"""The whole AOI loop with scripted models: prompts, decisions, parsing, guards, submission formats, approval."""

from __future__ import annotations

import json

import pytest

from aoi.agents.observer import MODEL_ERROR_LIMIT
from aoi.agents.runtime import run_episode
from aoi.config import load_config
from aoi.env import make
from aoi.models.base import ModelError
from aoi.models.replay import ReplayModel
from aoi.protocols import FatalEpisodeError
from aoi.safety.approval import ApprovalPolicy
from aoi.safety.audit import AuditLog, read

ROLES = ("observer", "probe", "executor", "compressor")


def decide(next_: str, instruction: str = "", answer=None, **extra) -> tuple[str, str]:
    body = {"phase": "survey", "next": next_, "instruction": instruction, "context": "", **extra}
    if answer is not None or next_ == "submit":
        body["answer"] = answer
    return "observer", json.dumps(body)


def call(role: str, tool: str, **args) -> tuple[str, str]:
    return role, json.dumps({"thought": "", "tool": tool, "args": args})


def episode(problem_id: str, steps: list, tmp_path=None, **overrides):
    """Run one episode with a replay model; return (trajectory, model, env)."""
    model = ReplayModel(steps)
    config = load_config(overrides={"model": "expert", **overrides}, environ={})
    env = make(problem_id)
    try:
        audit = AuditLog(tmp_path / "audit.jsonl") if tmp_path else None
        approval = ApprovalPolicy(config.approval.mode, config.approval.rules)
        traj = run_episode(env, config, dict.fromkeys(ROLES, model), approval=approval, audit=audit)
    finally:
        env.close()
    return traj, model


def test_probe_then_submit_detection():
    traj, model = episode("k8s_target_port-misconfig-detection-1", [
        decide("probe", "list the pods of test-social-network"),
        call("probe", "exec_shell", command="kubectl get pods -n test-social-network"),
        call("probe", "finish", findings="all pods Running", suspects=[]),
        decide("submit", answer="Yes")])
    model.assert_done()
    assert traj.results["Detection Accuracy"] == "Correct" and traj.error is None
    probe_prompt = model.requests[1][1]
    assert "READ-ONLY" in probe_prompt[0]["content"] and "list the pods" in probe_prompt[1]["content"]
    observer_prompt = model.requests[3][1][1]["content"]
    assert "all pods Running" in observer_prompt and "Namespace: test-social-network" in observer_prompt
    assert '"Yes" or "No"' in observer_prompt


@pytest.mark.parametrize("problem_id, answer, key, value", [
    ("k8s_target_port-misconfig-localization-1", ["user-service"], "Localization Accuracy", 100.0),
    ("k8s_target_port-misconfig-analysis-1", {"system_level": "Virtualization", "fault_type": "Misconfiguration"},
     "success", True)])
def test_submissions_use_the_task_format(problem_id, answer, key, value):
    traj, _ = episode(problem_id, [decide("submit", answer=answer)])
    assert traj.results[key] == value
    assert traj.steps[-1].action.startswith("```\nsubmit(")


def test_guards_answer_the_model_and_count():
    traj, model = episode("noop_detection_social_network-1", [
        decide("probe", "check pods"),
        call("probe", "exec_shell", command="kubectl get pods -n test-social-network"),
        call("probe", "exec_shell", command="kubectl get pods -n test-social-network"),
        call("probe", "exec_shell", command="kubectl get pods -n test-social-network"),
        ("probe", "I think everything is fine."),
        call("probe", "exec_shell", command="kubectl delete pod -l app=user-service -n test-social-network"),
        call("probe", "finish", findings="healthy"),
        ("observer", "no json here"),
        decide("submit", answer="No")], **{"agent.probe_budget": 6})
    model.assert_done()
    statuses = [s.status for s in traj.steps if s.role == "probe"]
    assert statuses == ["ok", "ok", "repeated", "format_error", "refused", "ok"]
    assert [s.status for s in traj.steps if s.role == "observer"][:3] == ["ok", "format_error", "ok"]
    assert traj.results["Detection Accuracy"] == "Correct"
    feedback = model.requests[-1][1][1]["content"]
    assert "not a valid decision" in feedback


def test_probe_budget_ends_the_call_and_the_observer_still_decides():
    traj, model = episode("noop_detection_hotel_reservation-1", [
        decide("probe", "look"),
        call("probe", "exec_shell", command="kubectl get pods -n test-hotel-reservation"),
        call("probe", "exec_shell", command="kubectl get svc -n test-hotel-reservation"),
        call("probe", "exec_shell", command="kubectl get deploy -n test-hotel-reservation"),
        decide("submit", answer="No")], **{"agent.probe_budget": 2})
    model.assert_done()
    assert traj.steps[3].status == "budget"
    assert "ran out of tool calls" in model.requests[-1][1][1]["content"]


def test_last_iteration_forces_a_submission():
    traj, model = episode("k8s_target_port-misconfig-localization-1", [
        decide("probe", "look", answer=["user-service"]), call("probe", "finish", findings="user-service refuses"),
        decide("probe", "look again", answer=["user-service"])], **{"agent.max_iterations": 2})
    model.assert_done()
    assert traj.results["Localization Accuracy"] == 100.0


def test_executor_refused_in_a_diagnosis_task():
    traj, model = episode("k8s_target_port-misconfig-detection-1", [
        decide("execute", "patch the service"), decide("submit", answer="Yes")])
    model.assert_done()
    assert "not allowed in a detection task" in model.requests[-1][1][1]["content"]


FIX = "kubectl patch svc user-service -n test-social-network --type json -p " \
      "'[{\"op\":\"replace\",\"path\":\"/spec/ports/0/targetPort\",\"value\":9090}]'"


def test_executor_fixes_after_a_dry_run_and_audits(tmp_path):
    traj, model = episode("k8s_target_port-misconfig-mitigation-1", [
        decide("execute", "set user-service targetPort to 9090"),
        call("executor", "exec_shell", command=FIX),
        call("executor", "finish", report="patched", changes=[FIX], verified=True),
        decide("submit")], tmp_path)
    model.assert_done()
    assert traj.results["success"] is True and traj.results["strict_success"] is True
    [entry] = read(tmp_path / "audit.jsonl")
    assert entry["command"] == FIX and entry["approval"]["status"] == "approved"
    assert entry["preview"].startswith("service/user-service patched")  # the server-side dry run ran first
    actions = [s.action for s in traj.steps if s.role == "executor" and s.action]
    assert len(actions) == 1  # the preview is not counted as the change


def test_deny_mode_blocks_the_change(tmp_path):
    traj, model = episode("k8s_target_port-misconfig-mitigation-1", [
        decide("execute", "set user-service targetPort to 9090"),
        call("executor", "exec_shell", command=FIX),
        call("executor", "finish", report="not allowed", changes=[], verified=False),
        decide("submit")], tmp_path, **{"approval.mode": "deny"})
    model.assert_done()
    assert [s.status for s in traj.steps if s.role == "executor"][0] == "approval_denied"
    assert traj.results["strict_success"] is False
    assert read(tmp_path / "audit.jsonl")[0]["approval"]["status"] == "denied"


def test_a_denied_delete_leaves_the_pod_alone(tmp_path):
    look = make("k8s_target_port-misconfig-mitigation-1")
    look.reset()
    kube = look.backend.kube
    pod = kube.list("pods", "test-social-network")[0]["metadata"]["name"]
    look.close()
    traj, model = episode("k8s_target_port-misconfig-mitigation-1", [
        decide("execute", f"delete pod {pod}"),
        call("executor", "exec_shell", command=f"kubectl delete pod {pod} -n test-social-network"),
        call("executor", "exec_shell", command=f"kubectl get pod {pod} -n test-social-network -o name"),
        call("executor", "finish", report="not allowed", changes=[], verified=False),
        decide("submit")], tmp_path, **{"approval.mode": "deny"})
    model.assert_done()
    [entry] = read(tmp_path / "audit.jsonl")
    assert entry["approval"]["status"] == "denied"
    assert entry["preview"].strip() == f'pod "{pod}" deleted (server dry run)'
    after = [s.observation for s in traj.steps if s.role == "executor" and "get pod" in s.action]
    assert after and f"pod/{pod}" in after[0] and "NotFound" not in after[0]  # the preview deleted nothing


def test_a_model_failure_ends_the_episode_with_an_error_not_a_crash():
    traj, model = episode("noop_detection_hotel_reservation-1", [decide("probe", "look")])
    assert traj.results  # the environment still judged the episode (forced submit)
    assert any(s.status == "error" for s in traj.steps)


class RaisingModel:
    """A model whose call raises the given exception (not a ModelError: the loop does not handle it)."""

    name = "raising"

    def __init__(self, error: Exception):
        self.error = error

    def complete(self, messages, *, role, max_tokens=None, temperature=None, **call):
        raise self.error


class VoidedEpisode(FatalEpisodeError):
    """A fatal error of this test's own."""


@pytest.mark.parametrize("error, fatal", [(VoidedEpisode("the state is wrong"), True),
                                          (RuntimeError("a bug in a model"), False)])
def test_a_fatal_episode_error_is_re_raised_any_other_failure_kept_as_the_error(error, fatal):
    config = load_config(overrides={"model": "expert"}, environ={})
    env = make("noop_detection_hotel_reservation-1")
    try:
        if fatal:
            with pytest.raises(VoidedEpisode, match="the state is wrong"):
                run_episode(env, config, dict.fromkeys(ROLES, RaisingModel(error)))
            return
        traj = run_episode(env, config, dict.fromkeys(ROLES, RaisingModel(error)))
    finally:
        env.close()
    assert traj.error == "RuntimeError: a bug in a model" and traj.results


class DownModel:
    """A model whose endpoint is gone: every call fails (after the model's own retries)."""

    name = "down"

    def __init__(self):
        self.calls = 0

    def complete(self, messages, *, role, max_tokens=None, temperature=None, **call):
        self.calls += 1
        raise ModelError("connection refused: http://127.0.0.1:9/v1")


def test_a_dead_model_ends_the_episode_early_judged_wrong_not_guessed():
    config = load_config(overrides={"model": "expert"}, environ={})
    model, env = DownModel(), make("k8s_target_port-misconfig-detection-1")  # a fault: "Yes" would be correct
    try:
        traj = run_episode(env, config, dict.fromkeys(ROLES, model))
    finally:
        env.close()
    assert model.calls == MODEL_ERROR_LIMIT  # not one call per iteration of the whole budget
    assert "3 times in a row" in traj.error and "connection refused" in traj.error
    assert traj.results["Detection Accuracy"] == "Incorrect" and traj.results["strict_success"] is False
    assert traj.steps[-1].action == '```\nsubmit(\'\')\n```'


@pytest.mark.parametrize("problem_id, key, wrong", [
    ("k8s_target_port-misconfig-detection-1", "Detection Accuracy", "Incorrect"),
    ("k8s_target_port-misconfig-localization-1", "Localization Accuracy", 0.0),
    ("misconfig_app_hotel_res-analysis-1", "success", False)])
def test_an_observer_that_never_answers_is_not_credited_with_a_default(problem_id, key, wrong):
    garbage = [("observer", "I am not sure what to do.")] * 2
    traj, model = episode(problem_id, garbage, **{"agent.max_iterations": 2})
    model.assert_done()
    assert traj.error is None and traj.results[key] == wrong


LOOP = "for p in $(kubectl get pods -n test-social-network -o name | head -3); do echo \"== $p\"; done"
DELETE_ALL = "kubectl get pods -n test-social-network -o name | head -1 | xargs kubectl delete -n test-social-network"


def test_the_probe_runs_scripts_in_the_environments_shell_and_each_kubectl_stays_a_read():
    traj, model = episode("k8s_target_port-misconfig-detection-1", [
        decide("probe", "list three pods"),
        call("probe", "exec_shell", command=LOOP),
        call("probe", "exec_shell", command=DELETE_ALL),
        call("probe", "exec_shell", command="kubectl get pods -n test-social-network --no-headers | wc -l"),
        call("probe", "finish", findings="listed", suspects=[]),
        decide("submit", answer="No")])
    model.assert_done()
    loop, delete, count = (s for s in traj.steps if s.role == "probe" and s.action)
    assert loop.status == "ok" and loop.observation.count("== pod/") == 3
    assert delete.status == "refused" and "Forbidden by AOI's command policy (probe role)" in delete.observation
    assert count.status == "ok" and count.observation.split()[0] == "27"  # no pod was deleted
