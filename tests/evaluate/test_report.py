"""`aoi report`: Markdown sections, a self-contained HTML page, and run comparisons with the right deltas."""

from __future__ import annotations

import re

import pytest
import typer
from typer.testing import CliRunner

from aoi.evaluate.cli import report_command
from aoi.evaluate.report import load_run, report_paths, write_report

from .conftest import small_run

SECTIONS = ("Success by task type", "Success by family", "Attempts distribution", "Time, steps and tokens",
            "Failure reasons")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Two small runs on the same problems: one always answers Yes (2 of 3 right), one always No (1 of 3)."""
    root = tmp_path_factory.mktemp("runs")
    small_run(root / "yes", "Yes", k=2, workers=2, executor="thread")
    small_run(root / "no", "No", k=2, workers=2, executor="thread")
    return root / "yes", root / "no"


def test_markdown_has_every_section_and_the_figures(runs):
    md_path, _ = write_report(runs[0])
    text = md_path.read_text()
    assert md_path == runs[0] / "report.md"
    for section in SECTIONS:
        assert f"## {section}" in text
    assert "| detection | 3 | 6 | 66.7 | 66.7 | 0.0 | 66.7 | 66.7 |" in text
    assert "| detection | 1 | 0 | 2 |" in text  # 1 problem never solved, 2 solved in both attempts
    assert "| wrong_answer | 2 | 100.0 |" in text
    assert "model replay:" in text and "k=2" in text and "6 episodes" in text


def test_html_is_self_contained_with_charts(runs):
    _, html_path = write_report(runs[0])
    page = html_path.read_text()
    assert page.startswith("<!DOCTYPE html>") and page.count("<svg") >= 5 and "<style>" in page
    assert not re.search(r"https?://", page)
    assert not re.search(r"<(script|link|img)\b", page)


def test_compare_two_runs_gives_deltas(runs, tmp_path):
    md_path, html_path = write_report(runs[0], [runs[1]], tmp_path / "cmp.html")
    assert (md_path, html_path) == (tmp_path / "cmp.md", tmp_path / "cmp.html")
    text = md_path.read_text()
    assert "## Comparison" in text and "| group | metric | yes | no | Δ no |" in text
    assert "| overall | avg@k % | 66.7 | 33.3 | -33.3 |" in text
    assert "| detection | best@k % | 66.7 | 33.3 | -33.3 |" in text
    assert "| overall | steps | 1.0 | 1.0 | +0.0 |" in text
    yes, no = load_run(runs[0]).summary.overall, load_run(runs[1]).summary.overall
    tokens = (no["model_in_tokens"] + no["model_out_tokens"]) - (yes["model_in_tokens"] + yes["model_out_tokens"])
    assert "| overall | model tokens | " in text and f"| {tokens:+.1f} |" in text
    assert '<span class="neg">-33.3</span>' in html_path.read_text()


def test_report_paths():
    assert report_paths("r", None) == (report_paths("r", "r/report.md"))
    assert [p.name for p in report_paths("r", "out/x")] == ["x.md", "x.html"]


def test_report_command_names_a_missing_run(tmp_path):
    app = typer.Typer()
    app.command()(report_command)
    result = CliRunner().invoke(app, [str(tmp_path)])
    assert result.exit_code == 2 and "aoi eval --out" in result.output


def test_an_interrupted_session_is_reported(runs, tmp_path):
    import json
    import shutil

    run = tmp_path / "cut"
    shutil.copytree(runs[0], run)
    summary = json.loads((run / "summary.json").read_text())
    summary["sessions"][-1]["interrupted"] = True  # as a killed session leaves it
    (run / "summary.json").write_text(json.dumps(summary))
    assert "1 session(s) interrupted" in write_report(run)[0].read_text()
    assert "interrupted" not in write_report(runs[0])[0].read_text()


def test_per_problem_table_names_each_attempt(runs):
    text = write_report(runs[0])[0].read_text()
    rows = load_run(runs[0]).rows
    ids = ", ".join(r["trajectory_id"] for r in sorted(rows, key=lambda r: r["attempt"])
                    if r["problem_id"] == "noop_detection_hotel_reservation-1")
    assert "| problem | app | task type | success | strict | failure reason | steps | trajectory id(s) |" in text
    assert (f"| noop_detection_hotel_reservation-1 | hotel-reservation | detection | 0/2 | 0/2 | wrong_answer x2 "
            f"| 1 / 1 | {ids} |") in text
    assert "| revoke_auth_mongodb-detection-1 | hotel-reservation | detection | 2/2 | 2/2 | - | 1 / 1 |" in text


def test_per_app_table_has_each_app_and_overall(runs):
    text = write_report(runs[0])[0].read_text()
    assert "## Success by app" in text
    assert "| hotel-reservation | 3 | 6 | 66.7 | 66.7 | 0.0 | 66.7 | 66.7 |" in text


def test_app_comes_from_the_registry_for_rows_without_one(runs, tmp_path):
    import shutil

    run = tmp_path / "old"
    shutil.copytree(runs[0], run)
    log = run / "results.jsonl"
    log.write_text("".join(line.replace('"app": "hotel-reservation", ', "") + "\n"
                           for line in log.read_text().splitlines()))
    assert '"app"' not in log.read_text()
    assert "| hotel-reservation | 3 | 6 |" in write_report(run)[0].read_text()


def test_compare_restricts_to_common_problems_and_says_so(runs, tmp_path):
    import shutil

    cut = tmp_path / "cut"
    shutil.copytree(runs[1], cut)  # the "No" run without revoke_auth: it answered that one wrong
    log = cut / "results.jsonl"
    log.write_text("".join(line + "\n" for line in log.read_text().splitlines() if "revoke_auth" not in line))
    text = write_report(runs[0], [cut], tmp_path / "cmp")[0].read_text()
    assert ("Comparing 2 common problems; 1 only in yes (revoke_auth_mongodb-detection-1), 0 only in cut."
            in text)
    # On the 2 common problems "yes" solves misconfig_app (1 of 2) and "no" solves noop (1 of 2): equal.
    assert "| overall | avg@k % | 50.0 | 50.0 | +0.0 |" in text
    app = typer.Typer()
    app.command()(report_command)
    result = CliRunner().invoke(app, [str(runs[0]), "--compare", str(cut), "--out", str(tmp_path / "r")])
    assert result.exit_code == 0 and "Comparing 2 common problems; 1 only in yes" in " ".join(result.output.split())


def test_report_command_prints_the_summary_within_80_columns(runs, tmp_path):
    app = typer.Typer()
    app.command()(report_command)
    result = CliRunner().invoke(app, [str(runs[0]), "--out", str(tmp_path / "r")], env={"COLUMNS": "80"})
    assert result.exit_code == 0 and max(len(line) for line in result.output.splitlines()) <= 80, result.output
    assert re.search(r"^detection\s+3/6\s+66\.7\s+66\.7\s+0\.0\s+66\.7/66\.7\s", result.output, re.M), result.output
