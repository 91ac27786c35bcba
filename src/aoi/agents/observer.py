"""The Observer: plan, dispatch the probe and executor, keep a compact memory, and submit in the task's format."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from aoi.agents.actions import FormatError, extract_json, submit_action
from aoi.agents.compressor import Compressor
from aoi.agents.loop import Recorder, RoleLoop, Stats, render, reply_text
from aoi.agents.memory import Finding, Memory, as_text
from aoi.models.base import Model, ModelError

ANSWER_FORMATS = {
    "detection": '"Yes" or "No" (is there a fault?)',
    "localization": 'a list of the faulty components\' names, e.g. ["user-service"] (empty list: no fault)',
    "analysis": '{"system_level": "Hardware" | "Operating System" | "Virtualization" | "Application", '
                '"fault_type": "Misconfiguration" | "Code Defect" | "Authentication Issue" | '
                '"Network/Storage Issue" | "Operation Error" | "Dependency Problem"}',
    "mitigation": "null (submit after the fix is made and verified)",
}
NEXT_STEPS = ("probe", "execute", "submit")
MODEL_ERROR_LIMIT = 3  # failed model calls in a row (each already retried by the model) that end the episode


@dataclass
class Team:
    """The sub-agents the Observer dispatches."""

    probe: RoleLoop
    executor: RoleLoop | None  # None: the task type forbids changes


@dataclass
class ObserverRun:
    """What the Observer ended with."""

    submitted: bool
    answer: object
    iterations: int
    stats: Stats = field(default_factory=Stats)


class Observer:
    """Decide, iteration by iteration, until it submits (or must)."""

    def __init__(self, model: Model, team: Team, recorder: Recorder, compress: Compressor, memory: Memory,
                 max_iterations: int, submit: Callable[[str], str], steps_left: Callable[[], int]):
        self.model, self.team, self.recorder, self.compress = model, team, recorder, compress
        self.memory, self.max_iterations, self.submit, self.steps_left = memory, max_iterations, submit, steps_left
        self.failures_in_a_row = 0  # failed model calls since the last answer

    def run(self, task_type: str, description: str) -> ObserverRun:
        """Work the task and submit exactly once."""
        stats, feedback, answer = Stats(), "", None
        self.failures_in_a_row = 0
        for iteration in range(1, self.max_iterations + 1):
            decision, feedback = self._decide(task_type, description, iteration, feedback, stats)
            if decision is None:
                continue
            self.memory.add_decision(iteration, decision)
            answer = decision.get("answer", answer)
            must_submit = iteration == self.max_iterations or self.steps_left() <= 2
            if decision.get("next") == "submit" or must_submit:
                self._submit(task_type, answer)
                return ObserverRun(True, answer, iteration, stats)
            feedback = self._dispatch(decision, task_type, iteration, stats)
        self._submit(task_type, answer)
        return ObserverRun(True, answer, self.max_iterations, stats)

    def _decide(self, task_type, description, iteration, feedback, stats) -> tuple[dict | None, str]:
        """Ask the model for a decision; a malformed one becomes feedback for the next iteration."""
        messages = self._prompt(task_type, description, iteration, feedback)
        try:
            completion = self.model.complete(messages, role="observer")
        except ModelError as exc:
            stats.model_errors += 1
            self.recorder.record("observer", messages, None, observation=str(exc), status="error")
            self.failures_in_a_row += 1
            if self.failures_in_a_row >= MODEL_ERROR_LIMIT:
                raise ModelError(f"the observer's model failed {MODEL_ERROR_LIMIT} times in a row (each call "
                                 f"already retried); last error: {exc}") from exc
            return None, f"\nYour model call failed ({exc}); decide again."
        self.failures_in_a_row = 0
        try:
            decision = extract_json(reply_text(completion))
            if decision.get("next") not in NEXT_STEPS:
                raise FormatError(f'"next" must be one of {", ".join(NEXT_STEPS)}')
        except FormatError as exc:
            stats.format_errors += 1
            self.recorder.record("observer", messages, completion, status="format_error")
            return None, f"\nYour previous reply was not a valid decision: {exc}. Reply with the JSON object only.\n"
        self.recorder.record("observer", messages, completion)
        return decision, ""

    def _prompt(self, task_type: str, description: str, iteration: int, feedback: str) -> list[dict]:
        """Build the Observer's messages within its context budget (the memory decides which findings fit)."""
        warning = " This is your last iteration: submit now." if iteration == self.max_iterations else ""
        system = {"role": "system", "content": render("observer", "system", answer_format=ANSWER_FORMATS[task_type])}

        def build(findings: str) -> list[dict]:
            user = render("observer", "user", task_type=task_type, description=description,
                          answer_format=ANSWER_FORMATS[task_type], iteration=iteration,
                          max_iterations=self.max_iterations, steps_left=self.steps_left(), warning=warning,
                          plan=self.memory.render_plan(), findings=findings,
                          decisions=self.memory.render_decisions(), feedback=feedback)
            return [system, {"role": "user", "content": user}]

        return self.memory.prompt(build)

    def _dispatch(self, decision: dict, task_type: str, iteration: int, stats: Stats) -> str:
        """Run the probe or the executor on the decision's instruction; remember what it reports."""
        instruction, context = str(decision.get("instruction", "")), decision.get("context", "")
        context = context if isinstance(context, str) else str(context)
        if decision["next"] == "execute" and self.team.executor is None:
            return (f"\nChanging the system is not allowed in a {task_type} task; investigate with the probe and "
                    "submit your answer.\n")
        loop = self.team.probe if decision["next"] == "probe" else self.team.executor
        run = loop.run(instruction, context)
        stats.add(run.stats)
        text = as_text(run.result) if run.finished else self._unfinished(run, loop.role)
        report = self.compress(text, command=f'the {loop.role}\'s report on "{instruction[:160]}"')
        self.memory.add_finding(Finding(iteration, loop.role, instruction, report))
        return ""

    def _unfinished(self, run, role: str) -> str:
        """Summarise what a role saw when it did not finish its report itself."""
        seen = "\n".join(run.observations[-3:])
        reason = run.result.get("error") or "ran out of tool calls before reporting"
        seen = self.compress(seen, command=f"the {role}'s last tool calls")
        return f"(the sub-agent {reason}; its last observations, condensed:)\n{seen}"

    def _submit(self, task_type: str, answer) -> None:
        """Send the answer in the task's exact submit format."""
        action = submit_action(task_type, answer)
        observation = self.submit(action)
        self.recorder.record("observer", [], None, action=action, observation=observation)
