"""The AIOpsLab adapter against a stand-in orchestrator that follows AIOpsLab's agent contract."""

from __future__ import annotations

import asyncio
import importlib.util
import json

import pytest
from typer.testing import CliRunner

from aoi.aiopslab import AOIAgent
from aoi.aiopslab.bridge import clean, task_info
from aoi.aiopslab.cli import aiopslab_app
from aoi.aiopslab.runner import eval_problems, run_problem
from aoi.config import load_config
from aoi.env.parser import parse
from aoi.models.registry import load_model
from aoi.models.replay import ReplayModel
from aoi.store.sqlite import TrajectoryStore
from aoi.tasks import succeeded

ROLES = ("observer", "probe", "executor", "compressor")
FIRST = "Please take the next action"  # AIOpsLab's first observation


def decide(next_: str, instruction: str = "", answer=None) -> tuple[str, str]:
    body = {"phase": "survey", "next": next_, "instruction": instruction, "context": ""}
    if next_ == "submit":
        body["answer"] = answer
    return "observer", json.dumps(body)


def call(role: str, tool: str, **args) -> tuple[str, str]:
    return role, json.dumps({"thought": "", "tool": tool, "args": args})


def play(orch, problem_id: str, model, max_steps: int = 30, agent_steps: int | None = None):
    """Run one episode through an orchestrator; return (outcome, agent, trajectory)."""
    config = load_config(overrides={"model": "expert", "env.max_steps": agent_steps or max_steps}, environ={})
    agent = AOIAgent(config, dict.fromkeys(ROLES, model), timeout=120)
    orch.register_agent(agent, name="aoi")
    agent.init_context(*orch.init_problem(problem_id), problem_id=problem_id)
    outcome = asyncio.run(orch.start_problem(max_steps=max_steps))
    return outcome, agent, agent.finish(outcome["results"])


def replies(outcome) -> list[str]:
    return [item["content"] for item in outcome["history"] if item["role"] == "assistant"]


@pytest.mark.parametrize("problem_id", ["wrong_bin_usage-detection-1", "revoke_auth_mongodb-localization-1",
                                        "wrong_bin_usage-analysis-1", "misconfig_app_hotel_res-mitigation-1"])
def test_the_expert_succeeds_through_the_stand_in(StandIn, problem_id):
    outcome, agent, traj = play(StandIn(), problem_id, load_model("expert"))
    assert succeeded(outcome["results"]), outcome["results"]
    sent = replies(outcome)
    assert all(parse(reply).api for reply in sent)  # every action is in AIOpsLab's strict format
    assert all(reply.startswith("```\n") and reply.endswith("\n```") for reply in sent)
    assert outcome["results"]["steps"] == len(sent) == len(agent.exchanges)
    assert [e["action"] for e in agent.exchanges] == sent
    recorded = {step.action for step in traj.steps if step.action}
    assert all(reply in recorded or "--dry-run=server" in reply for reply in sent)  # previews live in the audit
    assert traj.backend == "aiopslab" and traj.results == outcome["results"] and traj.error is None
    assert not any(step.observation.endswith(FIRST) for step in traj.steps)


@pytest.mark.parametrize("task, answer, sent", [
    ("detection", "Yes", "submit('Yes')"),
    ("localization", ["profile"], "submit(['profile'])"),
    ("analysis", {"system_level": "Application", "fault_type": "Network/Storage Issue"},
     "submit({'system_level': 'Application', 'fault_type': 'Network/Storage Issue'})"),
    ("mitigation", None, "submit()")])
def test_each_task_type_submits_positionally(StandIn, task, answer, sent):
    model = ReplayModel([decide("submit", answer=answer)])
    orch = StandIn()
    outcome, agent, traj = play(orch, f"wrong_bin_usage-{task}-1", model)
    model.assert_done()
    assert replies(outcome) == [f"```\n{sent}\n```"]
    assert orch.solution == (answer if task != "mitigation" else [])
    assert outcome["results"]["steps"] == 1 and outcome["final_state"] == "1"
    assert traj.steps[-1].action == f"```\n{sent}\n```" and traj.steps[-1].observation == "1"
    if task != "mitigation":  # the answer was right; mitigation also needs the fix
        assert succeeded(outcome["results"])


def test_the_orchestrators_step_limit_ends_the_team(StandIn):
    model = ReplayModel([decide("probe", "look"),
                         call("probe", "exec_shell", command="kubectl get pods -n test-hotel-reservation"),
                         call("probe", "exec_shell", command="kubectl get svc -n test-hotel-reservation"),
                         decide("submit", answer="Yes")])
    outcome, agent, traj = play(StandIn(), "wrong_bin_usage-detection-1", model, max_steps=2, agent_steps=30)
    model.assert_done()
    assert outcome["results"]["steps"] == 2 and outcome["results"]["Detection Accuracy"] == "Invalid Format"
    assert traj.error is None and len(agent.exchanges) == 2
    assert "ended the episode" in agent.exchanges[-1]["observation"]


