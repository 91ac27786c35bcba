"""The bridge env: what AOI's runtime drives when AIOpsLab's Orchestrator, not AOI, performs the actions.

The runtime calls `step(action, role)` from its worker thread; the action goes out through one queue (get_action
returns it to AIOpsLab) and the step waits on the other for the next observation AIOpsLab hands to get_action.
Every step is one reply AIOpsLab records and charges (orchestrator.py:108-109, tasks/base.py:48), refused ones too.
"""

from __future__ import annotations

import queue
import re
from dataclasses import dataclass
from types import SimpleNamespace

from aoi.env.parser import ParsedAction, ParseError, parse
from aoi.safety import exports, gate
from aoi.tasks import NEXT_ACTION, NEXT_SUFFIX, SUBMITTED, TASK_TYPES, TASKS, TaskType

ENDED = ("The orchestrator ended the episode (AIOpsLab took its last step or stopped); nothing more can run. "
         "Finish now.")
LAST_STEP = "This was the last step AIOpsLab allows; its result is not shown. Finish now."
REFUSED_NOTE = "[AOI refused this action before it reached AIOpsLab]"
ENV_VERSION = "aiopslab"  # the environment is AIOpsLab's own: aoi.env.ENV_VERSION does not describe it
END = object()  # sentinel: no more actions (worker done) / no more observations (orchestrator done)


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
        >>> clean("pod/geo-1 Running\\nPlease take the next action"), clean(None), clean(NEXT_ACTION)
        ('pod/geo-1 Running', '', '')
    """
    text = "" if observation is None else observation if isinstance(observation, str) else str(observation)
    if text == NEXT_ACTION:
        return ""
    return text.removesuffix(NEXT_SUFFIX)


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
    for declared in TASKS.values():  # its submit's parameter: has_anomaly, faulty_components, analysis
        if declared.argument and declared.argument in submit:
            return TaskInfo(problem_id or "aiopslab", declared.type)
    text = description.lower()
    for needle, task in (("mitigat", TaskType.MITIGATION), ("root cause", TaskType.ANALYSIS),
                         ("locali", TaskType.LOCALIZATION)):
        if needle in text:
            return TaskInfo(problem_id or "aiopslab", task)
    return TaskInfo(problem_id or "aiopslab", TaskType.MITIGATION if "submit()" in submit else TaskType.DETECTION)


def _parsed(action_text: str) -> ParsedAction | None:
    """Return the action AIOpsLab's parser rules read, or None (AIOpsLab answers its own parse error)."""
    try:
        return parse(action_text)
    except ParseError:
        return None


def refused_reply(refusal: str) -> str:
    """Return the note sent to AIOpsLab for a refused action: no fence, so its parser rejects it (a charged step).

    Example:
        >>> refused_reply("Error: `kubectl delete` is not allowed")
        "[AOI refused this action before it reached AIOpsLab] Error: 'kubectl delete' is not allowed"
    """
    return f"{REFUSED_NOTE} {refusal.replace('`', chr(39))}"


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
        self.exchanges: list[dict] = []  # {role, action, sent, observation} of every reply AIOpsLab took
        self.exports = exports.Exports()  # the files AIOpsLab said it exported: the only ones read_* may name

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[str, dict]:
        """Return the task text and info (AIOpsLab already deployed and injected: it owns seeds and options)."""
        if seed is not None or options:
            raise ValueError("AIOpsLab starts its own episodes: the bridge env takes no seed or options")
        docs = "\n\n".join(f"{name}:\n{doc}" for name, doc in (self.actions or {}).items())
        p = self.problem
        info = {"problem_id": getattr(p, "id", None), "task_type": getattr(p, "task_type", None),
                "family": getattr(p, "family", ""), "target": getattr(p, "target", None), "backend": "aiopslab",
                "env_version": ENV_VERSION, "description": self.description, "max_steps": self.max_steps}
        return f"{self.description}\n\n{self.instructions}\n\nAvailable actions:\n\n{docs}", info

    def step(self, action_text: str, role: str | None = None) -> tuple[str, float, bool, bool, dict]:
        """Hand one reply to AIOpsLab (every reply is a step there) and wait for its observation.

        A reply AOI's policy refuses goes as a note AIOpsLab cannot parse (charged, never run) and the team sees the
        refusal. A submit waits too: AIOpsLab answers a refused one with its error and goes on; an accepted one
        ends its loop, and the episode's end (close) answers "1".
        """
        if self.done:
            raise RuntimeError("the episode is over; AIOpsLab takes no more actions")
        action = _parsed(action_text)
        refusal = self.refusal(action, role) if action else None
        sent = refused_reply(refusal) if refusal else action_text
        submitted = refusal is None and action is not None and action.api == "submit"
        observation = self._exchange(sent, submitted)
        accepted = submitted and observation == SUBMITTED
        self.done = self.done or accepted
        observation = refusal or observation
        if action and action.api in ("get_metrics", "get_traces"):
            self.exports.note(observation)
        self.exchanges.append({"role": role, "action": action_text, "sent": sent, "observation": observation})
        suffix = "" if self.done else NEXT_SUFFIX
        info = {"steps": self.steps, "role": role, "sent": refusal is None, "refused": refusal is not None,
                "exit_status": None, "cut": None,  # AIOpsLab answers with text alone: no exit status, no cause
                "accepted": accepted if submitted else None, "suffix": suffix}  # env.step's keys (aoi.env.core)
        if self.done:
            return observation, 0.0, accepted, not accepted, info
        return observation + suffix, 0.0, False, False, info

    def _exchange(self, sent: str, submitted: bool) -> str:
        """Count the step, hand the reply to AIOpsLab and return its answer (none comes after the last step)."""
        self.steps += 1
        last = self.steps >= self.max_steps
        self.done = last  # before the reply goes: get_action reads it to know whether an answer comes back
        self.outbox.put(sent)
        return (SUBMITTED if submitted else LAST_STEP) if last else self._receive(submitted)

    def refusal(self, action: ParsedAction, role: str | None) -> str | None:
        """Return why an action may not reach AIOpsLab (the role's command policy, a file it did not export)."""
        if action.api == "exec_shell":
            verdict = gate.check(action.args[0] if action.args else "", role)
            return None if verdict.allowed else gate.forbidden(role, verdict.reason)
        if action.api in ("read_metrics", "read_traces"):
            path = action.args[0] if action.args else action.kwargs.get("file_path")
            return None if self.exports.allows(path) else exports.REFUSED.replace("read_file", action.api)
        return None

    def _receive(self, submitted: bool = False) -> str:
        """Wait for AIOpsLab's observation; an ended episode answers ENDED (or "1": it accepted the submit)."""
        try:
            item = self.inbox.get(timeout=self.timeout)
        except queue.Empty:
            item = None
        if item is END or item is None:
            self.close()
            return SUBMITTED if submitted and item is END else ENDED  # an accepted submit ends AIOpsLab's loop
        return item

    def close(self) -> None:
        """End the episode: the runtime sees no steps left, and a step waiting for an observation returns."""
        self.done, self.steps = True, max(self.steps, self.max_steps)
        self.inbox.put(END)

    def __enter__(self) -> BridgeEnv:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
