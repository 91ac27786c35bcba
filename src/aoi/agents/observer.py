"""The Observer: the loop's role that plans, dispatches the probe and executor, keeps a compact memory and submits.

It overrides how its messages are built (from memory, within its context budget, each step afresh) and what a reply
does: its tools are `probe` and `execute` (a sub-agent runs the decision's instruction; the compressed report goes
to memory) and `submit` (ends the loop). It submits exactly once, in the task's format, also when its iterations or
the environment's steps run out.

Decisions come in one of two formats (`agent.decision_format`): the standard one (phase, plan, hypotheses, next,
instruction, context, answer) for API models and the expert, and the compact one (next, instruction or answer, the
answer chosen from the prompt's answer choices: aoi.models.compact) for small local models, which `auto` picks for
any model that declares it (`decision_format = "compact"`) or whose name starts with `local:`. A compact decision
writes no context: the sub-agent is told the namespace and the findings the prompt showed.

Each call sends the decision's schema (aoi.models.schemas) and what the prompt says as data (`request`: an
aoi.models.expert.contract.ObserverContext), which the expert decides from instead of reading the prompt's text.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from aoi.agents.actions import FormatError, extract_json, submit_action
from aoi.agents.compressor import Compressor
from aoi.agents.guidance import Guide, line, mark, situation
from aoi.agents.loop import LimitsExceeded, Loop, Recorder, Retry, SubAgent, Submitted, render, reply_text
from aoi.agents.memory import Finding, Memory, as_text
from aoi.agents.tools import render_team
from aoi.models.base import ModelError
from aoi.models.compact import COMPACT, STANDARD, answer_choices, choices_line
from aoi.models.expert import contract
from aoi.models.schemas import NEXT_STEPS, OBSERVER, compact_schema
from aoi.protocols import Model, Role, Status
from aoi.tasks import FAULT_TYPES, SYSTEM_LEVELS, TaskType


def _one_of(values: tuple[str, ...]) -> str:
    """Write values as alternatives of quoted strings: "a" | "b"."""
    return " | ".join(f'"{value}"' for value in values)


ANSWER_FORMATS = {
    TaskType.DETECTION: '"Yes" or "No" (is there a fault?)',
    TaskType.LOCALIZATION: 'a list of the faulty components\' names, e.g. ["user-service"] (empty list: no fault)',
    TaskType.ANALYSIS: f'{{"system_level": {_one_of(SYSTEM_LEVELS)}, "fault_type": {_one_of(FAULT_TYPES)}}}',
    TaskType.MITIGATION: "null (submit after the fix is made and verified)",
}
FORMATS = ("auto", STANDARD, COMPACT)  # agent.decision_format
MODEL_ERROR_LIMIT = 3  # failed model calls in a row (each already retried by the model) that end the episode


@dataclass
class Team:
    """The sub-agents the Observer dispatches."""

    probe: SubAgent
    executor: SubAgent | None  # None: the task type forbids changes


@dataclass(kw_only=True)
class Episode:
    """What the Observer works on and answers to."""

    task_type: str
    description: str
    max_iterations: int
    submit: Callable[[str], str]  # submit action text -> the environment's observation
    steps_left: Callable[[], int]  # environment actions left
    decision_format: str = STANDARD  # standard | compact (see the module's docstring)
    namespace: str = ""  # the app's namespace (a compact decision's sub-agent is told it)
    components: tuple[str, ...] = ()  # the app's components: the names a compact localization answer may give


def decision_format(setting: str, model: Model) -> str:
    """Return the decision format a run's Observer uses: the setting, or for `auto` the model's own.

    Example:
        >>> from aoi.models.replay import ReplayModel
        >>> decision_format("auto", ReplayModel([])), decision_format("compact", ReplayModel([]))
        ('standard', 'compact')
    """
    if setting not in FORMATS:
        raise ValueError(f"unknown decision format {setting!r}; use {', '.join(FORMATS)} (agent.decision_format)")
    if setting != "auto":
        return setting
    declared_format = getattr(model, "decision_format", None)
    if declared_format in (STANDARD, COMPACT):
        return declared_format
    return COMPACT if str(getattr(model, "name", "")).startswith("local:") else STANDARD


class Observer(Loop):
    """Decide, iteration by iteration, until it submits (or must)."""

    def __init__(self, model: Model, team: Team, recorder: Recorder, compress: Compressor, memory: Memory,
                 episode: Episode, guide: Guide | None = None):
        super().__init__(Role.OBSERVER, model, recorder)
        self.team, self.compress, self.memory, self.episode = team, compress, memory, episode
        self.guide, self.shown = guide, []  # guidance (None: off) and the entry ids the current prompt shows
        self.answer: object = None
        self.feedback = ""  # what the next prompt says about the last step (an invalid reply, a failed call)
        self.findings = ""  # the findings the last prompt showed (a compact decision's sub-agent gets them)

    def run(self) -> object:
        """Work the task, submit exactly once, and return the answer submitted."""
        self.answer, self.feedback = None, ""
        try:
            super().run()
        except LimitsExceeded:  # out of iterations: submit what it has
            self.recorder.trajectory.forced_submit = True
        action = submit_action(self.episode.task_type, self.answer)
        self.recorder.record(self.role, [], None, action=action, observation=self.episode.submit(action))
        return self.answer

    def messages(self) -> list[dict]:
        """Build the prompt within the context budget (the memory decides which findings fit)."""
        if self.episode.decision_format == COMPACT:
            return self._compact_messages()
        e, iteration = self.episode, self.calls
        warning = " This is your last iteration: submit now." if iteration == e.max_iterations else ""
        system = {"role": "system", "content": render("observer", "system", answer_format=ANSWER_FORMATS[e.task_type],
                                                      team=render_team())}
        description = e.description + self._guidance()

        def build(findings: str) -> list[dict]:
            user = render("observer", "user", task_type=e.task_type, description=description,
                          answer_format=ANSWER_FORMATS[e.task_type], iteration=iteration,
                          max_iterations=e.max_iterations, steps_left=e.steps_left(), warning=warning,
                          plan=self.memory.render_plan(), findings=findings,
                          decisions=self.memory.render_decisions(), feedback=self.feedback)
            return [system, {"role": "user", "content": user}]

        return self.memory.prompt(build)

    def _compact_messages(self) -> list[dict]:
        """Build the compact format's prompt: the answer choices instead of the answer format, no plan."""
        e, iteration = self.episode, self.calls
        warning = " This is your last iteration: submit now." if iteration == e.max_iterations else ""
        forms = ["form_probe"] + (["form_execute", "form_submit_none"] if e.task_type == TaskType.MITIGATION
                                  else ["form_submit"])
        system = {"role": "system", "content": render("observer_compact", "system", team=render_team(),
                                                      forms="\n".join(render("observer_compact", f) for f in forms))}
        choices = choices_line(e.task_type, answer_choices(e.task_type, self._components()))
        description = e.description + self._guidance()

        def build(findings: str) -> list[dict]:
            self.findings = findings
            user = render("observer_compact", "user", task_type=e.task_type, description=description,
                          choices=choices, iteration=iteration, max_iterations=e.max_iterations,
                          steps_left=e.steps_left(), warning=warning, findings=findings,
                          decisions=self.memory.render_decisions(), feedback=self.feedback)
            return [system, {"role": "user", "content": user}]

        return self.memory.prompt(build)

    def request(self, messages: list[dict]) -> dict:
        """Send the decision's schema and what the prompt just built says, as data (the expert reads it)."""
        e, compact = self.episode, self.episode.decision_format == COMPACT
        schema = compact_schema(e.task_type, answer_choices(e.task_type, self._components())) if compact else OBSERVER
        context = contract.ObserverContext(task_type=e.task_type, namespace=e.namespace, iteration=self.calls,
                                           max_iterations=e.max_iterations, steps_left=e.steps_left(),
                                           findings=tuple(self.memory.shown), compact=compact)
        return {"schema": schema, "context": context}

    def _components(self) -> list[str]:
        """Return the app's components the findings name (all of them while none is named)."""
        seen = "\n".join(f.text for f in self.memory.findings)
        named = [c for c in self.episode.components if re.search(rf"(?<![\w-]){re.escape(c)}(?![\w-])", seen)]
        return named or list(self.episode.components)

    def step(self) -> None:
        """Take one step; with guidance, its records name the entries the prompt showed."""
        first = len(self.recorder.trajectory.steps)
        try:
            super().step()
        finally:
            if self.guide is not None:
                mark(self.recorder.trajectory, first, self.shown)

    def _guidance(self) -> str:
        """Pick the guidance entries for this prompt (kept for the record) and render them; "" without a guide."""
        if self.guide is None:
            return ""
        shown = self.guide.select(self.episode.task_type, situation(self.episode.description, self.memory))
        self.shown = [entry.id for entry in shown]
        return "\n\n" + render("observer", "guidance", entries="\n".join(map(line, shown))) if shown else ""

    def execute(self, messages: list[dict], completion) -> None:
        """Remember the decision; submit, or dispatch its instruction to a sub-agent."""
        decision = extract_json(reply_text(completion))
        if decision.get("next") not in NEXT_STEPS:
            raise FormatError(f'"next" must be one of {", ".join(NEXT_STEPS)}')
        self.recorder.record(self.role, messages, completion)
        self.feedback = ""
        self.memory.add_decision(self.calls, decision)
        self.answer = decision.get("answer", self.answer)
        if decision["next"] == "submit" or self.calls == self.episode.max_iterations or self.episode.steps_left() <= 2:
            self.recorder.trajectory.forced_submit = decision["next"] != "submit"  # the limits chose, not the model
            raise Submitted(self.answer)
        self._dispatch(decision)

    def feed(self, messages: list[dict], completion, text: str, status: Status, action: str = "") -> None:
        """Record the step (the Observer reads no raw output) and say `text` in the next prompt."""
        self.recorder.record(self.role, messages, completion, action, status=status)
        self.feedback = text

    def format_feedback(self, error: FormatError) -> str:
        """Return what the next prompt says about an invalid decision."""
        return f"\nYour previous reply was not a valid decision: {error}. Reply with the JSON object only.\n"

    def model_failed(self, error: ModelError) -> Exception:
        """Decide again after a failed call; MODEL_ERROR_LIMIT failures in a row end the episode."""
        if self.failures >= MODEL_ERROR_LIMIT:
            return ModelError(f"the observer's model failed {MODEL_ERROR_LIMIT} times in a row (each call "
                              f"already retried); last error: {error}")
        self.feedback = f"\nYour model call failed ({error}); decide again."
        return Retry()

    def check_limits(self) -> None:
        """End the loop after the last iteration."""
        if self.calls >= self.episode.max_iterations:
            raise LimitsExceeded(f"{self.calls} iterations")

    def _dispatch(self, decision: dict) -> None:
        """Run the probe or the executor on the decision's instruction; remember what it reports."""
        instruction, context = str(decision.get("instruction", "")), decision.get("context", "")
        context, findings = context if isinstance(context, str) else str(context), ()
        if self.episode.decision_format == COMPACT:
            context = render("observer_compact", "context", namespace=self.episode.namespace, findings=self.findings)
            findings = tuple(self.memory.shown)  # what self.findings renders, as data
        agent = self.team.probe if decision["next"] == "probe" else self.team.executor
        if agent is None:
            self.feedback = (f"\nChanging the system is not allowed in a {self.episode.task_type} task; investigate "
                             "with the probe and submit your answer.\n")
            return
        try:
            text = as_text(agent.run(instruction, context, findings))
        except LimitsExceeded as stop:
            text = self._unfinished(agent, str(stop))
        report = self.compress(text, command=f'the {agent.role}\'s report on "{contract.key(instruction)}"')
        self.memory.add_finding(Finding(self.calls, agent.role, instruction, report))

    def _unfinished(self, agent: SubAgent, reason: str) -> str:
        """Summarise what a sub-agent saw when it did not finish its report itself."""
        seen = self.compress("\n".join(agent.observations[-3:]), command=f"the {agent.role}'s last tool calls")
        return f"(the sub-agent {reason}; its last observations, condensed:)\n{seen}"