class Bent:
    """Observations a careless orchestrator might send: None, a number, a parse error, no suffix."""

    BENT = (None, 42, "Error parsing response: Format validation failure. Only have one pair of three ticks.", "")

    def __init__(self, base):
        self.base, self.count = base, 0

    def __call__(self, env_text: str):
        self.count += 1
        if self.count <= 3:
            return self.BENT[self.count - 1]
        return env_text  # no "Please take the next action" suffix


def test_odd_observations_do_not_break_the_adapter(StandIn):
    orch = StandIn()
    orch.observe = Bent(orch.observe)
    model = ReplayModel([decide("probe", "look"),
                         *[call("probe", "exec_shell", command=f"kubectl get {kind} -n test-hotel-reservation")
                           for kind in ("pods", "svc", "deploy", "cm")],
                         call("probe", "finish", findings="profile is crashing"),
                         decide("submit", answer="Yes")])
    outcome, agent, traj = play(orch, "wrong_bin_usage-detection-1", model)
    model.assert_done()
    assert outcome["results"]["Detection Accuracy"] == "Correct"
    seen = [step.observation for step in traj.steps if step.role == "probe"][:4]
    assert seen[0] == "" and seen[1] == "42" and seen[2].startswith("Error parsing response: ")
    assert "mongo-geo-script" in seen[3]  # the configmaps, suffix or not


def test_get_action_needs_init_context():
    agent = AOIAgent(load_config(overrides={"model": "expert"}, environ={}))
    with pytest.raises(RuntimeError, match="init_context"):
        asyncio.run(agent.get_action(FIRST))


def test_clean_and_task_inference():
    assert clean("x\nPlease take the next action") == "x" and clean(FIRST) == "" and clean(7) == "7"
    assert task_info("wrong_bin_usage-mitigation-1", "", {}).target == "profile"
    assert task_info("new_fault-analysis-9", "", {}).task_type == "analysis"
    assert task_info(None, "", {"submit": "submit(faulty_components: list[str])"}).task_type == "localization"
    assert task_info(None, "You must mitigate it.", {"submit": "submit()"}).task_type == "mitigation"


def test_runner_saves_both_records_and_eval_resumes(StandIn, tmp_path):
    config = load_config(overrides={"model": "expert", "store.path": str(tmp_path / "t.db")}, environ={})
    made = []

    def factory():
        made.append(StandIn())
        return made[-1]

    record = run_problem("wrong_bin_usage-detection-1", config, out=tmp_path / "one", make_orchestrator=factory)
    saved = json.loads((tmp_path / "one" / "wrong_bin_usage-detection-1__a0.json").read_text())
    assert saved["success"] is True and saved["aiopslab"]["results"] == saved["trajectory"]["results"]
    assert saved["aiopslab"]["history"][0]["role"] == "assistant" and saved["exchanges"]
    assert TrajectoryStore(config.store.path).get(record["trajectory"]["id"]).backend == "aiopslab"
    ids = ["wrong_bin_usage-detection-1", "wrong_bin_usage-localization-1"]
    summary = eval_problems(ids, config, k=2, out=tmp_path / "eval", make_orchestrator=factory)
    assert len(made) == 5 and summary["overall"] == {"episodes": 4, "problems": 2, "avg@k": 1.0, "best@k": 1.0}
    again = eval_problems(ids, config, k=2, out=tmp_path / "eval", make_orchestrator=factory)
    assert len(made) == 5 and again == summary  # resumed: nothing ran twice
    lines = (tmp_path / "eval" / "results.jsonl").read_text().splitlines()
    assert len(lines) == 4 and json.loads(lines[0])["results"]["Detection Accuracy"] == "Correct"


@pytest.mark.skipif(importlib.util.find_spec("aiopslab") is not None, reason="AIOpsLab is installed here")
@pytest.mark.parametrize("command", [["run", "wrong_bin_usage-detection-1"], ["eval", "--task-type", "detection"]])
def test_without_aiopslab_the_cli_says_how_to_install_it(command):
    result = CliRunner().invoke(aiopslab_app, command)
    assert result.exit_code == 2
    assert "git clone --recurse-submodules https://github.com/microsoft/AIOpsLab" in result.output
    assert "TIKTOKEN_CACHE_DIR" in result.output and "kind create cluster" in result.output
