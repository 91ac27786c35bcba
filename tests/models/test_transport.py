"""Broken transfers through the pinned openai SDK: each becomes a ModelError (retried where a retry may help), never
an exception from the SDK's transport, a KeyError or a worker thread's traceback; an episode records it.

The faults are served by the fake OpenAI server on 127.0.0.1 (real sockets, the real SDK and its HTTP library).
"""

from __future__ import annotations

import threading
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from aoi.models.base import ModelError, TransientModelError
from aoi.models.openai_model import OpenAIModel
from aoi.models.retry import with_retries

from .test_faults import observer_episode
from .test_openai_model import ASK

PYPROJECT = Path(__file__).parents[2] / "pyproject.toml"
TIMEOUT = 1.0
HTML = {"content-type": "text/html"}

# name -> (status, body (None: a chat completion), headers, transient?, what the error says)
BROKEN = {
    "truncated body": (200, None, {"x-cut": "close"}, True, "broke off its answer"),
    "reset before the answer": (200, b"", {"x-reset": "1"}, True, "cannot reach"),
    "reset in the body": (200, None, {"x-cut": "reset"}, True, "broke off its answer"),
    "stalled stream": (200, None, {"x-cut": "stall"}, True, "timed out after 1.0s"),
    "invalid JSON": (200, b'{"choices": [{"message": ', {}, True, "malformed response .*not JSON"),
    "HTML 502": (502, b"<html><title>502 Bad Gateway</title>nginx</html>", HTML, True, "HTTP 502.*Bad Gateway nginx"),
    "HTML 200": (200, b"<html><title>Sign in</title></html>", HTML, False, "HTML page, not JSON .*Sign in"),
    "empty 200": (200, b"", {}, True, "empty body"),
}


@pytest.fixture(autouse=True)
def thread_crashes(monkeypatch):
    """Collect exceptions that escape any thread (the model call's worker included); none may."""
    crashes: list = []
    monkeypatch.setattr(threading, "excepthook", crashes.append)
    yield crashes
    assert not crashes, [f"{c.exc_type.__name__}: {c.exc_value}" for c in crashes]


def model(fake, attempts: int = 1, sleeps: list | None = None):
    """Return a model on the fake server with a short timeout, retried `attempts` times (waits recorded)."""
    inner = OpenAIModel("fake-model", base_url=fake.url, api_key="sk-test", timeout=TIMEOUT)
    return with_retries(inner, attempts=attempts, sleep=(sleeps if sleeps is not None else []).append)


def test_the_installed_sdk_is_the_pinned_one():
    pins = tomllib.loads(PYPROJECT.read_text())["project"]["dependencies"]
    openai_pin = next(Requirement(pin) for pin in pins if pin.startswith("openai"))
    assert openai_pin.specifier.contains(metadata.version("openai")), (openai_pin, metadata.version("openai"))


@pytest.mark.parametrize("name", list(BROKEN))
def test_a_broken_answer_is_a_model_error_saying_what_happened(fake_openai, name):
    status, body, headers, transient, says = BROKEN[name]
    fake_openai.answer(status, body, headers)
    with pytest.raises(ModelError, match=says) as caught:
        model(fake_openai).complete(ASK, role="observer")
    assert isinstance(caught.value, TransientModelError) == transient
    assert "model 'fake-model'" in str(caught.value)


@pytest.mark.parametrize("name", [name for name, fault in BROKEN.items() if fault[3]])
def test_a_transient_break_is_retried_and_the_retry_answers(fake_openai, name):
    status, body, headers, _, _ = BROKEN[name]
    fake_openai.answer(status, body, headers)
    fake_openai.reply("recovered")
    sleeps: list = []
    done = model(fake_openai, attempts=2, sleeps=sleeps).complete(ASK, role="observer")
    assert (done.text, done.attempts, len(sleeps), len(fake_openai.requests)) == ("recovered", 2, 1, 2)


def test_a_permanent_error_is_not_retried(fake_openai):
    fake_openai.answer(*BROKEN["HTML 200"][:3])
    with pytest.raises(ModelError):
        model(fake_openai, attempts=4, sleeps=[]).complete(ASK, role="observer")
    assert len(fake_openai.requests) == 1


def test_an_episode_on_a_server_that_truncates_every_body_records_the_model_error(fake_openai):
    for _ in range(3 * 2):  # the Observer gives up after 3 failed calls, each tried twice
        fake_openai.answer(*BROKEN["truncated body"][:3])
    traj = observer_episode(model(fake_openai, attempts=2), iterations=5)
    failed = [step for step in traj.steps if step.status == "error"]
    assert len(failed) == 3 and all("broke off its answer" in step.observation for step in failed)
    assert traj.error.startswith("ModelError: the observer's model failed 3 times"), traj.error
    assert "gave up after 2 tries" in traj.error and "KeyError" not in traj.error
    assert traj.results["Detection Accuracy"] == "Incorrect"  # judged, with an empty submission
    assert len(fake_openai.requests) == 6
