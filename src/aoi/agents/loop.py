"""The one loop every role runs: ask the model, parse its tool call, run the tool behind the guards, repeat."""

from __future__ import annotations

import hashlib
import json
import string
import time
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Callable

import yaml

from aoi.agents.actions import FormatError, ToolCall, parse_tool_call
from aoi.models.base import Model, ModelError
from aoi.trajectory import Step, Trajectory

PROMPTS = Path(__file__).with_name("prompts.yaml")
REPEATED = ("You already ran exactly this ({tool} {args}) in this task; its result is above. Run something "
            "different, or finish with what you know.")


@lru_cache(maxsize=1)
def prompts() -> dict:
    """Load the role prompts."""
    return yaml.safe_load(PROMPTS.read_text())


def render(role: str, part: str, **values) -> str:
    """Fill one prompt template; missing values are an error naming the placeholder."""
    try:
        return string.Template(prompts()[role][part]).substitute(values)
    except KeyError as exc:
        raise KeyError(f"prompt {role}.{part} needs a value for ${exc.args[0]}") from None


def reply_text(completion) -> str:
    """Return a reply's text; FormatError when the model sent none, so an odd reply becomes feedback, not a crash.

    Example:
        >>> from aoi.models.base import Completion
        >>> reply_text(Completion({"next": "probe"}))
        Traceback (most recent call last):
        aoi.agents.actions.FormatError: your reply was a dict, not text; answer with text only
    """
    text, meta = completion.text, getattr(completion, "meta", None)
    if not isinstance(text, str):
        raise FormatError(f"your reply was a {type(text).__name__}, not text; answer with text only")
    malformed = meta.get("malformed") if isinstance(meta, dict) else None
    if malformed and not text.strip():
        raise FormatError(f"your reply had no text ({malformed}); answer with text only")
    return text


def _text(completion) -> str:
    """Return a completion's text as a string for the record and the conversation (JSON for other shapes)."""
    text = completion.text if completion else ""
    return text if isinstance(text, str) else json.dumps(text, default=str)


@dataclass
class Stats:
    """What the guards counted (become metrics and training signals)."""

    format_errors: int = 0
    repeated: int = 0
    refused: int = 0
    oversized: int = 0
    model_errors: int = 0

    def add(self, other: "Stats") -> None:
        for key in vars(self):
            setattr(self, key, getattr(self, key) + getattr(other, key))


@dataclass
class Tool:
    """A declared tool: runs with keyword arguments and returns (observation, status, env action text)."""

    name: str
    run: Callable[..., tuple[str, str, str]]


@dataclass
class Recorder:
    """Append every model call to the trajectory, with the full messages sent (the training data) and their hash."""

    trajectory: Trajectory
    started: float = field(default_factory=time.monotonic)
    on_step: Callable[[Step], None] | None = None

    def record(self, role: str, messages: list[dict], completion, action: str = "", observation: str = "",
               status: str = "ok") -> Step:
        """Store one step."""
        digest = hashlib.sha256(json.dumps(messages, sort_keys=True).encode()).hexdigest()
        step = Step(role, _text(completion), action, observation,
                    input_tokens=completion.input_tokens if completion else 0,
                    output_tokens=completion.output_tokens if completion else 0,
                    latency=completion.latency if completion else 0.0, t=round(time.monotonic() - self.started, 3),
                    prompt_hash=digest, logprobs=completion.logprobs if completion else None, status=status,
                    messages=list(messages))
        self.trajectory.steps.append(step)
        if self.on_step:
            self.on_step(step)
        return step


@dataclass
class RoleRun:
    """The outcome of one role call."""

    result: dict
    calls: int
    stats: Stats
    finished: bool  # False: the budget ran out (or the model failed) before the role finished
    observations: list[str] = field(default_factory=list)


class RoleLoop:
    """Run one role (probe or executor) on one instruction."""

    def __init__(self, role: str, model: Model, tools: dict[str, Tool], recorder: Recorder, budget: int,
                 fit: Callable[..., str], steps_left: Callable[[], int], repeat_limit: int = 1,
                 output_cap: int = 12000):
        self.role, self.model, self.tools, self.recorder = role, model, tools, recorder
        self.budget, self.fit, self.steps_left = budget, fit, steps_left
        self.repeat_limit, self.output_cap = repeat_limit, output_cap
        self.seen: dict[str, int] = {}  # calls made in the current instruction and how often (the repeat guard)

    def run(self, instruction: str, context: str) -> RoleRun:
        """Loop until the role finishes, runs out of calls, or the environment runs out of steps."""
        messages = [{"role": "system", "content": render(self.role, "system", budget=self.budget)},
                    {"role": "user", "content": render(self.role, "user", instruction=instruction, context=context)}]
        stats, observations = Stats(), []
        self.seen = {}  # a new instruction may rightly re-run a command: the state has changed since
        for calls in range(1, self.budget + 2):
            try:
                completion = self.model.complete(messages, role=self.role)
            except ModelError as exc:
                stats.model_errors += 1
                self.recorder.record(self.role, messages, None, observation=str(exc), status="error")
                return RoleRun({"error": str(exc)}, calls, stats, False, observations)
            outcome = self._turn(messages, completion, stats, calls > self.budget)
            if outcome is not None:
                return RoleRun(outcome, calls, stats, True, observations)
            observations.append(messages[-1]["content"])
            if self.steps_left() <= 1:
                break
        return RoleRun({}, self.budget, stats, False, observations)

    def _turn(self, messages: list[dict], completion, stats: Stats, last: bool) -> dict | None:
        """Handle one reply; return the final result when the role finished."""
        names = list(self.tools) + ["finish"]
        try:
            call = parse_tool_call(reply_text(completion), names)
        except FormatError as exc:
            stats.format_errors += 1
            return self._answer(messages, completion, f"Format error: {exc}", "format_error")
        if call.tool == "finish":
            self.recorder.record(self.role, messages, completion)
            return call.args
        if last:
            return self._answer(messages, completion, "No tool calls left: finish now with what you know.", "budget")
        self._act(messages, completion, call, stats)
        return None

    def _act(self, messages, completion, call: ToolCall, stats: Stats) -> None:
        """Run a tool call behind the repeat and size guards."""
        if self.seen.get(call.key(), 0) >= self.repeat_limit:
            stats.repeated += 1
            text = REPEATED.format(tool=call.tool, args=json.dumps(call.args))
            return self._answer(messages, completion, text, "repeated")
        self.seen[call.key()] = self.seen.get(call.key(), 0) + 1
        try:
            observation, status, action = self.tools[call.tool].run(**call.args)
        except TypeError as exc:
            observation, status, action = f"Error: wrong arguments for {call.tool}: {exc}", "error", ""
        stats.refused += status == "refused"
        capped = observation[: self.output_cap]
        fitted = self.fit(capped, command=str(call.args.get("command") or f"{call.tool} {json.dumps(call.args)}"))
        if fitted != observation:  # cut or summarised
            stats.oversized += 1
            fitted += f"\n[output was {len(observation)} characters; summarised. Narrow the command (grep, -l, --tail)]"
        self._answer(messages, completion, fitted, status, action)

    def _answer(self, messages, completion, text: str, status: str, action: str = "") -> None:
        """Record the step and feed the observation back to the model."""
        self.recorder.record(self.role, messages, completion, action, text, status)
        messages += [{"role": "assistant", "content": _text(completion)}, {"role": "user", "content": text}]
