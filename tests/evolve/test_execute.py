"""Executing a scenario in a fresh twin: the healthy system, each fault op, symptoms, probe diagnostics, executor
solution, the strict health check; nothing runs for a scenario out of scope or out of format."""

from __future__ import annotations

import json

import pytest
from tests.handmade_scenarios import NS, scale_zero, variant

from aoi.evolve.execute import execute, parse_candidate
from aoi.problems.scenarios import Scenario


@pytest.fixture(scope="module")
def good():
    return execute(scale_zero())


@pytest.fixture(scope="module")
def rough():
    """A scenario whose first fault op fails, whose second is an API patch, and whose diagnostic tries a write."""
    return execute(variant(scale_zero(), id="rough", fault=[
        {"kubectl": f"kubectl scale deployment no-such-deployment --replicas=0 -n {NS}"},
        {"api": {"verb": "patch", "kind": "Deployment", "name": "geo", "patch": {"spec": {"replicas": 0}}}}],
        diagnostic_commands=[f"kubectl scale deployment geo --replicas=3 -n {NS}", f"kubectl get deploy geo -n {NS}"]))


def test_the_record_follows_the_scenario_from_healthy_to_fixed(good):
    assert good.executed and not good.error
    assert " 1/1 " in good.healthy[0].stdout and " 0/0 " in good.faulty[0].stdout and " 1/1 " in good.after[0].stdout
    assert [run.ok for run in good.fault] == [True] and good.fault[0].command == scale_zero()["fault"][0]["kubectl"]
    assert [run.role for run in (*good.fault, *good.diagnostics, *good.solution)] == ["admin", "probe", "executor"]
    assert "geo" in good.diagnostics[0].stdout
    assert good.fixed_health == ()


def test_each_fault_op_is_recorded_with_its_error_and_an_api_op_applies(rough):
    failed, patched = rough.fault
    assert not failed.ok and "no-such-deployment" in failed.stderr and "not found" in failed.stderr
    assert patched.ok and patched.command == f"api patch Deployment {NS}/geo"
    assert " 0/0 " in rough.faulty[0].stdout  # the API patch took effect


def test_diagnostics_run_read_only_as_the_probe(rough):
    write, read = rough.diagnostics
    assert not write.ok and "probe" in write.text and "Forbidden" in write.text
    assert read.ok and " 0/0 " in read.stdout  # the refused scale changed nothing


def test_nothing_runs_for_a_scenario_out_of_scope_or_out_of_format():
    reaching = execute(variant(scale_zero(), solution_commands=["kubectl delete pod x -n kube-system"]))
    assert reaching.scope_errors and "kube-system" in reaching.scope_errors[0]
    assert not reaching.executed and reaching.healthy == () and reaching.fault == ()
    broken = execute({"id": "x"})
    assert broken.scenario is None and any("'app'" in e for e in broken.format_errors)


def test_candidates_parse_from_fenced_json_text_and_records_serialise(good):
    text = "Here it is:\n```json\n" + json.dumps(scale_zero()) + "\n```"
    scenario, errors = parse_candidate(text)
    assert errors == [] and scenario == Scenario.from_dict(scale_zero())
    data = json.loads(json.dumps(good.to_dict()))
    assert data["scenario"]["id"] == "geo-scaled-to-zero" and data["faulty"][0]["role"] == "probe"


def test_the_same_scenario_and_seed_give_the_same_record(good):
    assert execute(scale_zero(), seed=0) == good


def test_a_scenario_with_too_many_commands_is_not_run():
    bloated = execute(variant(scale_zero(), diagnostic_commands=[f"kubectl get pods -n {NS}"] * 100))
    assert not bloated.executed and "write fewer" in bloated.error and bloated.healthy == ()
