"""`aoi report` on training runs: reward by step and by wall-clock side by side, the Echo table, clear refusals."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from aoi.evaluate.cli import report_command
from aoi.evaluate.training import is_training_run, load_training, write_training_report

from .conftest import small_run

START = 1_800_000_000.0


def trl_lines(rewards: list[float], step_seconds: float = 30.0) -> list[dict]:
    """Return what `aoi train grpo` (TRL) logs: a line per step with time and step_time, then TRL's totals."""
    lines = [{"step": i + 1, "time": START + (i + 1) * step_seconds, "step_time": step_seconds, "reward": r,
              "rewards/success/mean": r / 2, "rewards/format/mean": 1.0, "loss": 0.0} for i, r in enumerate(rewards)]
    return [*lines, {"step": len(rewards), "time": START + 999, "train_runtime": 999.0, "train_loss": 0.0}]


def echo_lines(mode: str, rewards: list[float], step_seconds: float, stale: list[int]) -> list[dict]:
    """Return what `aoi train grpo --engine echo` logs (NOTE-E-to-F's keys), one line per step."""
    return [{"step": i + 1, "time": START + 5 + (i + 1) * step_seconds, "wall": (i + 1) * step_seconds,
             "engine": "echo", "mode": mode, "reward": r, "rewards/success/mean": r / 2, "rewards/format/mean": 1.0,
             "policy_version": i + 1, "staleness": [s], "versions": [i - s], "staleness_mean": float(s),
             "staleness_max": s, "dropped_stale": 0, "dropped_stale_total": i, "queue_depth": 1 + i % 2,
             "trainer_idle": 0.25, "sampler_idle": 0.5, "weight_sync_s": 0.2 if i else 0.0, "rollouts_per_s": 0.4,
             "tokens_per_s": 55.5, "samplers": 2} for i, (r, s) in enumerate(zip(rewards, stale, strict=True))]


def write_run(folder: Path, lines: list[dict], manifest: dict | None = None, tail: str = "") -> Path:
    """Write a run folder: metrics.jsonl (plus raw text at its end) and manifest.json."""
    folder.mkdir(parents=True)
    (folder / "metrics.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines) + tail)
    if manifest is not None:
        (folder / "manifest.json").write_text(json.dumps({"kind": "grpo", "base": "tiny", **manifest}))
    return folder


@pytest.fixture
def runs(tmp_path) -> list[Path]:
    """A TRL run (4 steps of 30 s) and two Echo runs: colocated (30 s/step) and async with S=2 (10 s/step)."""
    return [write_run(tmp_path / "trl", trl_lines([0.5, 0.7, 0.9, 1.1]), {}),
            write_run(tmp_path / "colocated", echo_lines("colocated", [0.4, 0.8, 1.0, 1.2], 30.0, [0, 0, 0, 0]),
                      {"engine": "echo", "mode": "colocated", "samplers": 2, "staleness": 0}),
            write_run(tmp_path / "async", echo_lines("async", [0.4, 0.6, 1.0, 1.4], 10.0, [0, 1, 2, 1]),
                      {"engine": "echo", "mode": "async", "samplers": 2, "staleness": 2})]


def table_row(text: str, first_cell: str, section: str = "Runs") -> list[str]:
    """Return the cells of the row that starts with first_cell in a section's Markdown table."""
    part = text.split(f"## {section}\n")[1].split("\n## ")[0]
    line = next(line for line in part.splitlines() if line.startswith(f"| {first_cell} |"))
    return [cell.strip() for cell in line.strip("|").split("|")]


def test_runs_side_by_side_with_reward_by_step_and_wall_clock(runs, tmp_path):
    md_path, html_path = write_training_report(runs[0], [runs[1], f"fast={runs[2]}"], tmp_path / "rep")
    text = md_path.read_text()
    # run, engine, base, steps, wall s, s/step, reward first, last, best, success (last), format (last)
    assert table_row(text, "trl") == ["trl", "trl", "tiny", "4", "120", "30.0", "0.50", "1.10", "1.10", "0.55", "1.00"]
    assert table_row(text, "fast")[1:9] == ["echo async", "tiny", "4", "40", "10.0", "0.40", "1.40", "1.40"]
    assert "| step | trl reward | trl wall s | colocated reward | colocated wall s | fast reward | fast wall s" in text
    assert table_row(text, "3", "Reward by step") == ["3", "0.90", "90", "1.00", "90", "1.00", "30"]
    assert "```\nReward by step\n" in text and "```\nReward by wall-clock\n" in text  # text charts in Markdown
    assert "* trl   o colocated   + fast" in text
    page = html_path.read_text()
    assert page.count("<polyline") == 6 and not re.search(r"https?://|<(script|link|img)\b", page)


def test_echo_figures_per_echo_run_and_none_for_trl_alone(runs, tmp_path):
    text = write_training_report(runs[1], [runs[2], runs[0]], tmp_path / "rep")[0].read_text()
    # run, mode, samplers, S, policy version, staleness mean, max, dropped, queue depth mean, trainer idle %,
    # sampler idle %, weight sync s, rollouts/s, tokens/s
    assert table_row(text, "async", "Echo") == ["async", "async", "2", "2", "4", "1.00", "2", "3", "1.5", "25", "50",
                                                "0.20", "0.40", "55.5"]
    assert table_row(text, "colocated", "Echo")[5:7] == ["0.00", "0"]
    with pytest.raises(StopIteration):  # a TRL run has no Echo figures
        table_row(text, "trl", "Echo")
    alone = write_training_report(runs[0], [], tmp_path / "alone")[0].read_text()
    assert "## Echo" not in alone and "## Reward by wall-clock" in alone


def test_a_resumed_run_keeps_the_last_line_of_a_step_and_skips_a_torn_line(tmp_path):
    lines = [*trl_lines([0.1, 0.2])[:2], {**trl_lines([0.1, 0.2, 0.3])[1], "reward": 0.25},
             trl_lines([0.1, 0.2, 0.3])[2]]
    run = load_training(write_run(tmp_path / "resumed", lines, tail='{"step": 4, "rew'))
    assert [(s["step"], s["reward"]) for s in run.steps] == [(1, 0.1), (2, 0.25), (3, 0.3)] and run.manifest == {}


def test_eval_and_training_runs_are_told_apart_and_not_mixed(runs, tmp_path):
    small_run(tmp_path / "eval", k=1, workers=1, executor="thread", problems=("noop_detection_hotel_reservation-1",))
    assert is_training_run(runs[0]) and not is_training_run(tmp_path / "eval")
    with pytest.raises(ValueError, match="is an eval run .* not a training run"):
        write_training_report(runs[0], [tmp_path / "eval"])
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "metrics.jsonl").write_text('{"step": 1, "train_loss": 0}\n')
    with pytest.raises(ValueError, match="no step with a reward"):
        load_training(tmp_path / "empty")


def test_cli_prints_the_tables_and_charts_and_writes_both_files(runs, tmp_path):
    app = typer.Typer()
    app.command()(report_command)
    result = CliRunner().invoke(app, [str(runs[0]), "--compare", str(runs[2]), "--out", str(tmp_path / "r")],
                                env={"COLUMNS": "160"})
    assert result.exit_code == 0, result.output
    assert "Reward by wall-clock" in result.output and "Echo" in result.output and "echo async" in result.output
    assert (tmp_path / "r.md").is_file() and (tmp_path / "r.html").is_file()
    mixed = CliRunner().invoke(app, [str(runs[0]), "--compare", str(tmp_path / "missing")], env={"COLUMNS": "160"})
    assert mixed.exit_code == 2 and "not a training run" in mixed.output
