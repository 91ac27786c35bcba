"""`aoi eval --problems scenarios:FILE`: each valid scenario becomes four problems, run by worker processes."""

from __future__ import annotations

import json

import pytest
import typer
from typer.testing import CliRunner

from aoi.evaluate.cli import eval_command
from aoi.evaluate.select import select
from aoi.problems.scenarios import dumps
from aoi.problems.seeds import seed_scenarios
from aoi.tasks import TASK_TYPES

NS = "test-hotel-reservation"
HAND_MADE = {
    "id": "geo-scaled-away", "app": "hotel-reservation", "namespace": NS,
    "description": "geo is scaled to zero replicas, so search cannot find nearby hotels",
    "fault": [{"kubectl": f"kubectl scale deployment/geo -n {NS} --replicas=0"}],
    "symptoms": [{"command": f"kubectl get deployment geo -n {NS}", "pattern": r"(?m)^geo\s+0/0\s"}],
    "root_cause": {"system_level": "Virtualization", "fault_type": "Operation Error", "components": ["geo"]},
    "diagnostic_commands": [f"kubectl get deployments -n {NS}"],
    "solution_commands": [f"kubectl scale deployment/geo -n {NS} --replicas=1"],
}
SEED = "k8s-target-port-misconfig-user-service"


@pytest.fixture
def scenario_file(tmp_path):
    """Write a file with a hand-made scenario, a seed, one out of scope and one malformed."""
    seed = next(s for s in seed_scenarios() if s.id == SEED)
    outside = HAND_MADE | {"id": "escapes", "solution_commands": ["kubectl delete namespace kube-system"]}
    path = tmp_path / "scenarios.jsonl"
    path.write_text("\n".join([json.dumps(HAND_MADE), dumps(seed), json.dumps(outside), '{"id": "broken"}']) + "\n")
    return path


def test_select_builds_four_task_types_per_valid_scenario_and_notes_the_rest(scenario_file):
    pairs, notes = select(f"scenarios:{scenario_file}")
    assert pairs == [(f"scenario:{sid}-{task}", None) for sid in ("geo-scaled-away", SEED) for task in TASK_TYPES]
    assert notes[0].startswith(f"skipped {scenario_file}:3: solution_commands/0: writes cluster-scoped namespace")
    assert notes[1].startswith(f"skipped {scenario_file}:4: missing fields 'app'")
    assert select(f"scenarios:{scenario_file}", task_type="mitigation")[0] == [
        ("scenario:geo-scaled-away-mitigation", None), (f"scenario:{SEED}-mitigation", None)]
    assert [p for p, _ in select(f"scenarios:{scenario_file}", app="social-network")[0]] == [
        f"scenario:{SEED}-{task}" for task in TASK_TYPES]


def test_the_expert_attempts_scenario_problems_in_worker_processes(scenario_file, tmp_path):
    app = typer.Typer()
    app.command()(eval_command)
    out = tmp_path / "run"
    done = CliRunner().invoke(app, ["--problems", f"scenarios:{scenario_file}", "--model", "expert",
                                    "--workers", "2", "--out", str(out)])
    assert done.exit_code == 0, done.output
    assert "skipped" in done.output and "8 problem(s)" in done.output
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert sorted(r["problem_id"] for r in rows) == sorted(p for p, _ in select(f"scenarios:{scenario_file}")[0])
    assert all(r["family"].startswith("scenario:") and r["results"] for r in rows)
    assert all(r["success"] for r in rows if r["task_type"] == "detection")
    assert json.loads((out / "config.json").read_text())["env"]["scenarios"] == [str(scenario_file.resolve())]


def test_a_missing_scenario_file_is_a_clear_error(tmp_path):
    app = typer.Typer()
    app.command()(eval_command)
    done = CliRunner().invoke(app, ["--problems", f"scenarios:{tmp_path / 'nope.jsonl'}", "--out", str(tmp_path)])
    assert done.exit_code == 2 and "does not exist" in done.output
