"""The model-fault table: every odd reply a server can send becomes a Completion or a ModelError, never a crash.

Faults go through the real SDK and real sockets (the fake OpenAI server on 127.0.0.1), first one call at a time,
then all in one episode on the twin, where each must become feedback to the Observer (a format error or a failed
model call) and the episode must still end with the Observer's own answer.
"""

from __future__ import annotations

import time

import pytest

from aoi.agents.runtime import run_episode
from aoi.config import load_config
from aoi.env import make
from aoi.models.base import Completion, ModelError, TransientModelError
from aoi.models.openai_model import OpenAIModel
from aoi.models.retry import with_retries

from .conftest import chat_body
from .test_openai_model import ASK

ROLES = ("observer", "probe", "executor", "compressor")


def message(**fields) -> dict:
    """Return a 200 chat.completion body whose first choice's message is `fields`."""
    body = chat_body()
    body["choices"][0]["message"] = {"role": "assistant", **fields}
    return body


# name -> (status, body, headers): each a way an OpenAI-compatible server (or a proxy before it) has answered.
FAULTS = {
    "object content": (200, message(content={"next": "probe"}), {}),
    "list content (text parts)": (200, message(content=[{"type": "text", "text": "part one"}, {"type": "x"}]), {}),
    "list content (odd items)": (200, message(content=[1, None, ["x"]]), {}),
    "null content": (200, message(content=None), {}),
    "number content": (200, message(content=42), {}),
    "null content with tool_calls": (200, message(content=None, tool_calls=[{"id": "1", "type": "function",
                                     "function": {"name": "submit", "arguments": "{}"}}]), {}),
    "tool_calls of odd shape": (200, message(content="hi", tool_calls="submit"), {}),
    "message missing": (200, chat_body() | {"choices": [{"index": 0, "finish_reason": "stop"}]}, {}),
    "choice not an object": (200, chat_body() | {"choices": ["hello"]}, {}),
    "choices an object": (200, chat_body() | {"choices": {"0": "hello"}}, {}),
    "empty choices": (200, chat_body() | {"choices": []}, {}),
    "no choices key": (200, {"object": "chat.completion"}, {}),
    "body a JSON list": (200, b"[1, 2]", {}),
    "body a JSON string": (200, b'"hello"', {}),
    "empty body": (200, b"", {}),
    "invalid JSON body": (200, b"{'choices': [truncated", {}),
    "HTML body": (200, b"<html>login page</html>", {"content-type": "text/html"}),
    "usage of wrong types": (200, chat_body("fine") | {"usage": {"prompt_tokens": "many", "completion_tokens": None}},
                             {}),
    "usage not an object": (200, chat_body("fine") | {"usage": "lots"}, {}),
    "HTTP 500": (500, {"error": {"message": "upstream exploded"}}, {}),
    "HTTP 502 HTML": (502, b"<html>bad gateway</html>", {"content-type": "text/html"}),
    "HTTP 429, Retry-After 3600": (429, {"error": {"message": "slow down"}}, {"Retry-After": "3600"}),
    "dripping body": (200, chat_body("x" * 40), {"x-drip": "0.5"}),
    "dripping headers": (200, chat_body("x"), {"x-drip-headers": "0.3"}),
    "connection reset": (200, b"", {"x-reset": "1"}),
    "truncated body": (200, chat_body("x"), {"x-cut": "close"}),
    "connection reset in the body": (200, chat_body("x"), {"x-cut": "reset"}),
    "stalled body": (200, chat_body("x"), {"x-cut": "stall"}),
}
TIMEOUT = 1.0


def faulty(fake, attempts: int = 1, sleeps: list | None = None):
    """Return a model on the fake server with a short timeout, retried `attempts` times (sleeps recorded)."""
    model = OpenAIModel("fake-model", base_url=fake.url, api_key="sk-test", timeout=TIMEOUT)
    return with_retries(model, attempts=attempts, sleep=(sleeps if sleeps is not None else []).append)


@pytest.mark.parametrize("name", list(FAULTS))
def test_each_fault_is_a_completion_of_text_or_a_model_error(fake_openai, name):
    status, body, headers = FAULTS[name]
    fake_openai.answer(status, body, headers)
    started = time.monotonic()
    try:
        done = faulty(fake_openai).complete(ASK, role="observer")
    except ModelError as err:
        assert str(err) and "model 'fake-model'" in str(err), err
    else:
        assert isinstance(done, Completion) and isinstance(done.text, str)
        assert isinstance(done.input_tokens, int) and isinstance(done.output_tokens, int)
    assert time.monotonic() - started < 4 * TIMEOUT + 2  # a misbehaving server never holds a call for long


