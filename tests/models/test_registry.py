"""load_model: every spec form builds the right backend, wrapped with retries except replay and expert."""

from __future__ import annotations

import importlib.util

import pytest

from aoi.models import FORMS, ModelError, ReplayModel, load_model
from aoi.models.openai_model import OPENROUTER_URL, OpenAIModel
from aoi.models.retry import RetryingModel


@pytest.mark.parametrize("spec, model, base_url", [
    ("ollama:qwen2.5:0.5b", "qwen2.5:0.5b", "http://127.0.0.1:11434/v1"),
    ("vllm:Qwen/Qwen2.5-7B@http://gpu:8000", "Qwen/Qwen2.5-7B", "http://gpu:8000/v1"),
    ("vllm:m@a@https://host/v1/", "m@a", "https://host/v1"),
])
def test_endpoint_specs_build_retried_openai_models(spec, model, base_url):
    built = load_model(spec, timeout=5)
    assert isinstance(built, RetryingModel) and isinstance(built.inner, OpenAIModel)
    assert (built.inner.model, built.inner.base_url, built.inner.timeout) == (model, base_url, 5)


def test_openai_and_openrouter_specs_use_their_keys(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai")
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or")
    openai_model = load_model("openai:gpt-4o-mini").inner
    router = load_model("openrouter:meta-llama/llama-3.1-8b-instruct").inner
    assert (openai_model.base_url, openai_model.api_key) == (None, "sk-openai")
    assert (router.base_url, router.api_key) == (OPENROUTER_URL, "sk-or")


def test_a_loaded_endpoint_model_answers_and_retries(fake_openai):
    fake_openai.answer(503, {"error": {"message": "warming up"}}, headers={"retry-after": "1"})
    fake_openai.reply("ready")
    sleeps = []
    url = fake_openai.url.removesuffix("/v1")
    done = load_model(f"vllm:tiny@{url}", sleep=sleeps.append).complete([{"role": "user", "content": "hi"}],
                                                                       role="observer")
    assert (done.text, done.attempts, sleeps) == ("ready", 2, [1.0])


RUN_CONFIG_OPTIONS = {"temperature": 0.0, "max_tokens": 1024, "timeout": 60.0}  # what aoi run may pass to any spec


def test_replay_spec_is_not_wrapped_and_takes_the_common_options(tmp_path):
    (tmp_path / "steps.yaml").write_text("- hello\n")
    built = load_model(f"replay:{tmp_path / 'steps.yaml'}", **RUN_CONFIG_OPTIONS)
    assert isinstance(built, ReplayModel) and built.complete([], role="observer").text == "hello"


def test_local_spec_reports_a_missing_model(tmp_path):
    with pytest.raises(ModelError, match="no local model at"):
        load_model(f"local:{tmp_path}/nothing+adapter={tmp_path}/lora")


def test_expert_spec_builds_it_or_says_it_is_missing():
    if importlib.util.find_spec("aoi.models.expert") is None:
        with pytest.raises(ModelError, match="aoi.models.expert.ExpertModel"):
            load_model("expert")
    else:
        try:
            built = load_model("expert")
        except TypeError as err:  # its constructor needs arguments this test cannot know
            pytest.skip(f"ExpertModel needs options: {err}")
        assert not isinstance(built, RetryingModel) and hasattr(built, "complete")


@pytest.mark.parametrize("spec", ["gpt-4o", "claude:x", "openai:", "vllm:model-without-url", "replay:", "expert:x"])
def test_bad_specs_list_the_forms(spec):
    with pytest.raises(ValueError) as caught:
        load_model(spec)
    message = str(caught.value)
    assert spec.split(":")[0] in message
    if spec in ("gpt-4o", "claude:x", "openai:"):
        assert all(form in message for form in FORMS)
