"""Fidelity of what the Observer reads: grounded summaries, each output condensed once, a bounded whole prompt."""

from __future__ import annotations

import json

from aoi.agents.compressor import Compressor
from aoi.agents.grounding import ungrounded
from aoi.agents.memory import Finding, Memory
from aoi.agents.runtime import run_episode
from aoi.config import load_config
from aoi.env import make
from aoi.models.base import Completion
from aoi.models.replay import ReplayModel
from aoi.models.tokens import count_messages

NAMESPACE = "test-hotel-reservation"
BIG = [f"kubectl get {kind} -n {NAMESPACE} -o yaml" for kind in ("deployments", "services", "pods")]
FICTION = ("The output shows a Python web server started with python -m http.server on port 8000, serving "
           "index.html from /srv/www with 1,500 requests per second.")


class Recording:
    """Wrap a model and keep the keyword arguments of every call (role, max_tokens, temperature)."""

    def __init__(self, inner):
        self.inner, self.name, self.kwargs = inner, inner.name, []

    def complete(self, messages, *, role, max_tokens=None, temperature=None, **call):
        self.kwargs.append({"role": role, "max_tokens": max_tokens, "temperature": temperature})
        return self.inner.complete(messages, role=role, max_tokens=max_tokens, temperature=temperature)


class Head:
    """A Compressor model that answers with the first lines of the output it is given (always grounded)."""

    name = "head"

    def __init__(self):
        self.outputs: list[str] = []

    def complete(self, messages, *, role, max_tokens=None, temperature=None, **call):
        output = messages[-1]["content"].split("Output:\n", 1)[1]
        self.outputs.append(output)
        return Completion("\n".join(output.splitlines()[:5]))


def decide(next_: str, instruction: str = "", **extra) -> tuple[str, str]:
    body = {"phase": "survey", "plan": ["survey the pods", "read the logs"], "next": next_,
            "instruction": instruction, "context": "", **extra}
    return "observer", json.dumps(body)


def call(tool: str, **args) -> tuple[str, str]:
    return "probe", json.dumps({"thought": "", "tool": tool, "args": args})


def report(i: int) -> tuple[str, str]:
    lines = "; ".join(f"pod frontend-{i}-{n} Running with 0 restarts" for n in range(40))
    return call("finish", findings=f"check {i}: {lines}", suspects=[])


def run(models: dict, problem_id: str = "noop_detection_hotel_reservation-1", **overrides):
    config = load_config(overrides={"model": "expert", **overrides}, environ={})
    env = make(problem_id, max_steps=100)
    try:
        return run_episode(env, config, models)
    finally:
        env.close()


def test_a_long_episode_keeps_every_observer_prompt_in_budget_and_condenses_each_output_once():
    iterations = 40
    steps = []
    for i in range(1, iterations):
        steps += [decide("probe", f"check {i}"), call("exec_shell", command=BIG[i % 3]), report(i)]
    steps.append(decide("submit", answer="No"))
    script, head = ReplayModel(steps), Head()
    traj = run({"observer": script, "probe": script, "executor": script, "compressor": head},
               **{"agent.max_iterations": iterations})
    script.assert_done()
    prompts = [messages for role, messages in script.requests if role == "observer"]
    assert len(prompts) == iterations and traj.error is None
    assert max(count_messages(p) for p in prompts) <= 4000
    last = prompts[-1][1]["content"]
    assert "Task (detection)" in last and "- survey the pods" in last  # the task and the plan are kept
    assert "To fit the context budget" in last and "check 39: pod frontend-39-0" in last  # the newest in full
    assert 1 <= len(head.outputs) == len(set(head.outputs)) <= len(BIG)  # each raw output condensed once
    assert len([s for s in traj.steps if s.role == "compressor"]) == len(head.outputs)


def test_an_invented_summary_is_replaced_by_the_condenser_and_counted():
    fiction = ReplayModel([("compressor", FICTION)])
    script = ReplayModel([decide("probe", "list the deployments"), call("exec_shell", command=BIG[0]),
                          call("finish", findings="deployments listed", suspects=[]), decide("submit", answer="No")])
    traj = run({"observer": script, "probe": script, "executor": script, "compressor": fiction})
    script.assert_done()
    fiction.assert_done()
    [step] = [s for s in traj.steps if s.role == "compressor"]
    assert step.status == "ungrounded" and "http.server" in step.observation
    seen = [s.observation for s in traj.steps if s.role == "probe" and s.action][0]
    assert "http.server" not in seen and seen.startswith("apiVersion: v1")  # the condenser kept the real output
    prompt = fiction.requests[0][1][1]["content"]
    assert f"Command: {BIG[0]}\n" in prompt  # the Compressor knows what produced the output


def test_each_role_gets_its_configured_max_tokens_and_temperature():
    script = ReplayModel([decide("probe", "list the deployments"), call("exec_shell", command=BIG[0]),
                          ("compressor", "apiVersion: v1"), call("finish", findings="deployments listed", suspects=[]),
                          decide("submit", answer="No")])
    probe, compressor, observer = Recording(script), Recording(script), Recording(script)
    run({"observer": observer, "probe": probe, "executor": probe, "compressor": compressor},
        **{"models.probe": {"temperature": 0.7}, "models.compressor": {"max_tokens": 300}})
    script.assert_done()
    assert {k["temperature"] for k in probe.kwargs} == {0.7}
    assert compressor.kwargs == [{"role": "compressor", "max_tokens": 300, "temperature": None}]
    assert {k["max_tokens"] for k in observer.kwargs} == {None}  # nothing set: the model keeps its own


def test_the_compressor_caches_by_output_and_budget():
    head = Head()
    compress = Compressor(100, head)
    text = "\n".join(f"geo-{n} Running" for n in range(200))
    assert compress(text) == compress(text) and len(head.outputs) == 1
    short = compress(text, 60)
    assert len(head.outputs) == 2 and short == "\n".join(text.splitlines()[:5])  # the model's summary, kept


def test_memory_shortens_then_drops_the_oldest_findings_first_and_says_so():
    memory = Memory(budget=1500)
    for i in range(1, 81):
        memory.add_finding(Finding(i, "probe", f"check {i}", f"pod geo-{i} Running\n" * 40))
    messages = memory.prompt(lambda findings: [{"role": "user", "content": "Task (x)\n" + findings}])
    text = messages[0]["content"]
    assert count_messages(messages) <= 1500
    assert "finding(s) left out (iterations 1, 2, 3," in text and "older finding(s) shortened" in text
    assert '[1] probe on "check 1"' not in text and '[79] probe on "check 79":\n(' in text
    assert '[80] probe on "check 80":\n' + "pod geo-80 Running\n" * 39 in text  # the newest in full


def test_grounding_checks_names_numbers_and_quotes():
    source = "NAME  READY  AGE\nmongodb-geo-5ff578bcb8-x2k4q  1/1  5d\nendpoint 10.244.0.7:27017 refused"
    assert ungrounded("mongodb-geo-5ff578bcb8-x2k4q has been up 5d; 10.244.0.7:27017 refused.", source) == []
    assert ungrounded("mongodb-geo listens on 27018", source) == ["27018"]
    assert ungrounded("user-service-1 is ready", source) == ["user-service-1"]
    assert ungrounded('it logged "connection refused by peer"', source) == ["connection refused by peer"]
