"""Scoring: AIOpsLab's result keys, order and rules for each task type, plus strict_success."""

from __future__ import annotations

import doctest

import pytest

from aoi.env import scoring
from aoi.env.parser import parse
from aoi.env.scoring import count_tokens, score
from aoi.problems import make
from aoi.problems.oracles import OracleResult

TRACE = [{"role": "assistant", "content": "```\nexec_shell(\"kubectl get pods\")\n```"},
         {"role": "env", "content": "NAME READY STATUS\ngeo-1 0/1 CrashLoopBackOff\nPlease take the next action"},
         {"role": "assistant", "content": "```\nsubmit(\"Yes\")\n```"},
         {"role": "env", "content": "1"}]
COMMON = ["steps", "in_tokens", "out_tokens"]


def submitted(reply: str):
    """Return the solution AIOpsLab stores for a submit reply: args[0] if one arg, else the args list."""
    args = parse(reply).args
    return args[0] if len(args) == 1 else args


def test_token_counts_on_a_fixed_text():
    assert count_tokens("hello world") == 2
    assert count_tokens("kubectl get pods -n test-hotel-reservation") == 10
    assert count_tokens("<|endoftext|>") == 7  # special tokens count as plain text instead of raising
    results = score(make("revoke_auth_mongodb-detection-1"), "Yes", TRACE, 1.0)
    assert results["steps"] == 2
    assert results["in_tokens"] == count_tokens(TRACE[1]["content"] + TRACE[3]["content"])
    assert results["out_tokens"] == count_tokens(TRACE[0]["content"] + TRACE[2]["content"])


def test_detection_keys_and_rules():
    problem = make("revoke_auth_mongodb-detection-1")
    results = score(problem, " yes\n", TRACE, 12.5)
    assert list(results) == ["Detection Accuracy", "TTD", *COMMON, "strict_success"]
    assert results["Detection Accuracy"] == "Correct" and results["TTD"] == 12.5
    assert results["strict_success"] is False  # the strict reading wants exactly "Yes"
    assert score(problem, "Yes", TRACE, 1)["strict_success"] is True
    assert score(problem, "No", TRACE, 1)["Detection Accuracy"] == "Incorrect"
    assert score(make("noop_detection_social_network-1"), "NO", TRACE, 1)["Detection Accuracy"] == "Correct"


@pytest.mark.parametrize("solution", [None, [], ["Yes"], {"has_anomaly": "Yes"}, True])
def test_detection_invalid_format(solution):
    results = score(make("wrong_bin_usage-detection-1"), solution, TRACE, 1)
    assert results["Detection Accuracy"] == "Invalid Format" and results["strict_success"] is False


def test_kwargs_submit_is_invalid_format():
    solution = submitted('```\nsubmit(has_anomaly="Yes")\n```')
    assert solution == []
    assert score(make("wrong_bin_usage-detection-1"), solution, TRACE, 1)["Detection Accuracy"] == "Invalid Format"


def test_localization_keys_and_partial_credit():
    problem = make("k8s_target_port-misconfig-localization-1")
    exact = score(problem, ["user-service"], TRACE, 3.0)
    assert list(exact) == ["Localization Accuracy", "TTL", *COMMON, "success", "is_subset", "strict_success"]
    assert (exact["Localization Accuracy"], exact["success"], exact["is_subset"], exact["strict_success"]) == \
        (100.0, True, True, True)
    three = score(problem, ["text-service", "user-service", "nginx-thrift"], TRACE, 3.0)
    assert three["Localization Accuracy"] == (1 / 3) * 100.0 and not three["success"]  # AIOpsLab's arithmetic
    assert three["is_subset"] and not three["strict_success"]
    half = score(problem, ["user-service", "user-service"], TRACE, 3.0)
    assert (half["Localization Accuracy"], half["success"]) == (50.0, False)
    wrong = score(problem, ["text-service"], TRACE, 3.0)
    assert (wrong["Localization Accuracy"], wrong["success"], wrong["is_subset"]) == (0.0, False, False)


