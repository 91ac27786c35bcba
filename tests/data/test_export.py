"""`export`: runs -> datasets that round-trip (save_to_disk and parquet), splits.json and a card saying how."""

from __future__ import annotations

import json

import pytest
from datasets import Dataset, load_from_disk

from aoi.data.export import export, read_run
from aoi.data.views import problem_key, rl_rows, sft_rows
from aoi.evaluate.results import ResultsLog, result_row
from aoi.store import TrajectoryStore
from aoi.trajectory import Policy, Step, Trajectory


def observer_step(text: str, n: int) -> Step:
    return Step("observer", text, messages=[{"role": "system", "content": "Observer"},
                                            {"role": "user", "content": f"decide {n}"}])


def episode(problem_id: str, target: str | None, seed: int, attempt: int = 0) -> Trajectory:
    steps = [observer_step('{"next": "probe"}', 0),
             Step("probe", "look", action="exec_shell(...)", observation="pods",
                  messages=[{"role": "system", "content": "Probe"}, {"role": "user", "content": "look"}]),
             observer_step('{"next": "submit", "answer": "Yes"}', 1)]
    return Trajectory(problem_id, "detection", family="f", target=target, seed=seed, attempt=attempt,
                      policy=Policy("expert"), steps=steps, results={"Detection Accuracy": "Correct"},
                      strict_success=True, env_version="1")


def write_run(folder, trajs: list[Trajectory], recorded: int | None = None) -> None:
    """Write a run directory: the store, and results.jsonl lines for the first `recorded` episodes."""
    store = TrajectoryStore(folder / "trajectories.db")
    log = ResultsLog(folder / "results.jsonl")
    for n, traj in enumerate(trajs):
        store.save(traj)
        if recorded is None or n < recorded:
            log.append(result_row(traj))
    (folder / "config.json").write_text(json.dumps({"models": {r: {"spec": "expert"} for r in ("observer", "probe")}}))


@pytest.fixture
def runs(tmp_path):
    first, second = tmp_path / "run-a", tmp_path / "run-b"
    first.mkdir(), second.mkdir()
    write_run(first, [episode("k8s_target_port-misconfig-detection-1", "text-service", 0),
                      episode("revoke_auth_mongodb-detection-1", "mongodb-geo", 1),
                      episode("revoke_auth_mongodb-detection-1", "mongodb-rate", 0)], recorded=2)
    write_run(second, [episode("noop_detection_hotel_reservation-1", None, 0)])
    return [first, second]


def rows_of(folder) -> list[dict]:
    return load_from_disk(str(folder)).to_list()


def test_datasets_round_trip_through_disk_and_parquet(runs, tmp_path):
    out = tmp_path / "data"
    counts = export(runs, out)
    trajs = sorted([t for run in runs for t in read_run(run).trajectories],
                   key=lambda t: (problem_key(t.problem_id, t.target), t.seed, t.attempt, t.id))
    expected_sft = [row for t in trajs for row in sft_rows(t)]
    observer = [row for row in expected_sft if row["role"] == "observer"]
    assert rows_of(out / "sft" / "observer") == observer and counts["sft"]["observer"] == len(observer) == 6
    assert Dataset.from_parquet(str(out / "sft" / "observer.parquet")).to_list() == observer
    assert rows_of(out / "sft" / "probe") == [row for row in expected_sft if row["role"] == "probe"]
    assert rows_of(out / "rl") == [row for t in trajs for row in rl_rows(t)]
    assert Dataset.from_parquet(str(out / "rl.parquet")).to_list() == rows_of(out / "rl")
    assert load_from_disk(str(out / "sft" / "executor")).num_rows == 0  # written, empty, loadable


def test_only_recorded_episodes_are_exported(runs, tmp_path):
    export(runs, tmp_path / "data")
    keys = {problem_key(r["problem_id"], r["target"]) for r in rows_of(tmp_path / "data" / "rl")}
    assert "revoke_auth_mongodb-detection-1@mongodb-rate" not in keys and len(keys) == 3


