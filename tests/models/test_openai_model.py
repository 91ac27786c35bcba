"""OpenAIModel against a fake OpenAI-compatible HTTP server: the real SDK, real sockets, scripted answers."""

from __future__ import annotations

import pytest

from aoi.models import load_model
from aoi.models.base import ModelError, TransientModelError
from aoi.models.openai_model import OPENROUTER_URL, OpenAIModel, retry_after
from aoi.models.retry import with_retries
from aoi.models.schemas import tool_call_schema
from aoi.models.tokens import count_tokens
from aoi.protocols import Role

ASK = [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Which pod is failing?"}]


def model_for(fake, **options) -> OpenAIModel:
    """Point a model at the fake server."""
    return OpenAIModel("fake-model", base_url=fake.url, api_key="sk-test", **options)


def test_success_reports_server_usage_and_sends_the_request(fake_openai):
    fake_openai.reply("pod geo-1 crashes", {"prompt_tokens": 17, "completion_tokens": 5, "total_tokens": 22})
    done = model_for(fake_openai, extra_body={"top_k": 1}).complete(ASK, role="observer", max_tokens=64)
    assert (done.text, done.input_tokens, done.output_tokens) == ("pod geo-1 crashes", 17, 5)
    assert done.latency > 0 and done.meta["usage"] == "server" and done.meta["finish_reason"] == "stop"
    sent = fake_openai.requests[0]
    assert sent["path"] == "/v1/chat/completions"
    assert sent["headers"]["authorization"] == "Bearer sk-test"
    assert sent["json"]["messages"] == ASK and sent["json"]["model"] == "fake-model"
    assert (sent["json"]["max_tokens"], sent["json"]["temperature"], sent["json"]["top_k"]) == (64, 0.0, 1)


def test_a_calls_schema_goes_as_response_format_where_the_server_constrains_to_it(fake_openai):
    schema = tool_call_schema(["exec_shell", "finish"])
    for structured in (True, False):
        fake_openai.reply('{"tool": "finish", "args": {}}')
        model_for(fake_openai, structured=structured).complete(ASK, role=Role.PROBE, schema=schema)
    sent, ignored = (request["json"] for request in fake_openai.requests)
    assert sent["response_format"] == {"type": "json_schema", "json_schema": {"name": "probe_reply", "schema": schema}}
    assert "response_format" not in ignored
    assert load_model("vllm:m@http://127.0.0.1:1").inner.structured
    assert not load_model("openai:m", api_key="k").inner.structured


def test_missing_usage_falls_back_to_cl100k_counts(fake_openai):
    fake_openai.reply("pod geo-1 crashes")
    done = model_for(fake_openai).complete(ASK, role="observer")
    assert done.input_tokens == count_tokens("You are terse.") + count_tokens("Which pod is failing?")
    assert done.output_tokens == count_tokens("pod geo-1 crashes") and done.meta["usage"] == "cl100k"


def test_429_is_retried_after_the_servers_retry_after(fake_openai):
    fake_openai.answer(429, {"error": {"message": "slow down"}}, headers={"Retry-After": "2"})
    fake_openai.reply("ok")
    sleeps = []
    done = with_retries(model_for(fake_openai), sleep=sleeps.append).complete(ASK, role="probe")
    assert (done.text, done.attempts, sleeps, done.meta["retry_wait"]) == ("ok", 2, [2.0], 2.0)
    assert len(fake_openai.requests) == 2


def test_500s_exhaust_the_retries_with_a_clear_error(fake_openai):
    for _ in range(4):
        fake_openai.answer(500, {"error": {"message": "upstream exploded"}})
    sleeps = []
    with pytest.raises(TransientModelError) as caught:
        with_retries(model_for(fake_openai), attempts=4, sleep=sleeps.append).complete(ASK, role="probe")
    message = str(caught.value)
    assert "HTTP 500" in message and "gave up after 4 tries" in message and "fake-model" in message
    assert caught.value.attempts == 4 and len(fake_openai.requests) == 4
    assert [0.25 <= sleeps[0] <= 0.5, 0.5 <= sleeps[1] <= 1.0, 1.0 <= sleeps[2] <= 2.0] == [True] * 3


def test_401_is_permanent_and_names_the_key(fake_openai):
    fake_openai.answer(401, {"error": {"message": "Incorrect API key provided"}})
    with pytest.raises(ModelError) as caught:
        with_retries(model_for(fake_openai), sleep=lambda s: pytest.fail("a 401 must not be retried")).complete(
            ASK, role="observer")
    assert not isinstance(caught.value, TransientModelError)
    assert "HTTP 401" in str(caught.value) and "AOI_API_KEY" in str(caught.value)
    assert len(fake_openai.requests) == 1


@pytest.mark.parametrize("status, fix", [(404, "AOI_MODEL"), (403, "permissions"), (400, "model name")])
def test_client_errors_say_what_to_fix(fake_openai, status, fix):
    fake_openai.answer(status, {"error": {"message": "nope"}})
    with pytest.raises(ModelError) as caught:
        model_for(fake_openai).complete(ASK, role="observer")
    assert not isinstance(caught.value, TransientModelError) and fix in str(caught.value)


def test_malformed_json_is_transient_and_then_recovers(fake_openai):
    fake_openai.answer(body=b"{'choices': [truncated")
    fake_openai.reply("recovered")
    with pytest.raises(TransientModelError, match="malformed"):
        model_for(fake_openai).complete(ASK, role="observer")
    assert model_for(fake_openai).complete(ASK, role="observer").text == "recovered"


def test_answers_without_choices_are_transient(fake_openai):
    fake_openai.answer(body={"object": "chat.completion", "choices": []})
    with pytest.raises(TransientModelError, match="without choices"):
        model_for(fake_openai).complete(ASK, role="observer")


def test_an_html_page_is_permanent_and_names_the_base_url(fake_openai):
    fake_openai.answer(body=b"<html>login page</html>", headers={"content-type": "text/html"})
    with pytest.raises(ModelError, match="HTML page, not JSON .*login page.*AOI_BASE_URL") as caught:
        model_for(fake_openai).complete(ASK, role="observer")
    assert not isinstance(caught.value, TransientModelError)


def test_timeouts_and_refused_connections_are_transient(fake_openai):
    fake_openai.reply("late", headers={"x-delay": "1"})
    with pytest.raises(TransientModelError, match="timed out"):
        model_for(fake_openai, timeout=0.2).complete(ASK, role="observer")
    url = fake_openai.url
    fake_openai.close()
    with pytest.raises(TransientModelError, match="cannot reach"):
        OpenAIModel("m", base_url=url, api_key="k").complete(ASK, role="observer")


def test_config_comes_from_the_environment(fake_openai, monkeypatch):
    monkeypatch.setenv("AOI_MODEL", "env-model")
    monkeypatch.setenv("AOI_BASE_URL", fake_openai.url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    fake_openai.answer()
    assert OpenAIModel().complete(ASK, role="observer").text == "hello"
    assert fake_openai.requests[0]["json"]["model"] == "env-model"
    assert fake_openai.requests[0]["headers"]["authorization"] == "Bearer sk-env"


def test_openai_sdk_variables_are_honoured_too(fake_openai, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-sdk")
    fake_openai.answer()
    assert OpenAIModel("m").complete(ASK, role="observer").text == "hello"
    assert fake_openai.requests[0]["headers"]["authorization"] == "Bearer sk-sdk"


def test_hosted_endpoints_demand_a_key_and_local_ones_do_not(monkeypatch):
    with pytest.raises(ModelError, match="OPENAI_API_KEY"):
        OpenAIModel("gpt-4o-mini")
    with pytest.raises(ModelError, match="OPENROUTER_API_KEY"):
        OpenAIModel("x", base_url=OPENROUTER_URL)
    monkeypatch.setenv("OPENROUTER_API_KEY", "or-key")
    assert OpenAIModel("x", base_url=OPENROUTER_URL).api_key == "or-key"
    assert OpenAIModel("x", base_url="http://127.0.0.1:8000/v1").api_key == "not-needed"
    with pytest.raises(ModelError, match="AOI_MODEL"):
        OpenAIModel()


def test_retry_after_header_forms():
    assert retry_after({"Retry-After": "3"}) == 3.0
    assert retry_after({"retry-after-ms": "250"}) == 0.25
    assert retry_after({"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0  # a date in the past: no wait
    assert retry_after({"Retry-After": "soon"}) is None and retry_after(None) is None
