"""SFT by epochs, its loss per decision position, --max-length that really drops, and resume from a checkpoint."""

from __future__ import annotations

import shutil

import pytest

from aoi.models.bases import smollm2_tokenizer
from aoi.train.common import read_jsonl
from aoi.train.dataset import DatasetError, load_view
from aoi.train.positions import token_ids
from aoi.train.sft import SftOptions, fitting, train_sft

pytestmark = pytest.mark.slow  # SFT runs (by epochs, resumed, length-limited): over a minute on two cores


def lengths(dataset) -> list[int]:
    rows = load_view(dataset, "sft/observer", "by_target", "train")
    return [len(token_ids(smollm2_tokenizer(), r["prompt"] + r["completion"])) for r in rows]


def test_token_ids_are_a_plain_list_of_the_whole_conversation():
    ids = token_ids(smollm2_tokenizer(), [{"role": "user", "content": "kubectl get pods -n test-social-network"}])
    assert isinstance(ids, list) and len(ids) > 10 and all(isinstance(i, int) for i in ids)


def test_max_length_drops_the_longer_examples_and_counts_them(dataset, tmp_path):
    sizes = sorted(lengths(dataset))
    limit = sizes[len(sizes) // 2]  # the median: the examples above it go
    rows = load_view(dataset, "sft/observer", "by_target", "train")
    kept, dropped = fitting(rows, smollm2_tokenizer(), limit)
    assert dropped == sum(size > limit for size in sizes) > 0 and len(kept) == len(sizes) - dropped
    manifest = train_sft(SftOptions(data=dataset, out=tmp_path / "sft", max_steps=1, max_length=limit))
    assert manifest["metrics"]["rows_dropped_too_long"] == dropped and manifest["metrics"]["rows"] == len(kept)


def test_a_max_length_below_every_example_says_so(dataset, tmp_path):
    with pytest.raises(DatasetError, match="longer than --max-length 5 tokens; raise --max-length"):
        train_sft(SftOptions(data=dataset, out=tmp_path / "sft", max_steps=1, max_length=5))


def test_epochs_train_every_row_and_log_losses_per_position(dataset, tmp_path):
    rows = len(lengths(dataset))
    manifest = train_sft(SftOptions(data=dataset, out=tmp_path / "sft", epochs=3, learning_rate=5e-3,
                                    eval_every=0.5))
    assert manifest["metrics"]["steps"] == 3 * rows and manifest["metrics"]["epochs"] == 3
    assert manifest["metrics"]["eval_rows"] > 0  # the split's test part: the held-out detection episode
    measured = [line for line in read_jsonl(tmp_path / "sft" / "metrics.jsonl") if "train/loss_first" in line]
    assert [line["step"] for line in measured] == [0, (3 * rows + 1) // 2, 3 * rows]
    assert {"train/loss_later", "eval/loss_first", "eval/loss_later"} <= set(measured[0])
    assert measured[-1]["train/loss_first"] < measured[0]["train/loss_first"]  # it learned the first decision
    assert manifest["metrics"]["position_losses"]["start"]["step"] == 0


def test_a_killed_run_resumes_from_its_last_checkpoint(dataset, tmp_path):
    out = tmp_path / "sft"
    options = SftOptions(data=dataset, out=out, max_steps=4, save_steps=2, eval_every=10, seed=3)
    whole = train_sft(options)
    shutil.rmtree(out / "checkpoints" / "checkpoint-4")  # as if killed between the two checkpoints
    (out / "manifest.json").unlink()
    again = train_sft(SftOptions(**{**options.__dict__, "resume": True}))
    steps = [line["step"] for line in read_jsonl(out / "metrics.jsonl") if "loss" in line]
    assert steps == [1, 2, 3, 4, 3, 4]  # the resumed run did steps 3 and 4 only
    assert again["version"] == whole["version"]  # and ended with the same weights
