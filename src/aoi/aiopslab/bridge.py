"""The bridge env: what AOI's runtime drives when AIOpsLab's Orchestrator, not AOI, performs the actions.

The runtime calls `step(action, role)` from its worker thread; the action goes out through one queue (get_action
returns it to AIOpsLab) and the step waits on the other for the next observation AIOpsLab hands to get_action.
"""

from __future__ import annotations

import queue
import re
from dataclasses import dataclass
from types import SimpleNamespace

from aoi.env.parser import ParseError, ParsedAction, parse
from aoi.problems.model import TASK_TYPES
from aoi.safety import exports, gate

FIRST = "Please take the next action"
SUFFIX = "\n" + FIRST
SUBMITTED = "1"  # what AIOpsLab records for a submission (SubmissionStatus.VALID_SUBMISSION)
ENDED = ("The orchestrator ended the episode (AIOpsLab took its last step or stopped); nothing more can run. "
         "Finish now.")
LAST_STEP = "This was the last step AIOpsLab allows; its result is not shown. Finish now."
END = object()  # sentinel: no more actions (worker done) / no more observations (orchestrator done)
SUBMIT_ARGS = (("has_anomaly", "detection"), ("faulty_components", "localization"), ("analysis", "analysis"))


@dataclass(frozen=True)
class TaskInfo:
    """What the runtime reads of a problem, when AIOpsLab's problem is not in AOI's registry."""

    id: str
    task_type: str
    family: str = ""
    target: str | None = None


def clean(observation) -> str:
    """Return an observation as text without AIOpsLab's next-action suffix (None and non-strings tolerated).

    Example:
        >>> clean("pod/geo-1 Running\\nPlease take the next action"), clean(None), clean(FIRST)
        ('pod/geo-1 Running', '', '')
    """
    text = "" if observation is None else observation if isinstance(observation, str) else str(observation)
    if text == FIRST:
        return ""
    return text.removesuffix(SUFFIX)


def task_info(problem_id: str | None, description: str, apis: dict | None) -> object:
    """Return AOI's Problem for a known id, else a TaskInfo with the task type read from the id or the prompts.

    Example:
        >>> task_info("misconfig_app_hotel_res-localization-1", "", {}).family
        'misconfig_app'
        >>> task_info(None, "", {"submit": "submit(has_anomaly: str)"}).task_type
        'detection'
    """
    from aoi.problems.registry import make

    if problem_id:
        try:
            return make(problem_id)
        except (KeyError, ValueError):  # an id AIOpsLab has and AOI's registry does not
            pass
    return _inferred(problem_id, description, apis)


def _inferred(problem_id: str | None, description: str, apis: dict | None) -> TaskInfo:
    """Guess the task type: from the id's words, then the submit signature, then the description."""
    words = re.split(r"[-_]", problem_id or "")
    for task in TASK_TYPES:
        if task in words:
            return TaskInfo(problem_id, task)
    submit = str((apis or {}).get("submit", ""))
    for argument, task in SUBMIT_ARGS:
        if argument in submit:
            return TaskInfo(problem_id or "aiopslab", task)
    text = description.lower()
    for needle, task in (("mitigat", "mitigation"), ("root cause", "analysis"), ("locali", "localization")):
        if needle in text:
            return TaskInfo(problem_id or "aiopslab", task)
    return TaskInfo(problem_id or "aiopslab", "mitigation" if "submit()" in submit else "detection")


class BridgeEnv:
    """Look like an aoi Env to the runtime; every step is one action played by AIOpsLab through two queues."""

    backend = SimpleNamespace(name="aiopslab")

    def __init__(self, problem, description: str, instructions: str, actions: dict, max_steps: int,
                 timeout: float | None = None):
        self.problem, self.description, self.instructions, self.actions = problem, description, instructions, actions
        self.max_steps, self.timeout = max_steps, timeout
        self.outbox: queue.Queue = queue.Queue()  # actions for get_action to return
        self.inbox: queue.Queue = queue.Queue()  # observations get_action received
        self.steps, self.done, self.results = 0, False, None
        self.exchanges: list[dict] = []  # {role, action, observation} of every action AIOpsLab played
        self.exports = exports.Exports()  # the files AIOpsLab said it exported: the only ones read_* may name

    def reset(self) -> str:
        """Return the task text (AIOpsLab already deployed and injected)."""
        docs = "\n\n".join(f"{name}:\n{doc}" for name, doc in (self.actions or {}).items())
        return f"{self.description}\n\n{self.instructions}\n\nAvailable actions:\n\n{docs}"

    def step(self, action_text: str, role: str | None = None) -> tuple[str, float, bool, bool, dict]:
        """Hand one action to AIOpsLab and wait for its observation."""
        if self.done:
            raise RuntimeError("the episode is over; AIOpsLab takes no more actions")
        try:
            action = parse(action_text)
        except ParseError as exc:  # never sent: AIOpsLab would only answer with the same error
            return str(exc), 0.0, False, False, {"steps": self.steps, "role": role, "sent": False}
        refusal = self.refusal(action, role)
        if refusal:  # never sent: AIOpsLab runs commands in a real shell with admin rights
            return refusal, 0.0, False, False, {"steps": self.steps, "role": role, "sent": False}
        submitted = action.api == "submit"
        self.steps += 1
        last = self.steps >= self.max_steps
        self.done = submitted or last
        self.outbox.put(action_text)
        observation = SUBMITTED if submitted else LAST_STEP if last else self._receive()
        if action.api in ("get_metrics", "get_traces"):
            self.exports.note(observation)
        self.exchanges.append({"role": role, "action": action_text, "observation": observation})
        info = {"steps": self.steps, "role": role, "sent": True}
        if self.done:
            return observation, 0.0, submitted, not submitted, info
        return observation + SUFFIX, 0.0, False, False, info

    def refusal(self, action: ParsedAction, role: str | None) -> str | None:
        """Return why an action may not reach AIOpsLab (the role's command policy, a file it did not export)."""
        if action.api == "exec_shell":
            verdict = gate.check(action.args[0] if action.args else "", role)
            return None if verdict.allowed else f"Error: Forbidden by AOI's command policy ({role or 'admin'} role): {verdict.reason}"
        if action.api in ("read_metrics", "read_traces"):
            path = action.args[0] if action.args else action.kwargs.get("file_path")
            return None if self.exports.allows(path) else exports.REFUSED.replace("read_file", action.api)
        return None

    def _receive(self) -> str:
        """Wait for AIOpsLab's observation; an ended episode answers ENDED and uses up the step budget."""
        try:
            item = self.inbox.get(timeout=self.timeout)
        except queue.Empty:
            item = END
        if item is END:
            self.close()
            return ENDED
        return item

    def close(self) -> None:
        """End the episode: the runtime sees no steps left, and a step waiting for an observation returns."""
        self.done, self.steps = True, max(self.steps, self.max_steps)
        self.inbox.put(END)
