"""GRPO on the tiny model: rewards from twin episodes, each term logged; checkpoints resume; config errors are clear."""

from __future__ import annotations

import json

import pytest
import yaml

from aoi.train.common import read_jsonl
from aoi.train.grpo import GrpoOptions, _validate, read_config, train_grpo
from aoi.train.manifest import read_manifest
from aoi.train.rewards import TERMS

SMALL = {"num_generations": 2, "per_device_train_batch_size": 2, "max_completion_length": 16, "save_steps": 1,
         "learning_rate": 1e-3, "shuffle_dataset": False}


def config_file(folder, **sections):
    path = folder / "grpo.yaml"
    path.write_text(yaml.safe_dump({"grpo": SMALL, **sections}))
    return path


@pytest.fixture(scope="module")
def run(dataset, tmp_path_factory):
    folder = tmp_path_factory.mktemp("grpo")
    options = GrpoOptions(data=dataset, out=folder / "out", max_steps=2, config=config_file(folder))
    return options, train_grpo(options)


def reward_lines(out):
    return [line for line in read_jsonl(out / "metrics.jsonl") if "reward" in line]


def test_grpo_logs_every_reward_term_and_writes_checkpoints(run):
    options, manifest = run
    out = options.out
    assert sorted(p.name for p in (out / "checkpoints").glob("checkpoint-*")) == ["checkpoint-1", "checkpoint-2"]
    lines = reward_lines(out)
    assert [line["step"] for line in lines] == [1, 2]
    for name in TERMS:
        assert all(f"rewards/{name}/mean" in line for line in lines), name
    assert all("frac_reward_zero_std" in line for line in lines)  # the share of groups that teach nothing
    assert manifest["metrics"]["episodes_played"] >= 2 and manifest["role"] == "observer"
    assert manifest["hyper_parameters"]["grpo"]["num_generations"] == 2 and manifest["kind"] == "grpo"
    assert manifest["hyper_parameters"]["grpo"]["scale_rewards"] == "none"  # advantages: reward - group mean
    assert (out / "adapter_model.safetensors").is_file() and read_manifest(out)["version"].startswith("grpo-")


def test_constrained_sampling_makes_every_sample_a_parsable_decision(run):
    options, manifest = run
    lines = reward_lines(options.out)
    assert manifest["constrained"] and manifest["hyper_parameters"]["constrained"]
    # the format term is 1 for a sample whose decision parses: mean 1 and std 0 means all of them did
    assert [(line["rewards/format/mean"], line["rewards/format/std"]) for line in lines] == [(1.0, 0.0)] * 2


def test_every_sample_is_logged_with_its_state_decision_and_outcome(run):
    options, manifest = run
    lines = read_jsonl(options.out / "samples.jsonl")
    assert [line["step"] for line in lines] == [0, 1]  # one batch per optimizer step, drawn before it
    for line in lines:
        assert len(line["samples"]) == 2  # a group of num_generations
        assert len({(s["problem_id"], s["target"], s["seed"], s["decision_index"]) for s in line["samples"]}) == 1
        assert all(json.loads(s["decision"])["next"] and isinstance(s["success"], bool) for s in line["samples"])
    assert sum(len(line["samples"]) for line in lines) >= manifest["metrics"]["episodes_played"]  # repeats: played once


def test_aoi_report_draws_the_run_by_step_and_wall_clock(run, tmp_path):
    from aoi.evaluate.training import write_training_report

    options, _ = run
    text = write_training_report(options.out, [], tmp_path / "report")[0].read_text()
    last = reward_lines(options.out)[-1]
    assert f"| out | trl | tiny | {last['step']} |" in text and f"| {last['step']} | {last['reward']:.2f} |" in text
    assert "```\nReward by wall-clock\n" in text


def test_unconstrained_sampling_keeps_trls_generation(dataset, tmp_path):
    path = config_file(tmp_path, rollout={"constrained": False})
    manifest = train_grpo(GrpoOptions(data=dataset, out=tmp_path / "out", max_steps=1, config=path))
    line = reward_lines(tmp_path / "out")[0]
    assert manifest["constrained"] is False
    assert line["rewards/format/mean"] == 0.0  # a random 2-layer model never writes a decision freely


def test_resume_continues_from_the_checkpoint(run):
    options, _ = run
    resumed = GrpoOptions(**{**options.__dict__, "max_steps": 3, "resume": True})
    manifest = train_grpo(resumed)
    assert manifest["metrics"]["steps"] == 3
    assert [line["step"] for line in reward_lines(options.out)] == [1, 2, 3]  # steps 1-2 were not trained again
    # the checkpoint's linear decay had reached 0 at its last step; the resumed step runs (and logs) the rate of
    # the new 3-step schedule at step 3, not 0
    rates = [line["learning_rate"] for line in reward_lines(options.out)]
    assert rates == pytest.approx([SMALL["learning_rate"] * (1 - step / 2) for step in (0, 1)]
                                  + [SMALL["learning_rate"] * (1 - 2 / 3)])


