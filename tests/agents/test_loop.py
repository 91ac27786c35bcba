"""The one loop and its declared tools: exceptions end or redirect a role, guards become statuses, prompts list
exactly the declared tools."""

from __future__ import annotations

import hashlib
import json

import pytest

from aoi.agents.loop import PROMPTS, Guards, LimitsExceeded, PromptHash, Recorder, SubAgent, render
from aoi.agents.tools import Channel, Toolset, declared, probe_tools, render_tools
from aoi.models.replay import ReplayModel
from aoi.protocols import Role, Status
from aoi.trajectory import Trajectory


def call(tool: str, **args) -> tuple[str, str]:
    return "probe", json.dumps({"thought": "", "tool": tool, "args": args})


def probe(script: list, budget: int = 3) -> tuple[SubAgent, Trajectory]:
    traj = Trajectory("p", "detection")
    guards = Guards(budget=budget, fit=lambda text, command="": text, steps_left=lambda: 50)
    tools = probe_tools(Channel(lambda action, role: (f"ran {action}", {})))
    return SubAgent(Role.PROBE, ReplayModel(script), tools, Recorder(traj), guards), traj


def test_finish_submits_the_report_and_the_guards_are_counted_once_as_statuses():
    get = call("exec_shell", command="kubectl get pods")
    agent, traj = probe([get, get, ("probe", "no json"), call("finish", findings="ok")])
    assert agent.run("look", "") == {"findings": "ok"}
    assert [s.status for s in traj.steps] == [Status.OK, Status.REPEATED, Status.FORMAT_ERROR, Status.OK]
    assert traj.counts() == {"ok": 2, "repeated": 1, "format_error": 1}


def test_spent_calls_and_a_failed_model_end_the_run_unfinished_with_the_reason():
    agent, traj = probe([call("get_logs", namespace="a", service="b"), call("get_logs", namespace="a", service="c")], 1)
    with pytest.raises(LimitsExceeded, match="ran out of tool calls"):
        agent.run("look", "")
    assert traj.steps[-1].status == Status.BUDGET and agent.observations[-1].startswith("No tool calls left")
    agent, traj = probe([])  # the replay script is empty: its model fails on the first call
    with pytest.raises(LimitsExceeded, match="script has only 0"):
        agent.run("look", "")
    assert [s.status for s in traj.steps] == [Status.ERROR]


def test_wrong_arguments_are_an_error_the_model_reads():
    agent, traj = probe([call("get_logs", pod="x"), call("finish")])
    agent.run("look", "")
    assert traj.steps[0].status == Status.ERROR and "wrong arguments for get_logs" in traj.steps[0].observation


def test_prompts_list_exactly_the_declared_tools_and_carry_no_copies():
    assert "exec_shell {" not in PROMPTS.read_text() and "finish {" not in PROMPTS.read_text()
    system = render("probe", "system", budget=4, tools=render_tools("probe"))
    assert all(tool.line() in system for tool in declared()[Role.PROBE])
    assert not any(tool.mutating for tool in declared()[Role.PROBE])
    assert [t.name for t in declared()[Role.EXECUTOR] if t.mutating] == ["exec_shell"]


def test_handlers_must_match_the_declarations_and_the_probe_cannot_declare_a_change(tmp_path):
    with pytest.raises(ValueError, match="must match its tools"):
        Toolset(Role.EXECUTOR, {"exec_shell": print})
    bad = tmp_path / "tools.yaml"
    bad.write_text("probe:\n  - {name: exec_shell, mutating: true}\n")
    with pytest.raises(ValueError, match="probe declares the mutating tool exec_shell"):
        declared(bad)
    bad.write_text("observer:\n  - {name: probe}\n  - {name: submit}\n")
    with pytest.raises(ValueError, match="must be aoi.models.schemas.NEXT_STEPS"):
        declared(bad)


def test_a_step_keeps_the_sha256_of_the_exact_messages_sent_as_conversations_grow_and_change():
    def sha(messages):
        return hashlib.sha256(json.dumps(messages, sort_keys=True).encode()).hexdigest()

    hashed = PromptHash()
    probe_talk = [{"role": "system", "content": "at most 3 tool calls"}, {"role": "user", "content": "Investigate"}]
    other = [{"role": "user", "content": "Task é", "name": "observer"}, {"role": "assistant", "content": None}]
    calls = [probe_talk[:1], probe_talk, probe_talk + [{"role": "assistant", "content": "{}"}], [], other,
             other[:1], probe_talk, [{"role": "system", "content": "at most 4 tool calls"}]]
    assert [hashed(messages) for messages in calls] == [sha(messages) for messages in calls]
    agent, traj = probe([call("exec_shell", command="kubectl get pods"), call("get_logs"), call("finish")])
    agent.run("look", "")  # the wrong arguments of get_logs are an observation too
    assert [s.prompt_hash for s in traj.steps] == [sha(s.messages) for s in traj.steps]
