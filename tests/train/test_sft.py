"""SFT writes a LoRA adapter and a manifest; the adapter loads with peft and changes the model's outputs."""

from __future__ import annotations

import json

import pytest

from aoi.train.common import read_jsonl, resolve_precision
from aoi.train.dataset import DatasetError, data_sha256
from aoi.train.manifest import FIELDS, read_manifest
from aoi.train.sft import SftOptions, train_sft


@pytest.fixture(scope="module")
def adapter(dataset, tmp_path_factory):
    out = tmp_path_factory.mktemp("sft")
    manifest = train_sft(SftOptions(data=dataset, out=out, base="tiny", max_steps=2, learning_rate=5e-3))
    return out, manifest


def test_sft_writes_an_adapter_with_its_manifest(adapter, dataset):
    out, manifest = adapter
    assert (out / "adapter_config.json").is_file() and (out / "adapter_model.safetensors").is_file()
    assert read_manifest(out) == manifest and set(FIELDS) <= set(manifest)
    assert manifest["base"] == "tiny" and manifest["role"] == "observer" and manifest["split"] == "by_target"
    assert manifest["data_sha256"] == data_sha256(dataset)  # training left the dataset folder as it was
    assert manifest["metrics"]["steps"] == 2 and manifest["metrics"]["rows"] > 0
    logged = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [line["step"] for line in logged if "loss" in line] == [1, 2]
    assert list((out / "tensorboard").rglob("events.out.tfevents.*"))


def test_the_adapter_loads_and_changes_outputs(adapter):
    import torch
    from peft import PeftModel

    from aoi.models.bases import load_base

    model, tokenizer = load_base("tiny")
    ids = tokenizer("kubectl get pods -n test-social-network", return_tensors="pt")["input_ids"]
    with torch.no_grad():
        before = model(ids).logits
        tuned = PeftModel.from_pretrained(model, str(adapter[0])).eval()
        after = tuned(ids).logits
    assert not torch.allclose(before, after)


def test_a_missing_role_view_says_how_to_make_it(dataset, tmp_path):
    with pytest.raises(DatasetError, match="no sft/executor/ dataset.*aoi data export"):
        train_sft(SftOptions(data=dataset, out=tmp_path / "out", role="executor", max_steps=1))


def test_the_same_seed_trains_the_same_adapter(adapter, dataset, tmp_path):
    again = train_sft(SftOptions(data=dataset, out=tmp_path / "again", base="tiny", max_steps=2, learning_rate=5e-3))
    assert again["version"] == adapter[1]["version"]  # the version is the sha256 of the weights


def test_bf16_autocast_computes_the_loss_in_bf16_and_says_so(adapter, dataset, tmp_path):
    bf16 = train_sft(SftOptions(data=dataset, out=tmp_path / "bf16", base="tiny", max_steps=2, learning_rate=5e-3,
                                precision="bf16"))
    assert adapter[1]["precision"] == "fp32" and bf16["precision"] == "bf16"  # auto: the tiny model stays fp32
    first = [next(line["loss"] for line in read_jsonl(out / "metrics.jsonl") if "loss" in line)
             for out in (adapter[0], tmp_path / "bf16")]
    assert first[0] != first[1] and first[1] == pytest.approx(first[0], rel=0.05)  # bf16's rounding, same weights


@pytest.mark.parametrize(("device", "base", "native", "resolved"), [("cpu", "smollm2", True, "bf16"),
                                                                     ("cpu", "smollm2", False, "fp32"),
                                                                     ("cpu", "tiny", True, "fp32"),
                                                                     ("cuda", "tiny", False, "bf16")])
def test_auto_precision_is_bf16_where_the_hardware_computes_it(monkeypatch, device, base, native, resolved):
    import aoi.models.local

    monkeypatch.setattr(aoi.models.local, "cpu_has_bf16", lambda: native)
    assert resolve_precision("auto", device, base) == resolved
    assert resolve_precision("fp32", device, base) == "fp32"


def test_an_unknown_precision_is_refused_before_any_load(dataset, tmp_path):
    with pytest.raises(ValueError, match="use --precision auto, fp32 or bf16"):
        train_sft(SftOptions(data=dataset, out=tmp_path / "out", base="tiny", precision="fp16"))
