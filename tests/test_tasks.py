"""The task types' declarations: AIOpsLab's submit refusals, the verdict and partial-credit rules, the strict rule."""

from __future__ import annotations

import importlib

import pytest

from aoi.tasks import TASK_TYPES, TASKS, TaskType, partial_credit, succeeded, task


def test_every_task_type_is_declared_once_in_aiopslab_order():
    assert list(TASKS) == list(TaskType) == ["detection", "localization", "analysis", "mitigation"]
    assert [t.time_key for t in TASKS.values()] == ["TTD", "TTL", "TTA", "TTM"]


def test_a_plain_string_finds_its_task_and_an_unknown_one_says_what_to_choose():
    assert task("mitigation") is TASKS[TaskType.MITIGATION] and "analysis" in TASK_TYPES
    with pytest.raises(ValueError, match="choose from detection, localization, analysis, mitigation"):
        task("diagnosis")


@pytest.mark.parametrize("task_type, args, refusal", [
    ("detection", [], "DetectionActions.submit() missing 1 required positional argument: 'has_anomaly'"),
    ("localization", ["a", "b"], "LocalizationActions.submit() takes 1 positional argument but 2 were given"),
    ("mitigation", ["done"], "MitigationActions.submit() takes 0 positional arguments but 1 was given")])
def test_a_submit_aiopslab_refuses_is_worded_as_aiopslab_words_it(task_type, args, refusal):
    with pytest.raises(TypeError) as error:
        TASKS[task_type].submit(*args)
    assert str(error.value) == refusal


@pytest.mark.parametrize("results, expected", [
    ({"Detection Accuracy": "Correct"}, True), ({"Detection Accuracy": "Incorrect"}, False),
    ({"Detection Accuracy": "Invalid Format"}, False), ({"Localization Accuracy": 100.0, "success": True}, True),
    ({"success": False, "is_subset": True}, False), ({}, False), (None, False)])
def test_the_verdict_is_read_from_the_results(results, expected):
    assert succeeded(results) is expected


def test_partial_credit_stays_in_zero_one():
    assert partial_credit("localization", {"Localization Accuracy": 250.0}) == 1.0
    assert partial_credit("localization", {"Localization Accuracy": None}) == 0.0
    assert partial_credit("analysis", {"system_level_correct": True, "fault_type_correct": True}) == 1.0
    assert partial_credit("analysis", {"success": True}) == 1.0 and partial_credit("mitigation", {}) == 0.0


def test_the_strict_rule_reference_names_a_function():
    for declared in TASKS.values():
        module, name = declared.strict.rsplit(".", 1)
        assert callable(getattr(importlib.import_module(module), name)), declared.strict
