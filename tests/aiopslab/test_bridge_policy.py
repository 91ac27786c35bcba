"""The AIOpsLab bridge enforces the roles' command policy before an action reaches AIOpsLab's shell.

A refused action is still one of the agent's replies, and AIOpsLab charges every reply (orchestrator.py:161-165
records each get_action answer; tasks/base.py:48 counts the assistant items): the bridge sends AIOpsLab a note
its parser rejects (parser.py:16-32 needs one fenced block), so the step is charged and nothing runs.
"""

from __future__ import annotations

import threading

import pytest

from aoi.aiopslab.bridge import REFUSED_NOTE, BridgeEnv
from aoi.problems import solutions

NS = "test-hotel-reservation"
SUFFIX = "\nPlease take the next action"  # what AIOpsLab's orchestrator appends to an observation
PARSE_ERROR = "Error parsing response: Format validation failure."


def bridge() -> BridgeEnv:
    return BridgeEnv(None, "task", "instructions", {}, max_steps=20, timeout=5)


def answer_next(env: BridgeEnv, observation: str, sent: list | None = None) -> threading.Thread:
    """Play AIOpsLab: take the next reply off the outbox (kept in `sent`) and answer it."""
    def play():
        reply = env.outbox.get(timeout=5)
        if sent is not None:
            sent.append(reply)
        env.inbox.put(observation)
    worker = threading.Thread(target=play, daemon=True)
    worker.start()
    return worker


@pytest.mark.parametrize("role, command", [
    ("probe", f"kubectl delete pod -l io.kompose.service=geo -n {NS}"),
    ("probe", f"kubectl get secrets -n {NS}"),
    ("executor", "kubectl delete node kind-worker"),
    (None, "kubectl get pods --kubeconfig=/root/.kube/config"),
    (None, "kubectl get pods; cat /etc/passwd"),
    (None, "kubectl get pods | sh"),
    (None, "cat /etc/passwd"),
    (None, "kubectl -n x edit deploy geo"),
    ("observer", "kubectl create cm x --from-file=/etc/passwd -n x"),
    (None, "kubectl get pods -v=9"),
    (None, "kubectl get pods " + "a" * 70_000),
])
def test_refused_commands_never_reach_aiopslab_but_are_charged(role, command):
    env, sent = bridge(), []
    answer_next(env, PARSE_ERROR, sent)
    observation, _, _, _, info = env.step(solutions.shell(command), role)
    assert observation.startswith("Error: Forbidden by AOI's command policy"), observation
    assert not info["sent"] and env.steps == 1  # charged like any reply
    assert len(sent) == 1 and sent[0].startswith(REFUSED_NOTE) and "```" not in sent[0]  # AIOpsLab cannot run it
    assert env.exchanges[0]["sent"] == sent[0] and observation == env.exchanges[0]["observation"] + SUFFIX


def test_allowed_commands_reach_aiopslab():
    env = bridge()
    answer_next(env, "NAME READY")
    observation, _, _, _, info = env.step(solutions.shell(f"kubectl delete pod geo-1 -n {NS}"), None)
    assert info["sent"] and observation.startswith("NAME READY")


def test_read_metrics_opens_only_files_aiopslab_exported(tmp_path):
    env = bridge()
    answer_next(env, PARSE_ERROR)
    refused = env.step(solutions.action("read_metrics", "/root/.kube/config"), None)
    assert "opens only files" in refused[0] and not refused[4]["sent"]
    answer_next(env, f"Metrics data exported to directory: {tmp_path}\n\nFolder structure of exported metrics:")
    env.step(solutions.action("get_metrics", NS, 5), None)
    answer_next(env, "   a   b")
    assert env.step(solutions.action("read_metrics", str(tmp_path / "kpi.csv")), None)[4]["sent"]
    answer_next(env, PARSE_ERROR)
    escaped = env.step(solutions.action("read_metrics", str(tmp_path / ".." / "other.csv")), None)
    assert not escaped[4]["sent"] and env.steps == 4
