"""Evaluation metrics: the doctests (worked examples of avg@k and best@k) plus edge cases."""

from __future__ import annotations

import doctest
import importlib

import pytest

from aoi.evaluate.failures import failure_reason, issue_totals, step_issues
from aoi.evaluate.metrics import avg_at_k, best_at_k, group_stats, outcomes, std_over_attempts, summarize
from aoi.trajectory import Step, Trajectory

MODULES = ("metrics", "failures", "results", "summary", "compare", "charts", "render", "runconfig", "select",
           "runner")


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name):
    module = importlib.import_module(f"aoi.evaluate.{name}")
    assert doctest.testmod(module).failed == 0


def row(problem, attempt, success, task="detection", strict=None, target=None, **extra):
    return {"problem_id": problem, "target": target, "attempt": attempt, "task_type": task, "family": problem[:1],
            "success": success, "strict_success": success if strict is None else strict, **extra}


def test_empty_inputs_give_zero():
    assert (avg_at_k([]), best_at_k([]), std_over_attempts([])) == (0.0, 0.0, 0.0)
    assert avg_at_k([[]]) == best_at_k([[]]) == 0.0
    stats = group_stats([])
    assert stats["problems"] == stats["episodes"] == stats["k"] == 0 and stats["failures"] == {}
    assert summarize([])["by_task_type"] == {}


def test_k1_avg_equals_best_and_std_is_zero():
    runs = [[True], [False], [True], [True]]
    assert avg_at_k(runs) == best_at_k(runs) == 0.75
    assert std_over_attempts(runs) == 0.0


def test_best_at_k_at_least_avg_at_k_and_std_of_attempt_rates():
    runs = [[True, False, False], [False, False, True], [False, False, False]]
    assert avg_at_k(runs) == pytest.approx(2 / 9)
    assert best_at_k(runs) == pytest.approx(2 / 3)
    # attempt rates 1/3, 0, 1/3 -> mean 2/9, population std sqrt(((1/9)^2 * 2 + (2/9)^2) / 3)
    assert std_over_attempts(runs) == pytest.approx(((2 * (1 / 9) ** 2 + (2 / 9) ** 2) / 3) ** 0.5)


def test_ragged_attempts_use_the_problems_that_have_them():
    assert std_over_attempts([[True, True], [False]]) == pytest.approx(0.25)  # rates 0.5 and 1.0


def test_targets_are_distinct_problems_and_attempt_order_is_kept():
    rows = [row("p", 1, True, target="a"), row("p", 0, False, target="a"), row("p", 0, True, target="b")]
    assert outcomes(rows) == [[False, True], [True]]
    assert best_at_k(outcomes(rows)) == 1.0 and avg_at_k(outcomes(rows)) == pytest.approx(2 / 3)


def test_mixed_task_types_group_in_aiopslab_order_with_strict():
    rows = [row("m", 0, True, "mitigation", strict=False), row("m", 1, False, "mitigation"),
            row("d", 0, True), row("d", 1, True), row("l", 0, False, "localization", failure="wrong_answer"),
            row("l", 1, None, "localization", failure="model_error")]
    figures = summarize(rows)
    assert list(figures["by_task_type"]) == ["detection", "localization", "mitigation"]
    mitigation = figures["by_task_type"]["mitigation"]
    assert (mitigation["avg_at_k"], mitigation["best_at_k"], mitigation["std"]) == (0.5, 1.0, 0.5)
    assert (mitigation["strict_avg_at_k"], mitigation["strict_best_at_k"]) == (0.0, 0.0)
    overall = figures["overall"]
    assert overall["problems"] == 3 and overall["episodes"] == 6 and overall["k"] == 2
    assert overall["avg_at_k"] == pytest.approx(3 / 6) and overall["best_at_k"] == pytest.approx(2 / 3)
    assert overall["failures"] == {"model_error": 1, "wrong_answer": 1}


def test_means_skip_missing_values():
    rows = [row("d", 0, True, ttx=10.0, steps=4, model_in_tokens=100), row("d", 1, True, ttx=None, steps=2)]
    stats = group_stats(rows)
    assert stats["ttx"] == 10.0 and stats["steps"] == 3.0 and stats["model_in_tokens"] == 100.0


def submit_step(observation="1"):
    return Step("observer", "", action='```\nsubmit("No")\n```', observation=observation)


@pytest.mark.parametrize("traj, reason", [
    (Trajectory("p", "detection", results={"Detection Accuracy": "Correct"}), None),
    (Trajectory("p", "detection", error="ModelError: bad key"), "model_error"),
    (Trajectory("p", "detection", steps=[submit_step("Error: the environment has no steps left")],
                results={"Detection Accuracy": "Invalid Format"}), "budget_exhausted"),
    (Trajectory("p", "detection", steps=[submit_step()], results={"Detection Accuracy": "Invalid Format"}),
     "format_error"),
    (Trajectory("p", "detection", steps=[submit_step()], results={"Detection Accuracy": "Incorrect"}),
     "wrong_answer"),
    (Trajectory("p", "mitigation", steps=[Step("executor", "", status="approval_denied"), submit_step()],
                results={"success": False}), "approval_denied"),
    (Trajectory("p", "mitigation", steps=[Step("executor", "", status="approval_denied")],
                results={"success": True}), None),
])
def test_failure_reasons(traj, reason):
    assert failure_reason(traj) == reason


def test_step_issues_and_totals():
    traj = Trajectory("p", "localization", steps=[Step("probe", "", status=s) for s in
                                                   ("format_error", "format_error", "error", "refused", "ok")])
    issues = step_issues(traj)
    assert issues == {"format_error": 2, "tool_error": 2, "approval_denied": 0, "compressor_fallback": 0}
    totals = issue_totals([{"issues": issues, "failure": "wrong_answer"}, {"issues": {}, "failure": None}])
    assert totals["tool_error"] == {"steps": 2, "episodes": 1, "failed_episodes": 1}
