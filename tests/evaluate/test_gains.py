"""`aoi report --compare LABEL=DIR`: the gain per split part, mean ± std over seeds, paired or unpaired deltas."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from aoi.evaluate.cli import eval_command, report_command
from aoi.evaluate.gains import delta, format_valid, paired_differences, seed_rates, spread
from aoi.evaluate.report import load_runs, write_report
from aoi.evaluate.results import ResultsLog

from .conftest import PROBLEMS, submit_script

TEST = "by_target:test"


def row(problem_id: str, attempt: int, success: bool, *, seed0: int = 0, split: str | None = TEST,
        invalid: int | None = None) -> dict:
    """Return a results.jsonl row shaped as the runner writes it (split and replies as `aoi eval --split` records)."""
    found = {"problem_id": problem_id, "task_type": "detection", "family": "f", "app": "hotel-reservation",
             "target": None, "attempt": attempt, "seed": seed0 + attempt, "model": "m", "success": success,
             "strict_success": success, "results": {}, "ttx": 1.0, "steps": 1, "in_tokens": 0, "out_tokens": 0,
             "model_steps": 1, "model_in_tokens": 10, "model_out_tokens": 2, "seconds": 0.1,
             "failure": None if success else "wrong_answer", "issues": {}, "error": None,
             "trajectory_id": f"{problem_id}-{attempt}", "finished_at": 0.0, "env_version": "1"}
    found |= {"split": split} if split else {}
    return found | ({"replies": {"observer": {"replies": 2, "format_errors": invalid}}} if invalid is not None else {})


def write_run(folder: Path, wins: dict[str, list[int]], **options) -> Path:
    """Write a run directory whose problem p succeeded on attempt a when wins[p][a]; return it."""
    folder.mkdir(parents=True)
    log = ResultsLog(folder / "results.jsonl")
    for problem_id, attempts in wins.items():
        for attempt, won in enumerate(attempts):
            log.append(row(problem_id, attempt, bool(won), **options))
    return folder


@pytest.fixture
def runs(tmp_path) -> tuple[Path, Path, Path]:
    """base, sft (same seeds 0-2) and grpo (seeds 10-12) on problems p and q, k=3."""
    base = write_run(tmp_path / "base", {"p": [0, 0, 1], "q": [0, 0, 0]}, invalid=1)
    sft = write_run(tmp_path / "sft", {"p": [1, 0, 1], "q": [1, 0, 0]}, invalid=0)
    grpo = write_run(tmp_path / "grpo", {"p": [1, 1, 1], "q": [1, 0, 1]}, seed0=10)
    return base, sft, grpo


def report_app() -> typer.Typer:
    app = typer.Typer()
    app.command()(report_command)
    return app


def test_seed_rates_and_deltas_match_a_hand_computation(runs):
    base, sft, grpo = (load_runs([path])[0].rows for path in runs)
    # base: seed 0 solves 0/2, seed 1 0/2, seed 2 1/2 -> mean 1/6, population std sqrt(1/18)
    assert seed_rates(base) == [0.0, 0.0, 0.5]
    assert spread(seed_rates(base)) == pytest.approx((1 / 6, (1 / 18) ** 0.5))
    # sft - base per shared seed: (1-0 + 1-0)/2 = 1, (0-0 + 0-0)/2 = 0, (1-1 + 0-0)/2 = 0 -> mean 1/3, std sqrt(2)/3
    assert paired_differences(base, sft) == [1.0, 0.0, 0.0]
    d = delta(base, sft)
    assert (d.paired, d.seeds) == (True, 3) and (d.mean, d.std) == pytest.approx((1 / 3, 2 ** 0.5 / 3))
    # grpo shares no seed: rates 1, 0.5, 1 -> 5/6 ± sqrt(1/18); unpaired: 5/6 - 1/6 ± sqrt(1/18 + 1/18) = 1/3
    d = delta(base, grpo)
    assert (d.paired, d.seeds) == (False, 3) and (d.mean, d.std) == pytest.approx((2 / 3, 1 / 3))
    assert format_valid(base) == 0.5 and format_valid(sft) == 1.0 and format_valid(grpo) is None


def test_report_has_one_table_per_split_with_labels_spread_and_deltas(runs, tmp_path):
    base, sft, grpo = runs
    text = write_report(f"base-model={base}", [f"sft={sft}", str(grpo)], tmp_path / "r")[0].read_text()
    assert "# AOI eval report: base-model" in text and "## Split by_target:test" in text
    assert ("| run | seeds | problems | episodes | avg@1 % (mean ± std over seeds) | Δ avg@1 pp (paired or unpaired: "
            "see Δ basis) |") in text
    assert "| base-model | 3 | 2 | 6 | 16.7 ± 23.6 |  | 16.7 ± 23.6 |  | 50.0 |  |  |" in text
    assert ("| sft | 3 | 2 | 6 | 50.0 ± 40.8 | +33.3 ± 47.1 | 50.0 ± 40.8 | +33.3 ± 47.1 | 100.0 | +50.0 "
            "| paired, 3 seeds |") in text
    assert ("| grpo | 3 | 2 | 6 | 83.3 ± 23.6 | +66.7 ± 33.3 | 83.3 ± 23.6 | +66.7 ± 33.3 | - | - "
            "| unpaired, 3 seeds |") in text
    assert "| group | metric | base-model | sft | Δ sft | grpo | Δ grpo |" in text  # the old comparison, labelled


def test_header_names_the_delta_kind_when_every_run_has_the_same(runs, tmp_path):
    base, sft, grpo = runs
    paired = write_report(str(base), [str(sft)], tmp_path / "a")[0].read_text()
    unpaired = write_report(str(base), [str(grpo)], tmp_path / "b")[0].read_text()
    assert "| Δ avg@1 pp (paired per seed) |" in paired and "| Δ strict pp (paired per seed) |" in paired
    assert "unpaired," not in paired and "paired or unpaired" not in paired
    assert "| Δ strict pp (unpaired) |" in unpaired


def test_a_single_seed_shows_no_spread(tmp_path):
    base = write_run(tmp_path / "base", {"p": [0], "q": [1]})
    other = write_run(tmp_path / "other", {"p": [1], "q": [1]})
    text = write_report(str(base), [str(other)], tmp_path / "r")[0].read_text()
    assert "| base | 1 | 2 | 2 | 50.0 |  | 50.0 |  | - |  |  |" in text
    assert "| other | 1 | 2 | 2 | 100.0 | +50.0 | 100.0 | +50.0 | - | - | paired, 1 seed |" in text


def test_missing_split_parts_are_said_and_rows_without_a_split_get_their_own_table(tmp_path):
    base = write_run(tmp_path / "base", {"p": [1, 0]})
    with open(base / "results.jsonl", "a") as f:
        f.write(json.dumps(row("x", 0, True, split="by_family:test")) + "\n")
    sft = write_run(tmp_path / "sft", {"p": [1, 1]})
    with open(sft / "results.jsonl", "a") as f:
        f.write(json.dumps(row("y", 0, True, split=None)) + "\n")
    text = write_report(str(base), [f"tuned={sft}"], tmp_path / "r")[0].read_text()
    family = text.split("## Split by_family:test")[1].split("## ")[0]
    assert "No rows on this part: tuned." in family
    assert "| tuned | - | 0 | 0 | not run on this split | - | - | - | - | - | - |" in family
    alone = text.split("## Success over seeds (no split recorded)")[1].split("## ")[0]
    assert "No rows on this part: base. Deltas need the first run on this part." in alone
    assert "| tuned | 1 | 1 | 1 | 100.0 | - | 100.0 | - | - | - | - |" in alone
    test = text.split("## Split by_target:test")[1].split("## ")[0]
    assert "| tuned | 2 | 1 | 2 | 100.0 ± 0.0 | +50.0 ± 50.0 |" in test  # per seed: 1-1 = 0, 1-0 = 1


@pytest.mark.parametrize(("value", "message"), [
    ("=runs/x", "--compare =runs/x: '=runs/x' is not a run: give DIR or LABEL=DIR with both parts"),
    ("sft=", "is not a run: give DIR or LABEL=DIR with both parts"),
    ("sft={missing}", "has no results.jsonl; pass a directory written by `aoi eval --out DIR`"),
    ("base={sft}", "the label(s) base name more than one run"),
])
def test_a_bad_compare_value_is_a_clear_error(runs, tmp_path, value, message):
    base, sft, _ = runs
    value = value.format(missing=tmp_path / "nowhere", sft=sft)
    result = CliRunner().invoke(report_app(), [f"base={base}", "--compare", value, "--out", str(tmp_path / "r")],
                                env={"COLUMNS": "200"})
    output = " ".join(result.output.split())
    assert result.exit_code == 2 and "error:" in output and message in output, result.output
    assert "Traceback" not in result.output


def test_report_command_prints_the_split_tables_with_labels(runs, tmp_path):
    base, sft, grpo = runs
    result = CliRunner().invoke(report_app(), [str(base), "--compare", f"sft={sft}", "--compare", f"g={grpo}",
                                               "--out", str(tmp_path / "r")], env={"COLUMNS": "250"})
    assert result.exit_code == 0, result.output
    assert "Split by_target:test" in result.output
    lines = {}  # the split table's row of each run (the baseline table that follows has rows named alike)
    for line in result.output.splitlines():
        if line.count("│") > 5:
            lines.setdefault(line.split("│")[1].strip(), line)
    assert "+33.3 ± 47.1" in lines["sft"] and "paired, 3 seeds" in lines["sft"]
    assert "+66.7 ± 33.3" in lines["g"] and "unpaired, 3 seeds" in lines["g"]
    assert "Δ: pp against the first run, paired or unpaired: see Δ basis" in " ".join(result.output.split())
    narrow = CliRunner().invoke(report_app(), [str(base), "--compare", f"sft={sft}", "--out", str(tmp_path / "n")],
                                env={"COLUMNS": "80"})
    assert narrow.exit_code == 0 and max(len(line) for line in narrow.output.splitlines()) <= 80, narrow.output
    assert "Split by_target:test" in narrow.output and "paired," in narrow.output


def test_eval_split_records_the_split_and_the_observer_replies(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "splits.json").write_text(json.dumps({"by_family": {"test": [f"{PROBLEMS[1]}@"]}}))
    out, spec = tmp_path / "run", submit_script(tmp_path, "No")
    app = typer.Typer()
    app.command()(eval_command)
    result = CliRunner().invoke(app, ["--split", "by_family:test", "--data", str(data), "-k", "2", "--model", spec,
                                      "--executor", "thread", "--out", str(out)])
    assert result.exit_code == 0, result.output
    run = json.loads((out / "summary.json").read_text())["run"]
    assert (run["split"], run["data"]) == ("by_family:test", str(data))
    rows, _ = ResultsLog(out / "results.jsonl").read()
    assert [(r["split"], r["seed"], r["success"]) for r in rows] == [("by_family:test", 0, True),
                                                                      ("by_family:test", 1, True)]
    assert all(r["replies"]["observer"] == {"replies": 1, "format_errors": 0} for r in rows)
    text = write_report(out)[0].read_text()
    assert f"split by_family:test of {data}" in text and "## Split by_family:test" in text
    assert "| run | 2 | 1 | 2 | 100.0 ± 0.0 |  | 100.0 ± 0.0 |  | 100.0 |  |  |" in text
