"""A tiny teacher dataset in the `aoi data export` format, made from real expert episodes on the twin."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aoi.agents.runtime import run_episode
from aoi.config import load_config
from aoi.env import make
from aoi.models.expert import ExpertModel
from aoi.train.dataset import problem_key
from aoi.train.rollouts import team

MITIGATION = "scale_pod_zero_social_net-mitigation-1"
DETECTION = "noop_detection_social_network-1"
LOCALIZATION = "network_loss_hotel_res-localization-1"
CALLS = ("ok", "format_error")  # Observer steps that are model calls (the final submit record is not)


def observer_calls(traj) -> list:
    """Return the Observer's model calls of a trajectory, in order."""
    return [s for s in traj.steps if s.role == "observer" and s.messages and s.status in CALLS]


def rows_of(traj, problem) -> tuple[list[dict], list[dict]]:
    """Return (sft rows, rl rows) of one expert episode, as `aoi data export` writes them."""
    common = {"problem_id": problem.id, "task_type": problem.task_type, "family": problem.family,
              "app": problem.app, "target": problem.target or "", "seed": traj.seed}
    sft, rl, texts = [], [], []
    for index, step in enumerate(observer_calls(traj)):
        prompt = [{"role": m["role"], "content": m["content"]} for m in step.messages]
        sft.append({"prompt": prompt, "completion": [{"role": "assistant", "content": step.text}], **common,
                    "role": "observer", "success": bool(traj.results.get("success")),
                    "strict_success": bool(traj.strict_success), "trajectory_id": traj.id, "decision_index": index})
        rl.append({"prompt": prompt, **common, "prefix": json.dumps(texts), "decision_index": index})
        texts.append(step.text)
    return sft, rl


def export(folder: Path, episodes: list[tuple[str, str]], decision_format: str = "standard") -> Path:
    """Run the expert on (problem id, split part) pairs and write the dataset folder; return it."""
    import datasets

    sft, rl, splits = [], [], {name: {"train": [], "test": []} for name in ("by_target", "by_family", "by_app")}
    config = load_config(overrides={"model": "expert", "agent.decision_format": decision_format}, environ={})
    for problem_id, part in episodes:
        env = make(problem_id)
        try:
            traj = run_episode(env, config, team(ExpertModel()))
            more_sft, more_rl = rows_of(traj, env.problem)
        finally:
            env.close()
        sft, rl = sft + more_sft, rl + more_rl
        for lists in splits.values():
            lists[part].append(problem_key(more_rl[0]))
    for view, rows in (("sft/observer", sft), ("rl", rl)):
        table = datasets.Dataset.from_list(rows)
        table.save_to_disk(str(folder / view))
        table.to_parquet(str(folder / f"{view}.parquet"))
    (folder / "splits.json").write_text(json.dumps(splits))
    (folder / "card.md").write_text("Test dataset: the expert on two problems.\n")
    return folder


@pytest.fixture(scope="session")
def dataset(tmp_path_factory) -> Path:
    """The mitigation episode for training, the detection one held out."""
    return export(tmp_path_factory.mktemp("data"), [(MITIGATION, "train"), (DETECTION, "test")])


@pytest.fixture(scope="session")
def compact_dataset(tmp_path_factory) -> Path:
    """The expert's compact decisions (a local model's format) on a localization problem, the detection one held out."""
    return export(tmp_path_factory.mktemp("compact"), [(LOCALIZATION, "train"), (DETECTION, "test")], "compact")
