"""The one loop every role runs: `run` -> `step` -> `query` the model -> `execute` its reply, until the role submits.

Exceptions end or redirect the loop: `Submitted` ends it with the role's report (a sub-agent's finish arguments, the
Observer's answer); `LimitsExceeded` ends it before the role finished (out of calls or environment steps, or its
model failed), saying why; `FormatError` (a reply that is no valid call) and `Retry` (a failed model call below the
role's limit) are fed back to the model and the loop goes on. Roles differ by small overrides: how their messages
are built (`messages`), what the call sends beside them (`request`: the reply's schema, a context as data), what a
reply does (`execute`), how feedback reaches the model (`feed`), and their limits.
What the guards count is the steps' statuses (`Trajectory.counts()`), recorded once, by the Recorder.
"""

from __future__ import annotations

import hashlib
import json
import string
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import yaml

from aoi.agents.actions import FormatError, ToolCall, parse_tool_call
from aoi.agents.tools import FINISH, Toolset, render_tools
from aoi.models.base import ModelError
from aoi.models.expert import contract
from aoi.models.schemas import tool_call_schema
from aoi.protocols import Model, Status
from aoi.trajectory import Step, Trajectory

PROMPTS = Path(__file__).with_name("prompts.yaml")
RAN_OUT = "ran out of tool calls before reporting"

__all__ = ["FormatError", "LimitsExceeded", "Loop", "Recorder", "Retry", "SubAgent", "Submitted", "render"]


class Submitted(Exception):
    """The role finished; `result` is its report (a sub-agent) or its answer (the Observer)."""

    def __init__(self, result: object):
        super().__init__("the role finished")
        self.result = result


class LimitsExceeded(Exception):
    """The role stopped before it finished: out of calls or environment steps, or its model failed (the message)."""


class Retry(Exception):
    """The step ended without a usable reply; its feedback is given and the next step starts."""


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


class PromptHash:
    """The sha256 of `json.dumps(messages, sort_keys=True)`, carried on from call to call.

    A sub-agent's conversation grows by appending, so the hash of the messages it already had is extended with the
    new ones only (hashing each whole conversation again was most of the Recorder's time).
    """

    def __init__(self):
        self.parts: list[str] = []  # the JSON of each message hashed so far
        self.hasher = hashlib.sha256(b"[")

    def __call__(self, messages: list[dict]) -> str:
        """Return the hex digest of the messages' JSON (a JSON list is its items' JSON joined by ", ")."""
        parts = [_json(m) for m in messages]
        if parts[:len(self.parts)] != self.parts:  # not the conversation hashed last: start again
            self.parts, self.hasher = [], hashlib.sha256(b"[")
        for part in parts[len(self.parts):]:
            self.hasher.update(((", " if self.parts else "") + part).encode())
            self.parts.append(part)
        digest = self.hasher.copy()
        digest.update(b"]")
        return digest.hexdigest()


def _json(message: dict) -> str:
    """Return json.dumps(message, sort_keys=True); a plain role and content message's is kept (sent again and again)."""
    if len(message) == 2 and type(message.get("role")) is str and type(message.get("content")) is str:
        return _role_content_json(message["role"], message["content"])
    return json.dumps(message, sort_keys=True)


@lru_cache(maxsize=256)
def _role_content_json(role: str, content: str) -> str:
    return json.dumps({"role": role, "content": content}, sort_keys=True)


@dataclass
class Recorder:
    """Append every model call to the trajectory, with the full messages sent (the training data) and their hash."""

    trajectory: Trajectory
    started: float = field(default_factory=time.monotonic)
    on_step: Callable[[Step], None] | None = None
    prompt_hash: PromptHash = field(default_factory=PromptHash, repr=False)

    def record(self, role: str, messages: list[dict], completion, action: str = "", observation: str = "",
               status: Status = Status.OK) -> Step:
        """Store one step."""
        digest = self.prompt_hash(messages)
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


class Loop:
    """What every role shares: run until Submitted, one model call per step, model errors and bad formats handled."""

    def __init__(self, role: str, model: Model, recorder: Recorder):
        self.role, self.model, self.recorder = role, model, recorder
        self.calls = 0  # model calls in this run
        self.failures = 0  # failed model calls in a row

    def run(self) -> object:
        """Step until the role submits and return what it submitted; LimitsExceeded ends it unfinished."""
        self.calls = self.failures = 0
        while True:
            try:
                self.step()
            except Submitted as done:
                return done.result

    def step(self) -> None:
        """Query the model once and execute its reply; feed back what went wrong, then check the limits."""
        self.calls += 1
        messages = self.messages()
        try:
            completion = self.query(messages)
            try:
                self.execute(messages, completion)
            except FormatError as exc:
                self.feed(messages, completion, self.format_feedback(exc), Status.FORMAT_ERROR)
        except Retry:
            pass
        self.check_limits()

    def query(self, messages: list[dict]):
        """Ask the model; a failure is recorded and becomes what `model_failed` decides (an end or a Retry)."""
        try:
            completion = self.model.complete(messages, role=self.role, **self.request(messages))
        except ModelError as exc:
            self.recorder.record(self.role, messages, None, observation=str(exc), status=Status.ERROR)
            self.failures += 1
            raise self.model_failed(exc) from exc
        self.failures = 0
        return completion

    def messages(self) -> list[dict]:
        """Return the messages of the next model call."""
        raise NotImplementedError

    def request(self, messages: list[dict]) -> dict:
        """Return what the call sends beside the messages: the reply's `schema`, a `context` (Model.complete)."""
        return {}

    def execute(self, messages: list[dict], completion) -> None:
        """Act on one reply: raise Submitted when the role is done, FormatError when the reply is unusable."""
        raise NotImplementedError

    def feed(self, messages: list[dict], completion, text: str, status: Status, action: str = "") -> None:
        """Record the step and give `text` back to the model."""
        raise NotImplementedError

    def format_feedback(self, error: FormatError) -> str:
        """Return what the model is told about an unusable reply."""
        return contract.format_error(error)

    def model_failed(self, error: ModelError) -> Exception:
        """Return what a failed model call raises: by default it ends the role's run."""
        return LimitsExceeded(str(error) or RAN_OUT)

    def check_limits(self) -> None:
        """Raise LimitsExceeded when the role may not take another step."""


