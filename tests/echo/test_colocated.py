"""Echo without Ray: the co-located baseline trains on whole groups, resumes, and the update corrects stale samples."""

from __future__ import annotations

import pytest
from safetensors.torch import load_file
from typer.testing import CliRunner

from aoi.cli import app
from aoi.echo.engine import train_echo
from aoi.echo.groups import Group, Sample
from aoi.echo.trainer import Trainer, TrainSpec
from aoi.train.common import read_jsonl
from aoi.train.rewards import DEFAULT_WEIGHTS

from .conftest import echo_options


@pytest.fixture(scope="module")
def colocated(dataset, small_config, tmp_path_factory):
    out = tmp_path_factory.mktemp("colocated") / "out"
    options = echo_options(dataset, small_config, out, mode="colocated")
    return options, train_echo(options)


def test_colocated_trains_whole_groups_drawn_by_the_version_it_trains(colocated):
    options, manifest = colocated
    lines = read_jsonl(options.grpo.out / "metrics.jsonl")
    assert [line["step"] for line in lines] == [1, 2] and [line["policy_version"] for line in lines] == [1, 2]
    assert [line["versions"] for line in lines] == [[0], [1]]  # each group is tagged with the version that drew it
    assert all(line["staleness"] == [0] and line["rollouts"] == 2 for line in lines)
    for name in DEFAULT_WEIGHTS:
        assert all(f"rewards/{name}/mean" in line for line in lines), name
    assert manifest["engine"] == "echo" and manifest["mode"] == "colocated" and manifest["kind"] == "grpo"


def test_the_saved_adapter_moved_and_loads(colocated):
    from aoi.models.local import LocalModel

    options, manifest = colocated
    weights = load_file(options.grpo.out / "adapter_model.safetensors")
    moved = [name for name, tensor in weights.items() if "lora_B" in name and tensor.abs().max() > 0]
    # A fresh LoRA's B matrices are exactly 0, and GRPO moves them only where a group's rewards differed (the
    # Finisher scores each decision's own outcome: a random model's decisions often all score alike).
    spread = any(line["reward_std"] > 0 for line in read_jsonl(options.grpo.out / "metrics.jsonl"))
    assert bool(moved) == spread
    assert LocalModel("tiny", adapter=options.grpo.out).adapter_version == manifest["version"]


def test_resume_continues_from_the_checkpoint_and_its_version(colocated, dataset, small_config):
    options, _ = colocated
    resumed = echo_options(dataset, small_config, options.grpo.out, mode="colocated", max_steps=3, resume=True)
    manifest = train_echo(resumed)
    lines = read_jsonl(options.grpo.out / "metrics.jsonl")
    assert [line["step"] for line in lines] == [1, 2, 3]  # steps 1-2 were not trained again
    assert lines[-1]["versions"] == [2] and manifest["metrics"]["version"] == 3


def test_a_stale_sample_is_weighted_by_the_truncated_importance_ratio(tmp_path):
    trainer = Trainer(TrainSpec(is_cap=2.0, learning_rate=1e-3), {"base": "tiny"}, tmp_path)
    unlikely = [-30.0, -30.0]  # the behaviour policy drew these tokens far less likely than the current one
    group = Group(group_id="s0-i0-0", sampler=0, version=0, row=0, busy_s=0.0, samples=(
        Sample(prompt_ids=[1, 2, 3], completion_ids=[4, 5], logprobs=unlikely, text="", terms={}, reward=1.0),
        Sample(prompt_ids=[1, 2, 3], completion_ids=[6, 7], logprobs=unlikely, text="", terms={}, reward=0.0)))
    update = trainer.update([group])
    assert update["is_ratio_max"] == 2.0 and update["is_ratio_mean"] == 2.0  # pi/pi_behaviour is huge: capped
    assert update["policy_version"] == 1 and (tmp_path / "checkpoints" / "step-1" / "state.json").is_file()


def test_a_group_differing_by_a_jitter_gets_a_jitter_sized_gradient_unless_scaled_by_its_std(tmp_path):
    def grad_norm(scale: str, rewards: tuple[float, float]) -> float:
        trainer = Trainer(TrainSpec(scale_rewards=scale, max_grad_norm=1e9), {"base": "tiny"}, tmp_path / scale)
        group = Group(group_id="s0-i0-0", sampler=0, version=0, row=0, busy_s=0.0, samples=tuple(
            Sample(prompt_ids=[1, 2, 3], completion_ids=ids, logprobs=[], text="", terms={}, reward=reward)
            for ids, reward in zip(([4, 5], [6, 7]), rewards)))
        return trainer.update([group])["grad_norm"]

    jitter, outcome = grad_norm("none", (1.003, 1.0)), grad_norm("none", (1.0, 0.0))
    assert jitter == pytest.approx(outcome * 0.003, rel=0.01)  # advantages: reward - group mean
    assert grad_norm("group", (1.003, 1.0)) == pytest.approx(grad_norm("group", (1.0, 0.0)), rel=0.05)


@pytest.mark.parametrize(("flags", "says"), [(["--mode", "warp"], "use colocated, sequential or async"),
                                             (["--engine", "jax"], "use trl or echo"),
                                             (["--sampler-url", "localhost:8000"], "is not an http(s) URL"),
                                             (["--sampler-url", "http://127.0.0.1:9/v1"], "no completions server"),
                                             (["--precision", "bf16"], "chooses --engine trl's")])
def test_bad_echo_flags_are_clear_errors(dataset, tmp_path, flags, says):
    args = ["train", "grpo", "--data", str(dataset), "--out", str(tmp_path / "o"), "--engine", "echo", *flags]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2 and says in result.output


def test_a_new_run_refuses_a_folder_holding_an_earlier_one(colocated, dataset, small_config):
    options, _ = colocated
    with pytest.raises(ValueError, match="pass --resume to continue it or choose a new --out"):
        train_echo(echo_options(dataset, small_config, options.grpo.out, mode="colocated"))
