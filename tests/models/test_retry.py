"""with_retries: back-off with seeded jitter, Retry-After honoured, permanent errors not retried."""

from __future__ import annotations

import pytest

from aoi.models import Completion, ModelError, ReplayModel, TransientModelError, with_retries


class Flaky:
    """A model that raises the given errors in turn, then answers."""

    name = "flaky"

    def __init__(self, *errors: Exception):
        self.errors, self.calls = list(errors), 0

    def complete(self, messages, *, role, max_tokens=None, temperature=None, **call) -> Completion:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return Completion("fine", meta={"role": role, "max_tokens": max_tokens, "temperature": temperature})


def test_recovers_and_records_attempts_and_waits():
    sleeps = []
    done = with_retries(Flaky(TransientModelError("t1"), TransientModelError("t2")), sleep=sleeps.append).complete(
        [], role="probe", max_tokens=7, temperature=0.3)
    assert (done.text, done.attempts, len(sleeps)) == ("fine", 3, 2)
    assert done.meta["retry_wait"] == pytest.approx(sum(sleeps))
    assert done.meta | {"retry_wait": 0} == {"role": "probe", "max_tokens": 7, "temperature": 0.3, "retry_wait": 0}


def test_backoff_doubles_with_jitter_capped_and_is_seeded():
    model = with_retries(Flaky(), base_delay=1.0, max_delay=5.0, seed=3)
    delays = [model.delay(n) for n in range(1, 6)]
    for n, delay in enumerate(delays, start=1):
        cap = min(5.0, 2 ** (n - 1))
        assert cap / 2 <= delay <= cap
    again = with_retries(Flaky(), base_delay=1.0, max_delay=5.0, seed=3)
    assert [again.delay(n) for n in range(1, 6)] == delays
    other = with_retries(Flaky(), base_delay=1.0, max_delay=5.0, seed=4)
    assert [other.delay(n) for n in range(1, 6)] != delays


def test_retry_after_wins_over_the_schedule():
    sleeps = []
    with_retries(Flaky(TransientModelError("429", retry_after=7.5)), sleep=sleeps.append).complete([], role="x")
    assert sleeps == [7.5]


def test_gives_up_with_the_last_error_and_the_count():
    flaky = Flaky(*(TransientModelError(f"boom {i}") for i in range(3)))
    with pytest.raises(TransientModelError, match=r"boom 2 \(gave up after 3 tries") as caught:
        with_retries(flaky, attempts=3, sleep=lambda s: None).complete([], role="x")
    assert caught.value.attempts == 3 and flaky.calls == 3


def test_permanent_errors_pass_through_at_once():
    flaky = Flaky(ModelError("bad key"))
    with pytest.raises(ModelError, match="^bad key$"):
        with_retries(flaky, sleep=lambda s: pytest.fail("must not wait")).complete([], role="x")
    assert flaky.calls == 1


def test_wrapper_is_a_model_and_exposes_the_inner_one():
    replay = ReplayModel(["a"])
    wrapped = with_retries(replay)
    assert wrapped.name == "replay" and wrapped.inner is replay and wrapped.remaining == 1
    with pytest.raises(ValueError, match="attempts must be at least 1"):
        with_retries(replay, attempts=0)
