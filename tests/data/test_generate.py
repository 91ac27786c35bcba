"""`aoi data generate` with the expert on two problems, exported; an RL prefix really restores its decision's state."""

from __future__ import annotations

import json

import pytest
from datasets import load_from_disk
from typer.testing import CliRunner

from aoi.agents.runtime import models_from_config, run_episode
from aoi.cli import app
from aoi.config import load_config
from aoi.data.generate import choose
from aoi.data.splits import catalogue_keys, make_splits
from aoi.data.views import problem_key
from aoi.env import make
from aoi.models.replay import ReplayModel

PROBLEMS = "revoke_auth_mongodb-detection-1,noop_detection_social_network-1"  # the no-fault key by_target trains on


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """Generate teacher data on the by_target train side of two problems, export it; return (run, data)."""
    folder = tmp_path_factory.mktemp("teacher")
    run, data = folder / "run", folder / "data"
    runner = CliRunner()
    result = runner.invoke(app, ["data", "generate", "--out", str(run), "--problems", PROBLEMS, "--targets", "all",
                                 "--split", "by_target"])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["data", "export", str(run), "--out", str(data)])
    assert result.exit_code == 0, result.output
    return run, data


def test_generate_runs_only_the_train_side_and_export_makes_rows_of_it(generated):
    run, data = generated
    held = set(make_splits(catalogue_keys())["by_target"]["test"])
    ran = json.loads((run / "generate.json").read_text())["pairs"]
    assert len(ran) == 2 and not set(ran) & held  # one of revoke_auth's two targets is held out
    rows = load_from_disk(str(data / "sft" / "observer")).to_list()
    assert {problem_key(r["problem_id"], r["target"]) for r in rows} == set(ran)
    assert all(r["success"] and r["strict_success"] for r in rows)
    assert all(r["prompt"][0]["role"] == "system" and r["completion"][0]["content"].startswith("{") for r in rows)
    assert load_from_disk(str(data / "sft" / "probe")).num_rows > 0
    assert "expert" in (data / "card.md").read_text()


def test_named_targets_select_the_problems_that_accept_them():
    pairs, _ = choose(PROBLEMS, targets="mongodb-rate")
    assert pairs == [("revoke_auth_mongodb-detection-1", "mongodb-rate")]
    with pytest.raises(ValueError, match="--targets is empty"):
        choose(PROBLEMS, targets=",")


def test_replaying_a_prefix_restores_the_state_of_its_decision(generated):
    _, data = generated
    row = next(r for r in load_from_disk(str(data / "rl")).to_list() if r["decision_index"] == 2)
    config = load_config(overrides={"model": "expert"}, environ={})
    config.env.seed = row["seed"]
    models = models_from_config(config)
    models["observer"] = observer = ReplayModel([("observer", text) for text in row["prefix"]])
    env = make(row["problem_id"], seed=row["seed"], target=row["target"] or None, max_steps=config.env.max_steps)
    try:
        run_episode(env, config, models)
    finally:
        env.close()
    asked = [messages for role, messages in observer.requests if role == "observer"]
    assert len(asked) > len(row["prefix"]) and asked[len(row["prefix"])] == row["prompt"]


def test_bad_options_exit_2_saying_what_to_pass(tmp_path):
    runner = CliRunner()
    result = runner.invoke(app, ["data", "export", str(tmp_path), "--out", str(tmp_path / "d"), "--target-ratio", "2"])
    assert result.exit_code == 2 and "--target-ratio" in result.output
    result = runner.invoke(app, ["data", "generate", "--out", str(tmp_path / "r"), "--split", "by_colour"])
    assert result.exit_code == 2 and "choose from by_target, by_family, by_app" in result.output
