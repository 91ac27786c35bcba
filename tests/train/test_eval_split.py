"""`aoi eval --split PART --data DIR` runs exactly the problem keys of one part of a dataset's split."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from aoi.cli import app

from .conftest import DETECTION


def test_eval_runs_the_held_out_part_of_the_split(dataset, tmp_path):
    out = tmp_path / "run"
    result = CliRunner().invoke(app, ["eval", "--split", "by_target:test", "--data", str(dataset), "--model",
                                      "expert", "--executor", "thread", "--out", str(out)])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines() if line.strip()]
    assert {row["problem_id"] for row in rows} == {DETECTION}


def test_eval_split_without_data_says_what_it_needs(tmp_path):
    result = CliRunner().invoke(app, ["eval", "--split", "test", "--out", str(tmp_path / "run")])
    assert result.exit_code == 2 and "--split needs --data DIR" in result.output
