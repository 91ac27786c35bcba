"""The execution-verified reward: each dimension on hand-made scenarios run in the twin, and the group total."""

from __future__ import annotations

import pytest
from tests.handmade_scenarios import NS, bad_image, renamed, scale_zero, variant

from aoi.evolve.diversity import Novelty
from aoi.evolve.execute import Record, execute
from aoi.evolve.rewards import DEFAULT_WEIGHTS, load_weights, score_group, score_records
from aoi.models.embedder import Embedder, default_embedder
from aoi.models.replay import ReplayModel
from aoi.problems.scenarios import Scenario
from aoi.problems.seeds import seed_scenarios

CASES = {
    "good": scale_zero(),
    "no-fix": variant(scale_zero(), id="no-fix", solution_commands=[f"kubectl get pods -n {NS}"]),
    "typo": variant(scale_zero(), id="typo", diagnostic_commands=[f"kubectl gett deployments -n {NS}"]),
    "broken-fault": variant(scale_zero(), id="broken-fault",
                            fault=[{"kubectl": f"kubectl scale deployment geo-typo --replicas=0 -n {NS}"}]),
    "other-ns": variant(scale_zero(), id="other-ns", solution_commands=["kubectl delete pod x -n kube-system"]),
    "missing-field": {k: v for k, v in scale_zero().items() if k != "solution_commands"},
    "not-json": "{this is not json",
}


@pytest.fixture(scope="module")
def records():
    return {name: execute(case) for name, case in CASES.items()}


@pytest.fixture(scope="module")
def scored(records):
    seed = Scenario.from_dict(scale_zero())
    results = score_records(list(records.values()), novelty=Novelty([seed], Embedder.hashed()))
    return dict(zip(records, results, strict=True))


def test_a_solution_that_does_not_fix_scores_lower_on_effectiveness(scored):
    good, no_fix = scored["good"].values(), scored["no-fix"].values()
    assert good["solution_effectiveness"] == 1.0 > no_fix["solution_effectiveness"]
    assert "still match" in scored["no-fix"].scores["solution_effectiveness"].evidence
    assert scored["good"].valid and not scored["no-fix"].valid


def test_a_malformed_command_lowers_correctness_and_completeness(scored):
    assert scored["good"].values()["commands_correctness"] == 1.0 > scored["typo"].values()["commands_correctness"]
    assert "gett" in scored["typo"].scores["commands_correctness"].evidence
    assert scored["good"].values()["commands_completeness"] == 1.0 > scored["typo"].values()["commands_completeness"]


def test_a_fault_that_does_not_apply_lowers_validity(scored):
    assert scored["good"].values()["problem_validity"] == 1.0 > scored["broken-fault"].values()["problem_validity"]
    assert "geo-typo" in scored["broken-fault"].scores["problem_validity"].evidence
    assert scored["broken-fault"].values()["solution_effectiveness"] == 0.0  # nothing broke, nothing to fix


def test_a_scenario_reaching_another_namespace_scores_zero_and_says_why(scored):
    other = scored["other-ns"]
    assert other.total == 0.0 and not other.valid and "kube-system" in other.zero_reason
    assert scored["good"].total > 0.5


def test_format_errors_lower_format(scored):
    assert scored["good"].values()["format"] == 1.0
    assert 0.0 < scored["missing-field"].values()["format"] < 1.0
    assert scored["not-json"].values()["format"] == 0.0
    assert "solution_commands" in scored["missing-field"].scores["format"].evidence


@pytest.mark.parametrize("embedder", [Embedder.hashed, default_embedder], ids=["hashed", "default"])
def test_a_renamed_copy_of_a_seed_scores_lower_on_diversity_than_a_new_fault_kind(embedder):
    seeds = seed_scenarios() if embedder is Embedder.hashed else seed_scenarios()[:3]  # MiniLM is slow on 2 cores
    copy = Scenario.from_dict({**seeds[0].to_dict(), "id": "renamed-copy",
                               "description": "Renamed: " + seeds[0].description})
    group = [Record(scenario=copy), Record(scenario=Scenario.from_dict(bad_image()))]
    results = score_records(group, novelty=Novelty(seeds, embedder()))
    assert results[0].values()["diversity"] < 0.5 < results[1].values()["diversity"]
    assert seeds[0].id in results[0].scores["diversity"].evidence


def test_diversity_counts_the_rest_of_the_group():
    alone = score_records([Record(scenario=Scenario.from_dict(renamed(scale_zero())))],
                          novelty=Novelty([], Embedder.hashed()))
    twins = score_records([Record(scenario=Scenario.from_dict(s)) for s in (scale_zero(), renamed(scale_zero()))],
                          novelty=Novelty([], Embedder.hashed()))
    assert alone[0].values()["diversity"] == 1.0 > twins[0].values()["diversity"]


def test_weights_are_configurable_from_a_mapping_or_yaml(tmp_path, records):
    path = tmp_path / "weights.yaml"
    path.write_text("format: 1\nsolution_effectiveness: 0\ncommands_completeness: 0\ndiversity: 0\n"
                    "problem_validity: 0\ncommands_correctness: 0\n")
    only_format = score_records([records["no-fix"]], novelty=Novelty([], Embedder.hashed()), weights=load_weights(path))
    assert only_format[0].total == 1.0
    assert load_weights({"diversity": 0.4})["diversity"] == 0.4 and sum(DEFAULT_WEIGHTS.values()) == pytest.approx(1)
    with pytest.raises(ValueError, match="unknown reward dimension"):
        load_weights({"beauty": 1})


def test_an_llm_judge_adds_a_dimension_through_a_model(records):
    judge = ReplayModel(['{"score": 8, "reason": "a realistic outage"}', "I cannot say"])
    results = score_records([records["good"], records["no-fix"]], novelty=Novelty([], Embedder.hashed()),
                            judge=judge)
    assert results[0].scores["judge"].value == 0.8 and "realistic" in results[0].scores["judge"].evidence
    assert results[1].scores["judge"].value == 0.0 and "no score" in results[1].scores["judge"].evidence
    judge.assert_done()
    assert "geo-scaled-to-zero" in judge.requests[0][1][1]["content"]  # the judge sees the scenario


def test_score_group_executes_and_scores_each_candidate():
    results = score_group(["not json", scale_zero()], novelty=Novelty([], Embedder.hashed()))
    assert [r.total for r in results][0] == 0.0 and results[1].total > 0.9
    assert set(results[1].scores) == set(DEFAULT_WEIGHTS)
