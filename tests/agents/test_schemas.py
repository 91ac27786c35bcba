"""The reply schemas are declared once (aoi.models.schemas): the agents parse against what they send with each call,
and every reply valid under the schema sent parses."""

from __future__ import annotations

import contextlib
import json

import pytest
from jsonschema import validate

from aoi.agents import observer as observer_module
from aoi.agents.actions import parse_tool_call
from aoi.agents.loop import Guards, Recorder, SubAgent, Submitted
from aoi.agents.memory import Memory
from aoi.agents.observer import Episode, Observer, Team
from aoi.agents.tools import Channel, executor_tools, probe_tools
from aoi.models import schemas
from aoi.models.compact import answer_choices
from aoi.models.expert.contract import SubAgentContext
from aoi.models.replay import ReplayModel
from aoi.protocols import Role, Status
from aoi.safety.approval import ApprovalPolicy
from aoi.tasks import FAULT_TYPES, SYSTEM_LEVELS, TaskType
from aoi.trajectory import Trajectory


class Sent(ReplayModel):
    """A replay model that keeps what each call sent beside the messages."""

    def __init__(self, steps):
        super().__init__(steps)
        self.sent: list[dict] = []

    def complete(self, messages, *, role, max_tokens=None, temperature=None, **call):
        self.sent.append(call)
        return super().complete(messages, role=role)


def _toolsets():
    channel = Channel(lambda action, role: "")  # no tool runs: the scripts only finish
    return {Role.PROBE: probe_tools(channel), Role.EXECUTOR: executor_tools(channel, ApprovalPolicy("auto"), None)}


@pytest.mark.parametrize("role", [Role.PROBE, Role.EXECUTOR])
def test_a_sub_agent_sends_the_schema_of_the_tools_it_parses_against(role):
    tools = _toolsets()[role]
    model = Sent([(role, json.dumps({"tool": "finish", "args": {"report": "ok"}}))])
    guards = Guards(budget=2, fit=lambda text, command="": text, steps_left=lambda: 50)
    SubAgent(role, model, tools, Recorder(Trajectory("p", TaskType.DETECTION)), guards).run("look", "")
    context = SubAgentContext(budget=2, instruction="look", context="")  # what its prompt says, as data
    assert model.sent == [{"schema": schemas.tool_call_schema(tools.names()), "context": context}]
    assert model.sent[0]["schema"]["properties"]["tool"]["enum"] == tools.names()


@pytest.mark.parametrize("role", [Role.PROBE, Role.EXECUTOR])
def test_every_tool_call_valid_under_the_schema_parses(role):
    names = _toolsets()[role].names()
    schema = schemas.tool_call_schema(names)
    values = ["kubectl get pods -n x", 3, True, ["a", "b"]]
    for tool in names:
        for reply in ({"tool": tool, "args": {}}, {"thought": "why", "tool": tool, "args": {"a": values[0]}},
                      {"tool": tool, "args": {f"k{i}": value for i, value in enumerate(values)}}):
            validate(reply, schema)
            call = parse_tool_call(json.dumps(reply), names)
            assert (call.tool, call.args, call.thought) == (tool, reply["args"], reply.get("thought", ""))


def _sub_agent(role: Role, recorder: Recorder) -> SubAgent:
    model = Sent([(role, json.dumps({"tool": "finish", "args": {"report": "ok"}}))])
    guards = Guards(budget=2, fit=lambda text, command="": text, steps_left=lambda: 50)
    return SubAgent(role, model, _toolsets()[role], recorder, guards)


def _observer(decision_format: str, task_type: str = TaskType.LOCALIZATION,
              steps: list | None = None) -> tuple[Observer, Sent]:
    model, recorder = Sent(steps or []), Recorder(Trajectory("p", task_type))
    episode = Episode(task_type=task_type, description="Namespace: shop", max_iterations=5, submit=lambda a: "",
                      steps_left=lambda: 20, namespace="shop", decision_format=decision_format,
                      components=("api", "db"))
    team = Team(_sub_agent(Role.PROBE, recorder), _sub_agent(Role.EXECUTOR, recorder))
    return Observer(model, team, recorder, lambda text, **kw: text, Memory(4000), episode), model


def test_the_observer_parses_the_steps_its_schemas_allow():
    assert observer_module.NEXT_STEPS is schemas.NEXT_STEPS
    assert schemas.OBSERVER["properties"]["next"]["enum"] == list(schemas.NEXT_STEPS)
    for task_type in TaskType:
        branches = schemas.compact_schema(task_type, answer_choices(task_type, ["api"]))["anyOf"]
        assert {step for b in branches for step in b["properties"]["next"]["enum"]} <= set(schemas.NEXT_STEPS)


@pytest.mark.parametrize("decision_format", ["standard", "compact"])
def test_the_observer_sends_the_schema_of_its_prompt(decision_format):
    observer, _ = _observer(decision_format)
    sent = observer.request(observer.messages())["schema"]
    expected = schemas.OBSERVER if decision_format == "standard" else \
        schemas.compact_schema(TaskType.LOCALIZATION, ["api", "db"])
    assert sent == expected


@pytest.mark.parametrize("decision_format, task_type, decision", [
    ("standard", TaskType.DETECTION, {"next": "submit", "answer": "Yes"}),
    ("standard", TaskType.ANALYSIS, {"phase": "submit", "next": "submit",
                                     "answer": {"system_level": SYSTEM_LEVELS[0], "fault_type": FAULT_TYPES[0]}}),
    ("standard", TaskType.LOCALIZATION, {"next": "probe", "instruction": "Survey namespace shop", "plan": ["a"]}),
    ("compact", TaskType.LOCALIZATION, {"next": "submit", "answer": ["api"]}),
    ("compact", TaskType.MITIGATION, {"next": "submit"}),
    ("compact", TaskType.DETECTION, {"next": "probe", "instruction": "Survey namespace shop"}),
])
def test_every_decision_valid_under_the_schema_sent_is_accepted(decision_format, task_type, decision):
    observer, model = _observer(decision_format, task_type, [(Role.OBSERVER, json.dumps(decision))])
    with contextlib.suppress(Submitted):
        observer.step()
    validate(decision, model.sent[0]["schema"])
    assert observer.recorder.trajectory.steps[0].status == Status.OK and observer.memory.decisions