def test_localization_is_case_sensitive_and_bare_strings_count():
    problem = make("k8s_target_port-misconfig-localization-2")
    assert score(problem, ["Text-Service"], TRACE, 1)["Localization Accuracy"] == 0.0
    bare = score(problem, "text-service", TRACE, 1)
    assert (bare["Localization Accuracy"], bare["success"], bare["is_subset"]) == (100.0, True, False)
    assert score(problem, [], TRACE, 1)["Localization Accuracy"] == 0.0
    assert score(problem, 7, TRACE, 1)["Localization Accuracy"] == 0.0


def test_localization_mongodb_prefix_equivalence():
    problem = make("revoke_auth_mongodb-localization-2")
    for answer in (["mongodb-rate"], ["rate"], "rate"):
        assert score(problem, answer, TRACE, 1)["success"] is True
    assert score(problem, ["rate", "geo"], TRACE, 1)["Localization Accuracy"] == 50.0
    assert score(problem, ["rate"], TRACE, 1)["strict_success"] is False
    assert score(problem, ["mongodb-rate"], TRACE, 1)["strict_success"] is True
    # Only the MongoDB auth families accept the bare name.
    assert score(make("auth_miss_mongodb-localization-1"), ["url-shorten"], TRACE, 1)["success"] is False


def test_localization_without_submission():
    results = score(make("container_kill-localization"), None, TRACE, 4.0)
    assert list(results) == ["Localization Accuracy", "success", "is_subset", "TTL", *COMMON, "strict_success"]
    assert (results["Localization Accuracy"], results["success"], results["is_subset"]) == (0.0, False, False)


def test_flag_localization_answer():
    problem = make("astronomy_shop_payment_service_unreachable-localization-1")
    assert score(problem, ["checkout"], TRACE, 1)["success"] is True
    assert score(problem, ["payment"], TRACE, 1)["success"] is False


def test_analysis_keys_and_rules():
    problem = make("revoke_auth_mongodb-analysis-1")
    results = score(problem, {"system_level": " application ", "fault_type": "AUTHENTICATION ISSUE"}, TRACE, 2.0)
    assert list(results) == ["system_level_correct", "fault_type_correct", "success", "TTA", *COMMON,
                             "strict_success"]
    assert results["success"] is True and results["strict_success"] is False
    exact = {"system_level": "Application", "fault_type": "Authentication Issue"}
    assert score(problem, exact, TRACE, 2.0)["strict_success"] is True
    half = score(problem, {"system_level": "Application", "fault_type": "Misconfiguration"}, TRACE, 2.0)
    assert (half["system_level_correct"], half["fault_type_correct"], half["success"]) == (True, False, False)


@pytest.mark.parametrize("solution", [None, [], "Application", {"system_level": 3}])
def test_analysis_invalid(solution):
    results = score(make("wrong_bin_usage-analysis-1"), solution, TRACE, 1)
    assert not (results["system_level_correct"] or results["fault_type_correct"] or results["success"])


def test_mitigation_keys_and_verdicts():
    problem = make("scale_pod_zero_social_net-mitigation-1")
    fixed = score(problem, [], TRACE, 30.0, OracleResult(True, (), parity=True))
    assert list(fixed) == ["TTM", *COMMON, "success", "strict_success"]
    assert fixed["success"] and fixed["strict_success"]
    hole = score(problem, [], TRACE, 30.0, OracleResult(False, ("pod x is not Ready",), parity=True))
    assert hole["success"] is True and hole["strict_success"] is False
    unjudged = score(problem, None, TRACE, 30.0, None)  # scored even without submit(), as in AIOpsLab
    assert unjudged["success"] is False and unjudged["strict_success"] is False
    with pytest.raises(ValueError, match="judge"):
        score(problem, [], TRACE, 1, OracleResult(True))


def test_session_items_as_objects():
    class Item:
        def __init__(self, role, content):
            self.role, self.content = role, content

    items = [Item(d["role"], d["content"]) for d in TRACE]
    assert score(make("wrong_bin_usage-detection-1"), "Yes", items, 1) == score(
        make("wrong_bin_usage-detection-1"), "Yes", TRACE, 1)


def test_doctests():
    assert doctest.testmod(scoring).failed == 0
