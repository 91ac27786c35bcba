"""The tools build their results from env.step's (observation, info): the status, the audited exit status and the
observation's own text come from info, never from reading the text back."""

from __future__ import annotations

from aoi.agents.actions import ToolCall
from aoi.agents.runtime import _step
from aoi.agents.tools import Channel, executor_tools, probe_tools
from aoi.env import make
from aoi.protocols import Status
from aoi.safety.approval import ApprovalPolicy
from aoi.safety.audit import AuditLog, read
from aoi.safety.gate import forbidden
from aoi.tasks import NEXT_SUFFIX

GET = ToolCall("exec_shell", {"command": "kubectl get pods -n shop"})
SCALE = ToolCall("exec_shell", {"command": "kubectl scale deployment api -n shop --replicas=1"})


class Scripted:
    """An env.step that answers each action with the next (observation, info) and keeps the actions it was sent."""

    def __init__(self, *answers: tuple[str, dict]):
        self.answers, self.sent = list(answers), []

    def __call__(self, action: str, role: str) -> tuple[str, dict]:
        self.sent.append(action)
        return self.answers.pop(0)


def test_the_probe_status_is_the_refusal_info_reports_not_words_in_the_text():
    tools = probe_tools(Channel(Scripted(("nothing", {"refused": True}), (forbidden("probe", "in a log line"), {}))))
    assert tools.run(GET).status == Status.REFUSED
    assert tools.run(GET).status == Status.OK  # the policy's words in an output are output


def test_the_channel_cuts_exactly_the_suffix_info_names():
    tools = probe_tools(Channel(Scripted(("pods" + NEXT_SUFFIX, {"suffix": NEXT_SUFFIX}),
                                         ("pods" + NEXT_SUFFIX, {"suffix": ""}))))
    assert tools.run(GET).observation == "pods"
    assert tools.run(GET).observation == "pods" + NEXT_SUFFIX  # the output's own last line, not a prompt


def test_the_executor_audits_the_exit_status_info_reports(tmp_path):
    audit = AuditLog(tmp_path / "audit.jsonl")
    dry_run = ("scaled (server dry run)", {"exit_status": 0})
    script = Scripted(dry_run, ("Error: words the command printed", {"exit_status": 0}),
                      dry_run, ("[ERROR] Docker command execution failed: x", {"exit_status": 1}),
                      dry_run, ("refused on arrival", {"refused": True}))
    tools = executor_tools(Channel(script), ApprovalPolicy("auto"), audit)
    results = [tools.run(SCALE) for _ in range(3)]
    assert [r.status for r in results] == [Status.OK, Status.OK, Status.REFUSED]
    assert [e["exit_status"] for e in read(tmp_path / "audit.jsonl")] == [0, 1, None]
    assert "--dry-run=server" in script.sent[0] and "--dry-run" not in script.sent[1]


def test_the_probe_tools_read_a_real_env_step(tmp_path):
    with make("k8s_target_port-misconfig-detection-1", seed=2, workdir=tmp_path) as env:
        env.reset()
        tools = probe_tools(Channel(lambda action, role: _step(env, action, role)))
        look = tools.run(ToolCall("exec_shell", {"command": "kubectl get pods -n test-social-network"}))
        delete = tools.run(ToolCall("exec_shell", {"command": "kubectl delete pod --all -n test-social-network"}))
        assert (look.status, delete.status) == (Status.OK, Status.REFUSED)
        assert look.observation.startswith("NAME") and not look.observation.endswith(NEXT_SUFFIX)
        assert env.trace[-1]["content"] == delete.observation  # the env's own text, whole
