"""`aoi trajectories list|show|export`: read episodes back by the ids `aoi run` prints, with clear errors."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from aoi.store.cli import trajectories_app
from aoi.store.export import read_jsonl
from aoi.store.sqlite import TrajectoryStore
from aoi.trajectory import Policy, Step, Trajectory


def episode(problem: str, started: float, observation: str = "NAME READY\ngeo 0/1", **extra) -> Trajectory:
    """Return a finished two-step episode (a probe's command, the Observer's submission)."""
    models = {role: {"spec": "expert"} for role in ("observer", "probe", "executor", "compressor")}
    models["observer"] = {"spec": "openai:gpt-4o-mini"}
    steps = [Step("probe", "{}", action='exec_shell("kubectl get pods")', observation=observation, input_tokens=120,
                  output_tokens=9, t=1.5),
             Step("observer", "{}", action='submit("Yes")', observation="1", status="ok", t=3.0)]
    return Trajectory(problem, "detection", family="revoke_auth", target="mongodb-geo", seed=4, attempt=1,
                      policy=Policy("openai:gpt-4o-mini"), steps=steps, results={"Detection Accuracy": "Correct"},
                      strict_success=False, started_at=started, ended_at=started + 5, config={"models": models},
                      **extra)


@pytest.fixture
def store(tmp_path):
    """A store holding three episodes, started one after the other."""
    saved = TrajectoryStore(tmp_path / "run" / "trajectories.db")
    for n, problem in enumerate(("revoke_auth_mongodb-detection-1", "noop_detection_hotel_reservation-1",
                                 "misconfig_app_hotel_res-detection-1")):
        saved.save(episode(problem, 1_700_000_000.0 + 60 * n, id=f"{n}a{n}" * 8))
    return saved


def invoke(*args: str, width: int = 80):
    """Run `aoi trajectories ARGS` as a user would, at a terminal width."""
    return CliRunner().invoke(trajectories_app, list(args), env={"COLUMNS": str(width)})


def test_show_prints_header_and_every_step(store):
    done = invoke("show", "1a1" * 8, "--store", str(store.path))
    text = " ".join(done.output.split())
    assert done.exit_code == 0, done.output
    assert "noop_detection_hotel_reservation-1 (detection, family revoke_auth, target mongodb-geo)" in text
    assert "observer openai:gpt-4o-mini; probe, executor, compressor expert" in text
    assert "parity yes, strict no" in text and "seed 4, attempt 1" in text
    assert "#1 probe" in text and 'exec_shell("kubectl get pods")' in text and "geo 0/1" in text
    assert "tokens 120 in / 9 out" in text and "#2 observer" in text and 'submit("Yes")' in text
    assert max(len(line) for line in done.output.splitlines()) <= 80


def test_show_cuts_long_observations_and_json_has_them_whole(store):
    long = episode("p", 1_800_000_000.0, observation="x" * 5000, id="f" * 32)
    store.save(long)
    shown = invoke("show", "f" * 32, "--store", str(store.path)).output
    assert "(5000 chars)" in shown and "x" * 500 not in shown
    raw = invoke("show", "f" * 32, "--store", str(store.path), "--json")
    assert raw.exit_code == 0 and Trajectory.from_dict(json.loads(raw.output)) == long


def test_a_unique_prefix_finds_the_trajectory_and_an_ambiguous_one_is_refused(store):
    store.save(episode("p", 1.0, id="1a1" + "0" * 29))
    assert "misconfig_app_hotel_res-detection-1" in invoke("show", "2a2", "--store", str(store.path)).output
    ambiguous = invoke("show", "1a1", "--store", str(store.path))
    assert ambiguous.exit_code == 2 and "more than one trajectory id" in ambiguous.output


def test_an_unknown_id_or_a_missing_store_is_a_clear_error(store, tmp_path):
    unknown = invoke("show", "nope", "--store", str(store.path))
    assert unknown.exit_code == 2 and "no trajectory 'nope'" in unknown.output
    assert "aoi trajectories list" in unknown.output
    missing = invoke("show", "x", "--store", str(tmp_path / "none.db"))
    assert missing.exit_code == 2 and "no trajectory store at" in missing.output
    assert not (tmp_path / "none.db").exists()  # reading never creates a store


def test_list_shows_the_newest_first_and_a_run_directory_is_a_store(store):
    done = invoke("list", "--store", str(store.path.parent), "--limit", "2")
    lines = [line for line in done.output.splitlines() if line.strip()[:3] in ("2a2", "1a1", "0a0")]
    assert done.exit_code == 0 and [line.split()[0] for line in lines] == ["2a22a22a22a2", "1a11a11a11a1"]
    assert max(len(line) for line in done.output.splitlines()) <= 80
    rows = [json.loads(line) for line in invoke("list", "--store", str(store.path), "--json").output.splitlines()]
    assert [r["id"] for r in rows] == ["2a2" * 8, "1a1" * 8, "0a0" * 8] and rows[0]["success"] is True


def test_export_writes_the_given_trajectories_as_jsonl(store, tmp_path):
    out = tmp_path / "two.jsonl"
    done = invoke("export", "2a2", "0a0" * 8, "--out", str(out), "--store", str(store.path))
    assert done.exit_code == 0 and "wrote 2 trajectories" in done.output
    assert [t.id for t in read_jsonl(out)] == ["2a2" * 8, "0a0" * 8]
    assert read_jsonl(out)[1] == store.get("0a0" * 8)
    refused = invoke("export", "nope", "--out", str(tmp_path / "x.jsonl"), "--store", str(store.path))
    assert refused.exit_code == 2 and not (tmp_path / "x.jsonl").exists()


def test_list_keeps_problem_ids_whole_and_names_the_columns_it_leaves_out(store):
    narrow = invoke("list", "--store", str(store.path), width=80)
    lines = narrow.stdout.splitlines()
    assert narrow.exit_code == 0 and lines[0].split() == ["id", "problem", "ok/strict", "model", "calls"]
    assert [line.split()[1] for line in lines[1:4]] == ["misconfig_app_hotel_res-detection-1",
                                                         "noop_detection_hotel_reservation-1",
                                                         "revoke_auth_mongodb-detection-1"]
    note = " ".join(" ".join(lines[4:]).split())
    assert note == ("3 trajectories (started: UTC); `aoi trajectories show ID` prints one; started, model not shown "
                    "at 80 columns: --json or a terminal of 106+ columns shows them")  # 12+11+35+18+9+11 and gaps
    wide = invoke("list", "--store", str(store.path), width=160).stdout.splitlines()
    assert wide[0].split() == ["id", "started", "problem", "model", "ok/strict", "model", "calls"]
    assert wide[1].split()[4:] == ["openai:gpt-4o-mini", "yes/no", "2"] and "not shown" not in wide[-1]
