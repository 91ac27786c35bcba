"""The model protocol every backend implements, and the errors that decide retries."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

Message = dict  # {"role": "system" | "user" | "assistant", "content": str}


@dataclass
class Completion:
    """One model answer with its cost."""

    text: str
    input_tokens: int = 0
    output_tokens: int = 0
    latency: float = 0.0
    logprobs: list[float] | None = None
    attempts: int = 1  # how many tries it took (retries on timeouts, 429 and 5xx)
    meta: dict = field(default_factory=dict)


class Model(Protocol):
    """A chat model: messages in, one completion out. `role` names the agent asking (LLMs ignore it)."""

    name: str

    def complete(self, messages: list[Message], *, role: str, max_tokens: int | None = None,
                 temperature: float | None = None) -> Completion:
        """Answer the conversation."""


class ModelError(RuntimeError):
    """A model failure that retrying will not fix (bad key, unknown model, malformed request)."""


class TransientModelError(ModelError):
    """A failure worth retrying (timeout, rate limit, server error); `retry_after` in seconds when known."""

    def __init__(self, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after
