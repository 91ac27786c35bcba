"""The agent <-> expert contract: the messages the real loop sends are read back correctly by the expert's readers.

Each test drives the agents' own code (SubAgent, Observer, Memory, Compressor) with scripted models and a scripted
environment, then reads what was sent with the expert's readers (the context each call sends, the feedback a
sub-agent's conversation adds): a context or feedback edited on one side only fails here.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from aoi.agents.compressor import Compressor
from aoi.agents.loop import Guards, LimitsExceeded, Recorder, SubAgent
from aoi.agents.memory import Finding, Memory
from aoi.agents.observer import Episode, Observer, Team
from aoi.agents.tools import Channel, executor_tools, probe_tools
from aoi.models.base import ModelError
from aoi.models.expert import ExpertModel, contract, executor, findings, probe
from aoi.models.expert.instructions import context as known_context
from aoi.models.replay import ReplayModel
from aoi.protocols import Role, Status
from aoi.safety.approval import ApprovalPolicy
from aoi.trajectory import Trajectory

PODS = "NAME READY STATUS\napi-1 0/1 CrashLoopBackOff"


def call(role: str, tool: str, thought: str = "", **args) -> tuple[str, str]:
    return role, json.dumps({"thought": thought, "tool": tool, "args": args})


def agent(role: Role, script: list, budget: int = 2) -> tuple[SubAgent, ReplayModel, Trajectory]:
    traj, model = Trajectory("p", "localization"), ReplayModel(script)
    channel = Channel(lambda action, who: (PODS, {}))
    tools = probe_tools(channel) if role == Role.PROBE else executor_tools(channel, ApprovalPolicy("auto"), None)
    guards = Guards(budget=budget, fit=lambda text, command="": text, steps_left=lambda: 50)
    return SubAgent(role, model, tools, Recorder(traj), guards), model, traj


def test_the_probe_reads_its_budget_instruction_repeats_and_the_end_of_its_calls():
    get = {"command": "kubectl get pods -n shop"}
    sub, model, traj = agent(Role.PROBE, [call("probe", "exec_shell", "[pods] list", **get)] * 2
                             + [call("probe", "exec_shell", "[events] x", command="kubectl get events -n shop")])
    try:
        sub.run("Survey namespace shop", "namespace: shop")
    except LimitsExceeded:
        pass
    last = model.requests[-1][1] + [{"role": "assistant", "content": "{}"},
                                     {"role": "user", "content": sub.observations[-1]}]
    run = probe.Run(last, sub.request(last)["context"])
    assert run.budget == 2 and run.namespace == "shop" and run.out_of_calls
    assert [s.status for s in traj.steps] == [Status.OK, Status.REPEATED, Status.BUDGET]
    assert run.steps[1].observation.startswith(contract.REPEATED) and not contract.succeeded(run.steps[1].observation)
    assert run.seen.output("pods") == PODS  # the usable output, not the repeat


def test_the_expert_executor_stops_when_told_no_calls_are_left():
    sub, model, _ = agent(Role.EXECUTOR, [call("executor", "get_logs", namespace="shop", service="api")] * 2, 1)
    try:
        sub.run("Apply the fix:\n1. kubectl rollout restart deployment api -n shop", "")
    except LimitsExceeded:
        pass
    told = model.requests[-1][1] + [{"role": "assistant", "content": "{}"},
                                    {"role": "user", "content": sub.observations[-1]}]
    assert sub.observations[-1] == contract.NO_CALLS_LEFT
    assert json.loads(executor.respond(told, sub.request(told)["context"]))["tool"] == "finish"


def test_the_executor_reads_its_commands_from_the_instruction_and_its_namespace_from_the_context():
    script = [call("executor", "exec_shell", command="kubectl rollout restart deployment api -n shop")]
    sub, model, _ = agent(Role.EXECUTOR, script, 1)
    try:
        sub.run("Restart it:\n1. kubectl rollout restart deployment api -n shop", "namespace: shop\nkubectl delete x")
    except LimitsExceeded:
        pass
    asked = sub.request(model.requests[0][1])["context"]
    assert (asked.budget, asked.instruction.startswith("Restart it:")) == (1, True)
    first = json.loads(executor.respond(model.requests[0][1], asked))
    assert first["args"]["command"] == "kubectl rollout restart deployment api -n shop"  # not the context's


def test_a_refused_command_reads_as_failed():
    script = [call("executor", "exec_shell", command="rm -rf /"), call("executor", "finish", report="")]
    sub, _, traj = agent(Role.EXECUTOR, script)
    sub.run("look", "")
    observation = traj.steps[0].observation
    assert traj.steps[0].status == Status.REFUSED and observation.startswith(contract.FAILED)


def _observer(memory: Memory, decision_format: str = "standard") -> Observer:
    episode = Episode(task_type="localization", description="Namespace: shop\nFind the fault.", max_iterations=9,
                      submit=lambda action: "1", steps_left=lambda: 17, namespace="shop",
                      decision_format=decision_format, components=("api", "db"))
    observer = Observer(ReplayModel([]), Team(None, None), Recorder(Trajectory("p", "localization")),
                        lambda text, **kw: text, memory, episode)
    observer.calls = 3
    return observer


def test_the_observer_sends_the_expert_what_its_prompt_says():
    memory = Memory(4000)
    instruction = "Check the logs of api " + "x" * 200
    memory.add_finding(Finding(1, "probe", instruction, 'suspects: ["api"]\nleads: ["Survey namespace shop"]'))
    observer = _observer(memory)
    text = observer.messages()[-1]["content"]
    context = observer.request(observer.messages())["context"]
    assert "Task (localization)" in text and "Namespace: shop" in text and "Iteration 3 of 9" in text
    assert "environment actions left: 17" in text and not context.compact
    prompt = findings.read(context)
    assert (prompt.task, prompt.namespace, prompt.iteration, prompt.max_iterations, prompt.steps_left) == \
        ("localization", "shop", 3, 9, 17)
    report = prompt.reports[0]
    assert report.fields["suspects"] == ["api"] and report.instruction == contract.key(instruction)
    assert contract.header(1, "probe", instruction) + "\n" + report.text in text


@pytest.mark.parametrize("budget, count, cut", [(1400, 4, "(condensed to fit the context)"),
                                                (1000, 12, "(report left out to fit the context)")])
def test_the_context_holds_the_findings_as_the_prompt_shows_them_cut_to_fit(budget, count, cut):
    memory = Memory(budget)
    for i in range(1, count + 1):
        memory.add_finding(Finding(i, "probe", f"check {i}", "\n".join(f"pod api-{n} Error {i}" for n in range(60))))
    observer = _observer(memory, "compact")
    text = observer.messages()[-1]["content"]
    context = observer.request(observer.messages())["context"]
    assert context.compact and "To fit the context budget" in text
    assert [f.iteration for f in context.findings] == [f.iteration for f in memory.findings
                                                       if f'[{f.iteration}] probe on "' in text]
    assert all(f.text in text for f in context.findings) and any(f.text.startswith(cut) for f in context.findings)


def test_the_compact_observers_sub_agent_gets_the_findings_its_prompt_showed():
    memory = Memory(4000)
    diagnosis = {"component": "api", "kind": "crash_loop", "confidence": 0.9}
    memory.add_finding(Finding(1, "probe", "Survey namespace shop", f"diagnosis: {json.dumps(diagnosis)}"))
    observer = _observer(memory, "compact")
    sub, model, _ = agent(Role.PROBE, [call("probe", "finish", report="")])
    observer.team = Team(sub, None)
    observer.messages()
    observer._dispatch({"next": "probe", "instruction": "Read the logs of pods api-1 in namespace shop"})
    asked = sub.request(model.requests[0][1])["context"]
    assert asked.findings == tuple(memory.shown)
    assert contract.header(1, "probe", "Survey namespace shop") + "\n" + asked.findings[0].text in asked.context
    assert probe.Run(model.requests[0][1], asked).instruction.known == diagnosis
    written = replace(asked, context=known_context("shop", {"kind": "x"}))  # a context's known: line comes first
    assert probe.Run([], written).instruction.known == {"kind": "x"}


def test_the_expert_compressor_reads_the_budget_and_the_output_the_compressor_sends():
    output = PODS + "\n" + "api-2 1/1 Running\n" * 100
    recorded = []
    condense = Compressor(50, ExpertModel(), lambda messages, completion, **kw: recorded.append(completion.text))
    condense(output, command="kubectl get pods")
    assert recorded == [PODS + "\n[100 other lines left out]"]  # its budget and its output


def test_the_expert_needs_the_context_each_call_sends():
    for role, kind in (("probe", "SubAgentContext"), ("executor", "SubAgentContext"),
                       ("compressor", "CompressorContext")):
        with pytest.raises(ModelError, match=f"context={kind}"):
            ExpertModel().complete([{"role": "user", "content": "Investigate: Survey namespace shop"}], role=role)
