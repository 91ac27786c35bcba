"""GRPO of the scenario generator: a tiny model trains on seed prompts, every reward dimension is logged, and the
rewards are the execution-verified scores of aoi.evolve.rewards (a scenario that runs and is fixed scores above one
that does not parse)."""

from __future__ import annotations

import json

import pytest
import yaml
from tests.handmade_scenarios import scale_zero, variant
from typer.testing import CliRunner

from aoi.cli import app
from aoi.evolve.rewards import DEFAULT_WEIGHTS
from aoi.problems.scenarios import dumps
from aoi.problems.seeds import seed_scenarios
from aoi.train.common import read_jsonl
from aoi.train.evolver import GroupScorer, train_evolver
from aoi.train.grpo import GrpoOptions
from aoi.train.manifest import read_manifest

# Free decoding and 16 tokens keep the run in CI time; no tiny-model scenario parses at that length.
SMALL = {"num_generations": 2, "per_device_train_batch_size": 2, "max_completion_length": 16, "save_steps": 1}


@pytest.fixture(scope="module")
def seeds(tmp_path_factory):
    path = tmp_path_factory.mktemp("seeds") / "seeds.jsonl"
    path.write_text("".join(dumps(s) + "\n" for s in seed_scenarios()[:2]))
    return path


def config(folder, **sections):
    path = folder / "evolver.yaml"
    path.write_text(yaml.safe_dump({"grpo": SMALL, "rollout": {"constrained": False}, **sections}))
    return path


@pytest.fixture(scope="module")
def run(seeds, tmp_path_factory):
    import torch

    folder = tmp_path_factory.mktemp("evolver")
    options = GrpoOptions(data=seeds, out=folder / "out", role="evolver", base="tiny", max_steps=2,
                          config=config(folder))
    before = torch.get_num_threads()
    torch.set_num_threads(1)  # a 2-layer model gains nothing from threads that wait on a loaded machine's cores
    try:
        return options, train_evolver(options)
    finally:
        torch.set_num_threads(before)


def test_evolver_grpo_logs_every_reward_dimension_and_counts_the_scenarios(run):
    options, manifest = run
    lines = [line for line in read_jsonl(options.out / "metrics.jsonl") if "reward" in line]
    assert [line["step"] for line in lines] == [1, 2]
    for name in DEFAULT_WEIGHTS:
        assert all(f"rewards/{name}/mean" in line for line in lines), name
    assert [line["scenarios/candidates"] for line in lines] == [2, 2]
    assert manifest["role"] == "evolver" and manifest["kind"] == "grpo" and manifest["seeds"] == 2
    assert manifest["hyper_parameters"]["rewards"] == DEFAULT_WEIGHTS and manifest["metrics"]["candidates"] == 4
    assert sorted(p.name for p in (options.out / "checkpoints").glob("checkpoint-*")) == ["checkpoint-1",
                                                                                        "checkpoint-2"]
    assert read_manifest(options.out)["version"].startswith("grpo-")


def test_every_candidate_is_kept_with_its_step_provenance_and_reasons(run):
    options, _ = run
    candidates = [json.loads(line) for line in (options.out / "candidates.jsonl").read_text().splitlines()]
    assert [(c["step"], c["group"]) for c in candidates] == [(1, 0), (1, 1), (2, 0), (2, 1)]
    assert {c["seed"] for c in candidates} <= {s.id for s in seed_scenarios()[:2]}
    assert all(c["generator"] == "local:tiny+grpo" and not c["valid"] and c["errors"] for c in candidates)
    assert all(c["dimensions"]["format"] == 0.0 and c["problems"] for c in candidates)


def test_rewards_are_the_executed_scores_with_diversity_within_the_group(tmp_path):
    seed = next(s for s in seed_scenarios() if s.app == "hotel-reservation")
    scorer = GroupScorer([seed], weights=DEFAULT_WEIGHTS, generator="replay", log=tmp_path / "c.jsonl", seed=0)
    runs, fixed = json.dumps(scale_zero()), f"```json\n{json.dumps(scale_zero())}\n```"
    outside = json.dumps(variant(scale_zero(), solution_commands=["kubectl delete pod coredns -n kube-system"]))
    texts = [runs, "not a scenario", fixed, outside]
    values = {name: scorer.reward(name)(None, texts, [seed.id] * 4) for name in DEFAULT_WEIGHTS}
    assert values["format"] == [1.0, 0.0, 1.0, 0.0]  # out of scope: zero on every dimension, format included
    assert values["solution_effectiveness"] == values["problem_validity"] == [1.0, 0.0, 1.0, 0.0]
    assert max(values["diversity"]) < 0.1  # the two runnable ones are copies of each other in one group
    assert scorer.totals == {"candidates": 4, "valid": 2, "executable": 2}  # executed once for all six dimensions


def test_config_mistakes_of_the_evolver_are_named(seeds, tmp_path):
    base = ["train", "grpo", "--role", "evolver", "--out", str(tmp_path / "out"), "--base", "tiny"]
    missing = CliRunner().invoke(app, [*base, "--data", str(tmp_path / "none.jsonl")])
    assert missing.exit_code == 2 and "seed scenarios" in missing.output
    path = config(tmp_path, rollout={"mode": "whole_episode"})
    episodes = CliRunner().invoke(app, [*base, "--data", str(seeds), "--config", str(path)])
    assert episodes.exit_code == 2 and "Observer's episode settings" in episodes.output
    path = config(tmp_path, rewards={"succes": 1.0})
    typo = CliRunner().invoke(app, [*base, "--data", str(seeds), "--config", str(path)])
    assert typo.exit_code == 2 and "unknown reward dimension(s) succes" in typo.output