def test_whole_episode_rollouts_share_the_episode_reward(dataset, tmp_path):
    path = tmp_path / "grpo.json"
    sections = {"grpo": SMALL, "rollout": {"mode": "whole_episode", "max_iterations": 2},
                "rewards": {"success": 1.0, "format": 0.5}}
    path.write_text(json.dumps(sections))
    manifest = train_grpo(GrpoOptions(data=dataset, out=tmp_path / "out", max_steps=1, config=path))
    line = reward_lines(tmp_path / "out")[0]
    assert manifest["mode"] == "whole_episode" and manifest["metrics"]["episodes_played"] == 2
    assert manifest["hyper_parameters"]["episode_iterations"] == 2
    assert line["rewards/success/mean"] == 0.0  # a random 2-layer model never fixes the fault
    assert line["rewards/format/mean"] == 1.0 and "rewards/strict/mean" not in line  # constrained: all parse


@pytest.mark.parametrize("text, message", [
    ("grpo: {loss_tpye: dapo}", "grpo.loss_tpye is not a GRPOConfig field"),
    ("grpo: {max_steps: 3}", "set by the command"),
    ("trainer: {}", "unknown section 'trainer'"),
    ("rollout: {constrained: maybe}", "rollout.constrained is 'maybe'"),
    ("grpo: {max_completion_length: 8}", "too short for a decision that parses")])
def test_config_mistakes_are_named(tmp_path, text, message):
    path = tmp_path / "grpo.yaml"
    path.write_text(text)
    with pytest.raises(ValueError, match=message):
        _validate(read_config(GrpoOptions(data=tmp_path, out=tmp_path, config=path)))


def test_varied_states_keeps_the_states_whose_draws_end_differently(dataset, tmp_path):
    from aoi.train.dataset import load_view
    from aoi.train.decisions import varied_rows
    from aoi.train.rewards import DEFAULT_WEIGHTS
    from aoi.train.rollouts import OutcomeCache

    rows = load_view(dataset, "rl", "by_target").select([0, 1])
    teacher = [row["completion"][0]["content"] for row in load_view(dataset, "sft/observer", "by_target")]
    submit = teacher[-1]  # the expert's final submission, drawn at the first state too: nothing is fixed yet
    # the second state: one decision drawn twice
    draws = {str(rows[0]["prompt"]): [teacher[0], submit], str(rows[1]["prompt"]): [teacher[1], teacher[1]]}

    class Trainer:
        pass

    def texts(prompts, trainer):
        return draws[str(prompts[0])]

    def varied(rows, texts, log, policy="sft-1"):
        return varied_rows(rows, texts, Trainer(), OutcomeCache(), group=2, weights=DEFAULT_WEIGHTS, log=log,
                           policy=policy)

    log = tmp_path / "states.jsonl"
    kept = varied(rows, texts, log)
    lines = read_jsonl(log)
    assert [line["varied"] for line in lines] == [True, False] and lines[1]["decisions"] == [teacher[1]] * 2
    assert len(set(lines[0]["rewards"])) == 2 and [row["decision_index"] for row in kept] == [0]
    # a second call reads the log: nothing is drawn again; another starting policy's draws are not reused
    assert len(varied(rows, None, log)) == 1
    with pytest.raises(RuntimeError, match="another policy"):
        varied(rows, None, log, policy="sft-2")
    with pytest.raises(RuntimeError, match="none of the 1 states"):
        varied(rows.select([1]), texts, tmp_path / "flat.jsonl")


def test_grpo_on_varied_states_trains_only_on_them_and_reuses_the_draws_on_resume(dataset, tmp_path):
    path = config_file(tmp_path, rollout={"varied_states": True})
    options = GrpoOptions(data=dataset, out=tmp_path / "out", max_steps=1, config=path)
    manifest = train_grpo(options)
    states = read_jsonl(options.out / "states.jsonl")
    varied = [line for line in states if line["varied"]]
    assert len(states) == manifest["metrics"]["states_recorded"] and manifest["varied_states"]
    assert manifest["metrics"]["states"] == len(varied) >= 1
    assert manifest["metrics"]["state_choice_seconds"] > 0 and manifest["metrics"]["wall_seconds"] > 0
    trained = {(s["problem_id"], s["decision_index"]) for line in read_jsonl(options.out / "samples.jsonl")
               for s in line["samples"]}
    assert trained <= {(line["problem_id"], line["decision_index"]) for line in varied}
    train_grpo(GrpoOptions(**{**options.__dict__, "max_steps": 2, "resume": True}))
    assert read_jsonl(options.out / "states.jsonl") == states  # the states' draws were read, not drawn again
