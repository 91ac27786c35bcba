"""`aoi eval --keys/--keys-file/--split`: chosen problem@target keys run exactly, bad keys are one clear line, and
nothing is said about problems the keys never chose."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from aoi.evaluate.cli import eval_command
from aoi.evaluate.results import ResultsLog
from aoi.evaluate.select import select_keys

from .conftest import submit_script

KEYS = ["revoke_auth_mongodb-detection-1@mongodb-rate", "noop_detection_hotel_reservation-1@",
        "revoke_auth_mongodb-localization-1@mongodb-rate"]


def invoke(*args: str):
    app = typer.Typer()
    app.command()(eval_command)
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})


def ran(out: Path) -> list[tuple]:
    return sorted((r["problem_id"], r["target"]) for r in ResultsLog(out / "results.jsonl").read()[0])


def test_keys_run_exactly_the_keys_given_filtered_by_task_type(tmp_path):
    out = tmp_path / "run"
    done = invoke("--keys", ",".join(KEYS), "--task-type", "detection", "--model", submit_script(tmp_path, "Yes"),
                  "--executor", "thread", "--out", str(out))
    assert done.exit_code == 0, done.output
    assert "2 problem(s)" in done.output and "note:" not in done.output
    assert ran(out) == [("noop_detection_hotel_reservation-1", None),
                        ("revoke_auth_mongodb-detection-1", "mongodb-rate")]  # not the id's own mongodb-geo


def test_a_keys_file_runs_its_keys_once_each(tmp_path):
    path = tmp_path / "keys.txt"
    path.write_text(f"# held-out detection\n{KEYS[0]}\n\n{KEYS[1]}\nnoop_detection_hotel_reservation-1\n")
    out = tmp_path / "run"
    done = invoke("--keys-file", str(path), "--model", submit_script(tmp_path, "Yes"), "--executor", "thread",
                  "--out", str(out))
    assert done.exit_code == 0, done.output
    assert len(ran(out)) == 2  # `ID@` and `ID` name the same problem


@pytest.mark.parametrize("key, says", [
    ("nope-detection-1@geo", "unknown problem id 'nope-detection-1'"),
    ("revoke_auth_mongodb-detection-1@frontend", "not a valid target"),
    ("@mongodb-geo", "it names no problem id"),
    ("flower_node_stop-detection@", "Docker Compose"),
])
def test_a_bad_key_is_one_line_naming_it_and_how_to_find_valid_ones(tmp_path, key, says):
    done = invoke("--keys", f"{KEYS[1]},{key}", "--out", str(tmp_path / "run"))
    said = " ".join(done.output.split())
    assert done.exit_code == 2 and f"bad key '{key}'" in said and says in said, done.output
    assert "`aoi problems show ID`" in said and "`aoi problems list`" in said
    assert not (tmp_path / "run").exists()


def test_keys_do_not_mix_with_problems_or_each_other(tmp_path):
    both = invoke("--keys", KEYS[0], "--problems", "all", "--out", str(tmp_path / "a"))
    assert both.exit_code == 2 and "drop --problems and --targets" in both.output
    two = invoke("--keys", KEYS[0], "--split", "test", "--out", str(tmp_path / "b"))
    assert two.exit_code == 2 and "--keys and --split each choose the problems" in " ".join(two.output.split())
    empty = tmp_path / "empty.txt"
    empty.write_text("# nothing\n")
    none = invoke("--keys-file", str(empty), "--out", str(tmp_path / "c"))
    assert none.exit_code == 2 and "holds no keys" in none.output
    missing = invoke("--keys-file", str(tmp_path / "absent.txt"), "--out", str(tmp_path / "d"))
    assert missing.exit_code == 2 and "cannot read --keys-file" in missing.output


def test_a_split_says_nothing_of_problems_it_does_not_hold_and_takes_the_filters(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "splits.json").write_text(json.dumps({"version": 2, "by_target": {"test": KEYS}}))
    out = tmp_path / "run"
    done = invoke("--split", "test", "--data", str(data), "--task-type", "detection", "--model",
                  submit_script(tmp_path, "Yes"), "--executor", "thread", "--out", str(out))
    assert done.exit_code == 0, done.output
    assert "flower" not in done.output and "skipped" not in done.output  # the split holds no Flower id
    assert len(ran(out)) == 2
    assert {r["split"] for r in ResultsLog(out / "results.jsonl").read()[0]} == {"by_target:test"}


def test_select_keys_keeps_the_order_given():
    assert select_keys(list(reversed(KEYS))) == [
        ("revoke_auth_mongodb-localization-1", "mongodb-rate"), ("noop_detection_hotel_reservation-1", None),
        ("revoke_auth_mongodb-detection-1", "mongodb-rate")]
