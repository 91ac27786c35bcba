"""Retry a model on transient failures (timeouts, 429, 5xx) with seeded, jittered exponential back-off."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any

from aoi.models.base import Completion, Message, Model, TransientModelError

MAX_RETRY_WAIT = 60.0  # seconds: the default of model.max_retry_wait


class RetryingModel:
    """A Model that retries another on TransientModelError; permanent ModelErrors pass straight through."""

    def __init__(self, model: Model, attempts: int = 4, base_delay: float = 0.5, max_delay: float = 20.0,
                 sleep: Callable[[float], Any] = time.sleep, seed: int = 0, max_retry_wait: float = MAX_RETRY_WAIT):
        """Wrap `model`; see `with_retries` for the arguments."""
        if attempts < 1:
            raise ValueError(f"attempts must be at least 1, got {attempts}; use 1 to disable retries")
        self.inner, self.name = model, model.name
        self.attempts, self.base_delay, self.max_delay = attempts, base_delay, max_delay
        self.max_retry_wait = max_retry_wait
        self.sleep, self.rng = sleep, random.Random(seed)  # a private RNG: no global randomness

    def complete(self, messages: list[Message], *, role: str, max_tokens: int | None = None,
                 temperature: float | None = None, schema: dict | None = None, context: Any = None) -> Completion:
        """Answer through the inner model, retrying transient errors; record attempts and the time waited."""
        waited = 0.0
        for attempt in range(1, self.attempts + 1):
            try:
                completion = self.inner.complete(messages, role=role, max_tokens=max_tokens, temperature=temperature,
                                                 schema=schema, context=context)
            except TransientModelError as err:
                # re-raise the same error (bare raise keeps its cause and traceback), its message extended
                if attempt == self.attempts:
                    _gave_up(err, attempt)
                    raise
                if err.retry_after is not None and err.retry_after > self.max_retry_wait:
                    self._too_long(err, attempt)
                    raise
                delay = self.delay(attempt, err.retry_after)
                self.sleep(delay)
                waited += delay
            else:
                completion.attempts = attempt
                completion.meta["retry_wait"] = waited
                return completion
        raise AssertionError("unreachable: the loop returns or raises")

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Return the wait before retry number `attempt`: the server's Retry-After, else jittered back-off."""
        if retry_after is not None:
            return retry_after  # the server knows its own limits better than our schedule does
        backoff = min(self.max_delay, self.base_delay * 2 ** (attempt - 1))
        return backoff * (0.5 + 0.5 * self.rng.random())  # "equal jitter": between half and all of it

    def _too_long(self, err: TransientModelError, tries: int) -> None:
        """Extend the error of a server that asks for a longer wait than we allow: retrying sooner would only
        spend the attempts, so the call fails now and says which setting allows longer waits."""
        err.args = (f"{err} (the server asks to wait {err.retry_after:.0f}s, more than model.max_retry_wait="
                    f"{self.max_retry_wait:g}s; raise it (AOI_MAX_RETRY_WAIT) or try again later)", *err.args[1:])
        err.attempts = tries

    def __getattr__(self, attr: str) -> Any:
        """Expose the inner model's attributes (e.g. a local model's tokenizer)."""
        if attr == "inner":  # not yet set: avoid recursing during construction or unpickling
            raise AttributeError(attr)
        return getattr(self.inner, attr)


def _gave_up(err: TransientModelError, tries: int) -> None:
    """Extend the last error's message with how many tries were made."""
    err.args = (f"{err} (gave up after {tries} tries; raise attempts= or try again later)", *err.args[1:])
    err.attempts = tries


def with_retries(model: Model, attempts: int = 4, base_delay: float = 0.5, max_delay: float = 20.0,
                 sleep: Callable[[float], Any] = time.sleep, seed: int = 0,
                 max_retry_wait: float = MAX_RETRY_WAIT) -> RetryingModel:
    """Wrap a model so transient failures are retried with exponential back-off and jitter.

    Args:
        model: The model to wrap.
        attempts: Tries in all, the first included.
        base_delay: Seconds before the first retry (before jitter); it doubles each retry.
        max_delay: Cap on the back-off in seconds (a server's Retry-After is honoured as given, up to the next).
        sleep: How to wait; tests inject a recorder.
        seed: Seed of the jitter's private RNG.
        max_retry_wait: Longest Retry-After honoured, in seconds; a server asking for more fails the call at once
            (its error says so) rather than holding the run for an hour.

    Example:
        >>> from aoi.models.replay import ReplayModel
        >>> with_retries(ReplayModel(["ok"])).complete([], role="observer").attempts
        1
    """
    return RetryingModel(model, attempts=attempts, base_delay=base_delay, max_delay=max_delay, sleep=sleep, seed=seed,
                         max_retry_wait=max_retry_wait)
