"""The trajectory: the one record that flows from the runtime to the store, the evaluator, training and replay."""

from __future__ import annotations

import uuid
from collections import Counter
from dataclasses import KW_ONLY, asdict, dataclass, field
from typing import Any

from aoi.protocols import Status


@dataclass
class Step:
    """One model call and what came of it.

    `role` is observer, probe, executor, compressor or file_reader; `action` is the tool call the model chose (or
    the env action text sent); `observation` what it got back; `t` seconds since the episode started (wall clock).
    """

    role: str
    text: str  # the model's output
    action: str = ""
    observation: str = ""
    _: KW_ONLY  # what happened is positional, its costs and record by keyword
    input_tokens: int = 0
    output_tokens: int = 0
    latency: float = 0.0
    t: float = 0.0
    prompt_hash: str = ""  # sha256 of the messages sent (the messages themselves are not stored)
    logprobs: list[float] | None = None
    # an aoi.protocols.Status (a str: old stores' plain strings read the same; an unknown one is kept as it is)
    status: Status | str = Status.OK
    messages: list[dict] | None = None  # the full messages sent (training data; the store deduplicates them)
    guidance_ids: list[str] | None = None  # guidance entries the Observer's prompt showed (None: no guidance)


def _step(data: dict) -> Step:
    """Rebuild a step; a status this code knows becomes its Status, an old unknown one stays a plain string."""
    step = Step(**data)
    try:
        step.status = Status(step.status)
    except ValueError:
        pass  # a store older than the Status enum may hold a status no code emits now: keep it, never fail a load
    return step


@dataclass
class Policy:
    """Which model (and adapter) produced a trajectory."""

    model: str
    adapter: str | None = None
    version: str | None = None


@dataclass
class Trajectory:
    """One episode, as DESIGN.md defines it."""

    problem_id: str
    task_type: str
    _: KW_ONLY  # the problem is positional, everything else by keyword
    family: str = ""
    target: str | None = None
    backend: str = "twin"
    seed: int = 0
    attempt: int = 0
    policy: Policy = field(default_factory=lambda: Policy("unknown"))
    guidance_ids: list[str] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    submission: Any = None
    forced_submit: bool = False  # the Observer's iterations or the env's steps ran out: it did not choose to submit
    results: dict = field(default_factory=dict)
    strict_success: bool | None = None
    started_at: float = 0.0
    ended_at: float = 0.0
    config: dict = field(default_factory=dict)  # the resolved run configuration
    error: str | None = None
    env_version: str = ""  # aoi.env.ENV_VERSION of the code that ran the episode ("" in stores older than it)
    id: str = field(default_factory=lambda: uuid.uuid4().hex)

    def to_dict(self) -> dict:
        """Return the trajectory as plain JSON-ready data."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> Trajectory:
        """Rebuild a trajectory from to_dict() output."""
        data = dict(data)
        data["policy"] = Policy(**data.get("policy") or {"model": "unknown"})
        data["steps"] = [_step(s) for s in data.get("steps") or []]
        return cls(**data)

    def counts(self) -> Counter:
        """Count the steps by status: what the guards counted (the one record of them; nothing else keeps counts).

        Example:
            >>> steps = [Step("probe", "", status=s) for s in ("ok", "repeated", "refused", "repeated")]
            >>> Trajectory("p", "detection", steps=steps).counts()["repeated"]
            2
        """
        return Counter(str(step.status) for step in self.steps)

    def tokens(self, role: str | None = None) -> tuple[int, int]:
        """Return (input, output) tokens over all steps, or one role's."""
        steps = [s for s in self.steps if role is None or s.role == role]
        return sum(s.input_tokens for s in steps), sum(s.output_tokens for s in steps)
