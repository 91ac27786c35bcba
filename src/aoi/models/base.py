"""A model's answer and the errors that decide retries; the Model protocol itself lives in aoi.protocols."""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass, field

from aoi.protocols import Message, Model

__all__ = ["Completion", "Message", "Model", "ModelError", "TransientModelError"]


@dataclass
class Completion:
    """One model answer with its cost."""

    text: str
    _: KW_ONLY  # the text is positional, every count by keyword
    input_tokens: int = 0
    output_tokens: int = 0
    latency: float = 0.0
    logprobs: list[float] | None = None
    attempts: int = 1  # how many tries it took (retries on timeouts, 429 and 5xx)
    meta: dict = field(default_factory=dict)


class ModelError(RuntimeError):
    """A model failure that retrying will not fix (bad key, unknown model, malformed request)."""


class TransientModelError(ModelError):
    """A failure worth retrying (timeout, rate limit, server error); `retry_after` in seconds when known."""

    def __init__(self, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after
