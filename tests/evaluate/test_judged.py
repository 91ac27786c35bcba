"""Judging a run's successes: submits the limits forced (recorded, stored, exported, counted) and the constant-answer
baseline per task type beside every run, in summary.json, the summary table and `aoi report`."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest
import typer
from typer.testing import CliRunner

from aoi.config import load_config
from aoi.env.scoring import score
from aoi.evaluate.baseline import baseline, constant_answer
from aoi.evaluate.cli import report_command
from aoi.evaluate.report import write_report
from aoi.evaluate.results import ResultsLog
from aoi.evaluate.runner import run_eval
from aoi.problems import make as make_problem
from aoi.store.export import to_jsonl
from aoi.store.sqlite import TrajectoryStore
from aoi.tasks import succeeded

from .conftest import PROBLEMS, small_run


def observer_script(folder: Path, name: str, reply: str) -> str:
    """Write a replay script of one Observer reply; return its model spec."""
    path = folder / f"{name}.json"
    path.write_text(json.dumps([{"role": "observer", "text": reply}]))
    return f"replay:{path}"


def limited_run(out: Path, reply: str) -> list[dict]:
    """Run PROBLEMS with one Observer iteration and the given reply; return the rows."""
    config = load_config(overrides={"model": observer_script(out.parent, out.name, reply),
                                    "agent.max_iterations": 1}, environ={})
    run_eval([(p, None) for p in PROBLEMS], 1, 1, config, out, executor="thread")
    return ResultsLog(out / "results.jsonl").read()[0]


PROBE_YES = json.dumps({"phase": "investigate", "next": "probe", "instruction": "list the pods", "context": "",
                        "answer": "Yes"})


@pytest.fixture(scope="module")
def forced_run(tmp_path_factory) -> Path:
    """A run whose Observer wants to probe on its only iteration, answer "Yes" so far: every submit is forced."""
    out = tmp_path_factory.mktemp("forced") / "run"
    limited_run(out, PROBE_YES)
    return out


def test_a_submit_the_iteration_limit_forced_is_recorded_stored_and_exported(forced_run, tmp_path):
    rows = ResultsLog(forced_run / "results.jsonl").read()[0]
    assert {r["forced_submit"] for r in rows} == {True}
    assert [r["success"] for r in rows] == [not p.startswith("noop") for p in PROBLEMS]  # the last "Yes" submitted
    stored = TrajectoryStore(forced_run / "trajectories.db").query()
    assert len(stored) == 3 and all(t.forced_submit for t in stored)
    assert to_jsonl(stored, tmp_path / "t.jsonl") == 3
    assert all(orjson.loads(line)["forced_submit"] for line in (tmp_path / "t.jsonl").read_bytes().splitlines())


def test_a_chosen_submit_is_not_forced_and_a_failed_last_decision_is(tmp_path):
    chosen = small_run(tmp_path / "chosen", "Yes", k=1, workers=1, executor="thread")
    assert chosen.by_task_type["detection"]["forced_submits"] == 0
    assert {r["forced_submit"] for r in ResultsLog(tmp_path / "chosen" / "results.jsonl").read()[0]} == {False}
    rows = limited_run(tmp_path / "garbled", "no decision here")  # a format error on the last iteration
    assert all(r["forced_submit"] and not r["success"] for r in rows)


def test_the_summary_counts_forced_successes_and_holds_the_constant_baseline(forced_run):
    summary = json.loads((forced_run / "summary.json").read_text())
    detection = summary["by_task_type"]["detection"]
    assert (detection["forced_submits"], detection["forced_successes"]) == (3, 2)
    assert summary["overall"]["forced_successes"] == 2
    const = summary["baseline"]["detection"]
    assert (const["answer"], const["problems"], const["unknown"]) == ("Yes", 3, 0)
    assert const["success"] == const["strict_success"] == pytest.approx(2 / 3)  # the noop problem wants "No"
    assert summary["baseline"]["overall"]["success"] == pytest.approx(2 / 3)


def test_the_report_sets_every_run_beside_its_forced_successes_and_constant_answer(forced_run, tmp_path):
    chosen = tmp_path / "chosen"
    small_run(chosen, "No", k=1, workers=1, executor="thread")
    text = write_report(forced_run, [f"no={chosen}"], tmp_path / "r")[0].read_text()
    assert "## Forced submits and the constant-answer baseline" in text
    assert "| run | detection | 3 | 66.7 | 2 | 2 | 0.0 | Yes | 66.7 | 66.7 | +0.0 |" in text
    assert "| no | detection | 3 | 33.3 | 1 | 0 | 33.3 | Yes | 66.7 | 66.7 | -33.3 |" in text
    app = typer.Typer()
    app.command()(report_command)
    done = CliRunner().invoke(app, [str(forced_run), "--compare", f"no={chosen}", "--out", str(tmp_path / "c")],
                              env={"COLUMNS": "200"})
    assert done.exit_code == 0, done.output
    assert "Forced submits and the constant-answer baseline" in done.output
    table = [line for line in done.output.splitlines() if "│" in line and "detection" in line]
    assert len(table) >= 3, done.output  # the summary table's row, and one per run in the baseline table
    assert "forced ok" in done.output and "const%" in done.output


def rows_of(keys: list[tuple[str, str | None]], task_type: str) -> list[dict]:
    return [{"problem_id": p, "target": t, "task_type": task_type, "attempt": 0, "success": False} for p, t in keys]


def test_the_constant_answer_is_the_most_accepted_one_scored_by_aiopslab_rules():
    family = "revoke_auth_mongodb-localization-1"
    keys = [(family, "mongodb-geo"), (family, "mongodb-rate"), ("revoke_auth_mongodb-localization-2", None)]
    figures = baseline(rows_of(keys, "localization"))["localization"]
    problems = [make_problem(*key) for key in keys]
    answer = figures["answer"]
    assert answer == constant_answer("localization", problems) and len(answer) == 1
    expected = sum(succeeded(score(p, answer, [], 0.0)) for p in problems) / 3
    assert figures["success"] == pytest.approx(expected) and expected >= 2 / 3  # two of the keys aim at one target
    assert baseline(rows_of(list(reversed(keys)), "localization"))["localization"] == figures


def test_analysis_takes_the_most_frequent_pair_and_mitigation_has_none():
    keys = [("revoke_auth_mongodb-analysis-1", None), ("revoke_auth_mongodb-analysis-2", None),
            ("misconfig_app_hotel_res-analysis-1", None)]
    figures = baseline(rows_of(keys, "analysis"))["analysis"]
    assert figures["answer"] == {"system_level": "Application", "fault_type": "Authentication Issue"}
    assert figures["success"] == pytest.approx(2 / 3)
    mitigation = baseline(rows_of([("revoke_auth_mongodb-mitigation-1", None)], "mitigation"))
    assert mitigation["mitigation"]["answer"] is None and mitigation["mitigation"]["success"] is None
    assert "n/a" in mitigation["mitigation"]["note"] and mitigation["overall"]["success"] is None


def test_rows_of_problems_this_catalogue_cannot_build_are_counted_not_scored():
    figures = baseline(rows_of([("scenario:gone-detection", None), (PROBLEMS[0], None)], "detection"))["detection"]
    assert (figures["problems"], figures["unknown"], figures["success"]) == (1, 1, 1.0)
