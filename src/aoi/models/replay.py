"""A scripted model for tests: answers given outputs in order and fails when steps are missing or left unused."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import yaml

from aoi.models.base import Completion, Message, ModelError
from aoi.models.tokens import count_messages, count_tokens

Step = str | tuple[str, str]


class ReplayExhausted(ModelError):
    """The script has no step left for a request."""


class ReplayUnused(ModelError):
    """The episode ended with scripted steps never asked for."""


class ReplayModel:
    """Answer scripted outputs in order, optionally checking which role asks; count cl100k tokens."""

    def __init__(self, steps: list[Step], name: str = "replay"):
        """Script the answers: a string for any role, or a (role, text) pair that only that role may take.

        Example:
            >>> m = ReplayModel([("observer", "probe the pods"), "done"])
            >>> m.complete([{"role": "user", "content": "go"}], role="observer").text
            'probe the pods'
            >>> m.complete([], role="probe").text
            'done'
            >>> m.assert_done()
        """
        self.steps = [_step(s, i) for i, s in enumerate(steps)]
        # {role, text, delay} steps answer after `delay` seconds: a slow model, for tests that interrupt a run
        self.delays = {i: float(s["delay"]) for i, s in enumerate(steps) if isinstance(s, dict) and "delay" in s}
        self.name, self.calls = name, 0
        self.requests: list[tuple[str, list[Message]]] = []  # (role, messages) of every call, for assertions

    @classmethod
    def from_file(cls, path: str | Path, name: str | None = None) -> ReplayModel:
        """Load the steps from a YAML or JSON list of strings, [role, text] pairs or {role, text[, delay]} maps.

        Example:
            >>> import tempfile, pathlib
            >>> p = pathlib.Path(tempfile.mkdtemp()) / "steps.yaml"
            >>> _ = p.write_text("- {role: observer, text: hi}\\n- bye\\n")
            >>> ReplayModel.from_file(p).steps
            [('observer', 'hi'), (None, 'bye')]
        """
        path = Path(path)
        if not path.is_file():
            raise ModelError(f"replay script {path} does not exist; give a YAML or JSON list of steps")
        text = path.read_text()
        data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
        if not isinstance(data, list):
            raise ModelError(f"replay script {path} must hold a list of steps, not {type(data).__name__}")
        return cls(data, name=name or f"replay:{path.name}")

    @property
    def remaining(self) -> int:
        """Return how many steps are still unused."""
        return len(self.steps) - self.calls

    def complete(self, messages: list[Message], *, role: str, max_tokens: int | None = None,
                 temperature: float | None = None, schema: dict | None = None, context: Any = None) -> Completion:
        """Answer with the next scripted step; raise ReplayExhausted or a role mismatch as ModelError."""
        self.requests.append((role, list(messages)))
        if self.calls >= len(self.steps):
            raise ReplayExhausted(f"{self.name}: {role!r} asked for step {self.calls + 1} but the script has only "
                                  f"{len(self.steps)}; add a step for it (last message: {_last(messages)!r})")
        want, text = self.steps[self.calls]
        if want is not None and want != role:
            raise ModelError(f"{self.name}: step {self.calls + 1} is scripted for {want!r} but {role!r} asked; "
                             "reorder the steps or drop the role")
        time.sleep(self.delays.get(self.calls, 0.0))
        self.calls += 1
        return Completion(text, input_tokens=count_messages(messages), output_tokens=count_tokens(text),
                          meta={"step": self.calls})

    def assert_done(self) -> None:
        """Raise ReplayUnused when scripted steps were never asked for."""
        if self.remaining:
            unused = [text[:60] for _, text in self.steps[self.calls:]]
            raise ReplayUnused(f"{self.name}: {self.remaining} of {len(self.steps)} steps unused, starting at step "
                               f"{self.calls + 1}: {unused}; remove them or fix the loop that should ask for them")

    def __enter__(self) -> ReplayModel:
        """Use the model in a with-block that checks every step was used."""
        return self

    def __exit__(self, kind, value, traceback) -> None:
        """Check all steps were used, unless the block is already failing."""
        if kind is None:
            self.assert_done()


def _step(step, index: int) -> tuple[str | None, str]:
    """Normalise a step to (role or None, text)."""
    if isinstance(step, str):
        return None, step
    if isinstance(step, dict) and "text" in step:
        return step.get("role"), str(step["text"])
    if isinstance(step, (tuple, list)) and len(step) == 2 and all(isinstance(x, str) for x in step):
        return step[0], step[1]
    raise ModelError(f"replay step {index + 1} is {step!r}; write a string, a (role, text) pair or {{role, text}}")


def _last(messages: list[Message]) -> str:
    """Return the start of the last message, to say where the script ran out."""
    return str(messages[-1].get("content", ""))[:80] if messages else ""