def test_text_parts_are_joined_and_other_shapes_say_what_arrived(fake_openai):
    fake_openai.answer(*FAULTS["list content (text parts)"])
    fake_openai.answer(*FAULTS["object content"])
    fake_openai.answer(*FAULTS["usage of wrong types"])
    model = faulty(fake_openai)
    assert model.complete(ASK, role="observer").text == "part one"
    odd = model.complete(ASK, role="observer")
    assert odd.text == "" and "dict" in odd.meta["malformed"]
    fine = model.complete(ASK, role="observer")
    assert fine.text == "fine" and fine.meta["usage"] == "cl100k" and fine.output_tokens > 0


def test_a_dripping_body_is_cut_at_the_timeout(fake_openai):
    fake_openai.answer(*FAULTS["dripping body"])  # ~200 bytes at 2 bytes/s: 100 s if nothing stops it
    started = time.monotonic()
    with pytest.raises(TransientModelError, match="timed out after 1.0s"):
        faulty(fake_openai).complete(ASK, role="observer")
    assert time.monotonic() - started < 4 * TIMEOUT


def test_trickled_headers_are_cut_at_the_timeout(fake_openai):
    fake_openai.answer(*FAULTS["dripping headers"])  # ~70 header bytes at 0.3 s each: 20 s if nothing stops it
    started = time.monotonic()
    with pytest.raises(TransientModelError, match="timed out after 1.0s"):
        faulty(fake_openai).complete(ASK, role="observer")
    assert time.monotonic() - started < 4 * TIMEOUT


def test_a_huge_retry_after_gives_up_at_once_naming_the_setting(fake_openai):
    fake_openai.answer(*FAULTS["HTTP 429, Retry-After 3600"])
    sleeps: list = []
    with pytest.raises(TransientModelError) as caught:
        faulty(fake_openai, attempts=4, sleeps=sleeps).complete(ASK, role="observer")
    assert sleeps == [] and len(fake_openai.requests) == 1
    assert "3600" in str(caught.value) and "max_retry_wait" in str(caught.value)


class OddText:
    """A model (not over HTTP) whose completions carry text that is not a string."""

    name = "odd"

    def __init__(self, texts: list):
        self.texts = texts

    def complete(self, messages, *, role, max_tokens=None, temperature=None, **call) -> Completion:
        return Completion(self.texts.pop(0))


SUBMIT_YES = '{"phase": "submit", "next": "submit", "instruction": "", "context": "", "answer": "Yes"}'


def observer_episode(model, iterations: int):
    """Run a detection episode (a fault is present: "Yes" is right) with `model` in every role."""
    config = load_config(overrides={"model": "expert", "agent.max_iterations": iterations}, environ={})
    env = make("k8s_target_port-misconfig-detection-1")
    try:
        return run_episode(env, config, dict.fromkeys(ROLES, model))
    finally:
        env.close()


def test_odd_text_from_any_model_is_a_format_error_for_the_observer():
    odd = [{"next": "submit"}, ["a"], None, 7]
    traj = observer_episode(OddText([*odd, SUBMIT_YES]), len(odd) + 1)
    assert traj.error is None and traj.results["Detection Accuracy"] == "Correct"
    assert [s.status for s in traj.steps[:len(odd)]] == ["format_error"] * len(odd)


def test_every_fault_in_one_episode_becomes_feedback_and_the_episode_ends_with_its_answer(fake_openai):
    for status, body, headers in FAULTS.values():  # each fault, then a reply that resets the failure count
        fake_openai.answer(status, body, headers)
        fake_openai.reply("thinking about it")
    fake_openai.reply(SUBMIT_YES)
    traj = observer_episode(faulty(fake_openai), 2 * len(FAULTS) + 1)
    crashes = [s for s in traj.steps if "TypeError" in s.observation or "AttributeError" in s.observation]
    assert traj.error is None and not crashes, traj.error
    assert traj.results["Detection Accuracy"] == "Correct"
    fed_back = [s for s in traj.steps[:-2] if s.role == "observer" and s.status in ("format_error", "error")]
    assert len(fed_back) == 2 * len(FAULTS)  # every fault and every filler reply was answered with feedback
    print(f"model faults injected: {len(FAULTS)}, crashes: {len(crashes) + (traj.error is not None)}")


def test_max_retry_wait_is_a_config_option_that_reaches_the_retries():
    from aoi.agents.runtime import models_from_config

    config = load_config(environ={"AOI_MODEL": "ollama:qwen2.5:0.5b", "AOI_MAX_RETRY_WAIT": "5"})
    assert config.model.max_retry_wait == 5.0 and load_config(environ={}).model.max_retry_wait == 60.0
    assert models_from_config(config)["observer"].max_retry_wait == 5.0
    with pytest.raises(ValueError, match="max_retry_wait"):
        load_config(environ={"AOI_MAX_RETRY_WAIT": "-1"})