def test_rl_start_rows_are_one_per_problem_target_and_seed(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    write_run(run, [episode("revoke_auth_mongodb-detection-1", "mongodb-geo", 0, attempt=a) for a in range(3)])
    export([run], tmp_path / "data")
    rows = rows_of(tmp_path / "data" / "rl")
    assert [(r["decision_index"], r["prefix"]) for r in rows] == [(0, []), (1, ['{"next": "probe"}'])]


def test_splits_and_card_describe_the_export(runs, tmp_path):
    export(runs, tmp_path / "data", command="aoi data export run-a run-b --out data")
    splits = json.loads((tmp_path / "data" / "splits.json").read_text())
    assert set(splits) == {"version", "by_target", "by_family", "by_app"} and splits["version"] == 2
    for split in (splits[rule] for rule in ("by_target", "by_family", "by_app")):
        assert not set(split["train"]) & set(split["test"])
        assert "noop_detection_hotel_reservation-1@" in split["train"] + split["test"]
    card = (tmp_path / "data" / "card.md").read_text()
    assert "aoi data export run-a run-b --out data" in card and str(runs[0]) in card
    assert "| by_target |" in card and "seed 0" in card and "observer 6" in card
    assert "Rules version 2" in card and "no_fault_ratio 0.5" in card


def test_an_existing_folder_is_kept_unless_overwriting_an_export(runs, tmp_path):
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "todo.txt").write_text("mine")
    with pytest.raises(ValueError, match="pick a new or empty folder"):
        export(runs, tmp_path / "notes", overwrite=True)
    export(runs, tmp_path / "data")
    with pytest.raises(ValueError, match="--overwrite"):
        export(runs, tmp_path / "data")
    assert export(runs, tmp_path / "data", overwrite=True)["episodes"] == 3


def test_bad_sources_say_what_to_pass(tmp_path):
    with pytest.raises(ValueError, match="no trajectory store"):
        export([tmp_path / "missing"], tmp_path / "data")
    with pytest.raises(ValueError, match="no run given"):
        export([], tmp_path / "data")
    (tmp_path / "empty").mkdir()
    TrajectoryStore(tmp_path / "empty" / "trajectories.db")
    with pytest.raises(ValueError, match="no recorded episode"):
        export([tmp_path / "empty"], tmp_path / "data")


def test_the_card_warns_when_a_run_was_generated_under_other_split_rules(runs, tmp_path):
    from aoi.data.splits import SplitRules

    rules = {"seed": 0, "target_ratio": 0.3, "family_ratio": 0.25, "app": None, "no_fault_ratio": 0.5}
    (runs[0] / "generate.json").write_text(json.dumps({"split": "by_target", "rules": rules, "problems": "all"}))
    export(runs, tmp_path / "same")
    assert "Warning" not in (tmp_path / "same" / "card.md").read_text()
    older = {key: value for key, value in rules.items() if key != "no_fault_ratio"}  # version 1 of the rules
    (runs[0] / "generate.json").write_text(json.dumps({"split": "by_target", "rules": older, "problems": "all"}))
    export(runs, tmp_path / "older")
    assert "under other split rules" in (tmp_path / "older" / "card.md").read_text()
    (runs[0] / "generate.json").write_text(json.dumps({"split": "by_target", "rules": rules, "problems": "all"}))
    export(runs, tmp_path / "other", SplitRules(seed=1))
    card = (tmp_path / "other" / "card.md").read_text()
    assert f"Warning: `{runs[0]}` was generated on the train side of by_target under other split rules" in card


def test_rows_carry_the_env_version_and_the_card_warns_when_versions_mix(runs, tmp_path):
    export(runs, tmp_path / "one")
    assert {r["env_version"] for r in rows_of(tmp_path / "one" / "rl")} == {"1"}
    assert "environment versions" not in (tmp_path / "one" / "card.md").read_text()
    older = tmp_path / "run-old"
    older.mkdir()
    traj = episode("revoke_auth_mongodb-detection-1", "mongodb-rate", 5)
    traj.env_version = ""
    write_run(older, [traj])
    export([*runs, older], tmp_path / "mixed")
    assert "environment versions (not recorded), 1" in (tmp_path / "mixed" / "card.md").read_text()