@dataclass(kw_only=True)
class Guards:
    """What a sub-agent's calls pass before and after they run."""

    budget: int  # tool calls per instruction; one more call may only finish
    fit: Callable[..., str]  # condenses an output to the context budget (the Compressor)
    steps_left: Callable[[], int]  # environment actions left in the episode
    repeat_limit: int = 1  # runs of one exact call per instruction
    output_cap: int = 12000  # characters of an output kept before it is condensed


class SubAgent(Loop):
    """A probe or executor on one instruction: a conversation of tool calls and observations, behind the guards."""

    def __init__(self, role: str, model: Model, tools: Toolset, recorder: Recorder, guards: Guards):
        super().__init__(role, model, recorder)
        self.tools, self.guards = tools, guards
        self.conversation: list[dict] = []
        self.context: contract.SubAgentContext | None = None  # what the conversation's prompt says, as data
        self.seen: dict[str, int] = {}  # calls made in the current instruction and how often (the repeat guard)
        self.observations: list[str] = []  # what was fed back, newest last (the Observer reads an unfinished run)

    def run(self, instruction: str, context: str, findings: tuple[contract.ShownFinding, ...] = ()) -> dict:
        """Work one instruction (`findings`: the reports its context shows); return the finish arguments
        (LimitsExceeded when the role did not finish)."""
        self.context = contract.SubAgentContext(budget=self.guards.budget, instruction=instruction, context=context,
                                                findings=findings)
        self.conversation = [
            {"role": "system", "content": render(self.role, "system", budget=self.guards.budget,
                                                 tools=render_tools(self.role))},
            {"role": "user", "content": render(self.role, "user", instruction=instruction, context=context)}]
        self.seen, self.observations = {}, []  # a new instruction may rightly re-run a command: the state has changed
        return super().run()

    def messages(self) -> list[dict]:
        """Return the conversation so far."""
        return self.conversation

    def request(self, messages: list[dict]) -> dict:
        """Send the schema of a tool call among this role's tools (the names its replies are parsed against) and
        what the prompt says, as data (the expert reads it)."""
        return {"schema": tool_call_schema(self.tools.names()), "context": self.context}

    def execute(self, messages: list[dict], completion) -> None:
        """Finish, or run the call behind the budget, repeat and size guards."""
        call = parse_tool_call(reply_text(completion), self.tools.names())
        if call.tool == FINISH:
            self.recorder.record(self.role, messages, completion)
            raise Submitted(call.args)
        if self.calls > self.guards.budget:
            return self.feed(messages, completion, contract.NO_CALLS_LEFT, Status.BUDGET)
        if self.seen.get(call.key(), 0) >= self.guards.repeat_limit:
            return self.feed(messages, completion, contract.repeated(call.tool, call.args), Status.REPEATED)
        self.seen[call.key()] = self.seen.get(call.key(), 0) + 1
        result = self.tools.run(call)
        self.feed(messages, completion, self._fitted(call, result.observation), result.status, result.action)

    def _fitted(self, call: ToolCall, observation: str) -> str:
        """Cap and condense an output to the context budget, saying so when it was cut."""
        command = str(call.args.get("command") or f"{call.tool} {json.dumps(call.args)}")
        fitted = self.guards.fit(observation[: self.guards.output_cap], command=command)
        return fitted if fitted == observation else fitted + contract.output_cut(len(observation))

    def feed(self, messages: list[dict], completion, text: str, status: Status, action: str = "") -> None:
        """Record the step and append the reply and its observation to the conversation."""
        self.recorder.record(self.role, messages, completion, action, text, status)
        messages += [{"role": "assistant", "content": _text(completion)}, {"role": "user", "content": text}]
        self.observations.append(text)

    def check_limits(self) -> None:
        """End the run when its calls are spent or the environment has one action left."""
        if self.calls > self.guards.budget or self.guards.steps_left() <= 1:
            raise LimitsExceeded(RAN_OUT)
