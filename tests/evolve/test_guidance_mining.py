"""The failure-trajectory Evolver on real small runs: failed episodes become guidance entries with provenance,
a model spec can write the lessons, and the mined file steers a guided eval (the Observer is shown the entries)."""

from __future__ import annotations

import json

import pytest
import yaml
from typer.testing import CliRunner

from aoi.agents.guidance import Entry, load_guidance
from aoi.cli import app
from aoi.config import load_config
from aoi.evaluate.compare import compare
from aoi.evaluate.metrics import summarize
from aoi.evaluate.report import write_report
from aoi.evaluate.runner import run_eval
from aoi.evolve.cli import evolve_app
from aoi.evolve.guidance import dedupe, mine
from aoi.models.embedder import Embedder
from aoi.store.sqlite import TrajectoryStore

FAULTY, HEALTHY = "k8s_target_port-misconfig-detection-1", "noop_detection_social_network-1"
NS = "test-social-network"


def _probe(command: str) -> dict:
    return {"role": "probe", "text": json.dumps({"thought": "", "tool": "exec_shell", "args": {"command": command}})}


def _observer(**decision) -> dict:
    return {"role": "observer", "text": json.dumps({"phase": "survey", "instruction": "", "context": "", **decision})}


# One episode's script (replay models are rebuilt per episode): a repeated call, a refused write, a call with wrong
# arguments, the answer "No".
WRONG = [_observer(next="probe", instruction="list the pods"), *[_probe(f"kubectl get pods -n {NS}")] * 3,
         _probe(f"kubectl delete pod -l app=user-service -n {NS}"),
         {"role": "probe", "text": json.dumps({"thought": "", "tool": "get_logs", "args": {"type": "function"}})},
         {"role": "probe", "text": json.dumps({"thought": "", "tool": "finish", "args": {"findings": "fine"}})},
         _observer(next="submit", answer="No")]


def _eval(tmp_path, name: str, script: list, problems=(FAULTY, HEALTHY), k: int = 2, **overrides):
    """Run a small eval with a scripted model; return its folder."""
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(script))
    config = load_config(overrides={"model": f"replay:{path}", "models.compressor": "expert", **overrides},
                         environ={})
    out = tmp_path / name
    run_eval([(p, None) for p in problems], k, 1, config, out, executor="thread")
    return out


@pytest.fixture(scope="module")
def failed_run(tmp_path_factory):
    return _eval(tmp_path_factory.mktemp("runs"), "wrong", WRONG, **{"agent.probe_budget": 6})


def test_failed_episodes_become_entries_with_provenance(failed_run):
    entries, failures = mine([failed_run])
    rows = [json.loads(line) for line in (failed_run / "results.jsonl").read_text().splitlines()]
    failed_ids = {r["trajectory_id"] for r in rows if not r["success"]}
    assert len(failed_ids) == 2 and {f.trajectory for f in failures} == failed_ids  # the healthy "No" was right
    by_kind = {e.kind: e for e in entries}
    assert set(by_kind) == {"wrong_answer", "refused", "repeated", "failed_call"} and len(entries) == 4  # merged
    assert all(set(e.provenance) == failed_ids and e.task_type == "detection" for e in entries)
    answer = by_kind["wrong_answer"]
    assert '"No"' in answer.lesson and "k8s target port misconfig" in answer.lesson
    assert "user-service" in answer.keywords and "social-network" in answer.keywords
    assert "kubectl delete pod" in by_kind["refused"].lesson and "read-only" in by_kind["refused"].lesson
    assert f"kubectl get pods -n {NS}" in by_kind["repeated"].lesson
    assert "wrong arguments for get_logs" in by_kind["failed_call"].lesson
    assert not any("wrong arguments" in s for e in entries for s in e.symptoms)  # the call's fault, not the app's
    assert any('expected "Yes"' in line for line in answer.evidence)


def test_a_run_store_of_aoi_run_is_read_too(failed_run, tmp_path):
    store = TrajectoryStore(tmp_path / "trajectories.db")
    for traj in TrajectoryStore(failed_run / "trajectories.db").query():
        store.save(traj)
    entries, failures = mine([tmp_path / "trajectories.db"])
    assert len(failures) == 2 and {e.kind for e in entries} == {"wrong_answer", "refused", "repeated", "failed_call"}


def test_a_successful_run_gives_no_entries(tmp_path):
    right = [_observer(next="submit", answer="Yes")]
    entries, failures = mine([_eval(tmp_path, "right", right, problems=(FAULTY,), k=1)])
    assert entries == [] and failures == []


def test_similar_lessons_merge_and_different_ones_stay():
    def entry(i, lesson, kind="wrong_answer"):
        return Entry(id=f"g{i}", task_type="detection", lesson=lesson, kind=kind, provenance=[f"t{i}"])
    merged = dedupe([entry(1, "Check the endpoints of user-service before answering No."),
                     entry(2, "Check the endpoints of user-service before answering No!"),
                     entry(3, "Read the MongoDB logs for authorization errors."),
                     entry(4, "Check the endpoints of user-service before answering No.", kind="repeated")],
                    Embedder.hashed())
    assert [e.id for e in merged] == ["g1", "g3", "g4"] and merged[0].provenance == ["t1", "t2"]


def test_the_cli_writes_entries_and_a_model_can_write_the_lessons(failed_run, tmp_path):
    writer = tmp_path / "writer.yaml"
    writer.write_text(yaml.safe_dump([f"Lesson {i}: list the endpoints before answering." for i in range(4)]))
    out = tmp_path / "guidance.jsonl"
    result = CliRunner().invoke(evolve_app, ["guidance", "--from", str(failed_run), "--out", str(out),
                                             "--model", f"replay:{writer}"])
    assert result.exit_code == 0, result.output
    assert "2 failed episode(s) (2 wrong_answer) -> 4 entries" in result.output
    entries = load_guidance(out)
    assert sorted(e.lesson for e in entries) == [f"Lesson {i}: list the endpoints before answering." for i in range(4)]
    assert {e.source for e in entries} == {"replay:writer.yaml"} and all(e.provenance for e in entries)
    bad = CliRunner().invoke(evolve_app, ["guidance", "--from", str(tmp_path / "none"), "--out", str(out)])
    assert bad.exit_code == 2 and "holds no results.jsonl or trajectories.db" in " ".join(bad.output.split())


def test_mined_guidance_is_shown_in_a_guided_eval(failed_run, tmp_path):
    out = tmp_path / "mined.jsonl"
    assert CliRunner().invoke(evolve_app, ["guidance", "--from", str(failed_run), "--out", str(out)]).exit_code == 0
    mined = {e.id for e in load_guidance(out)}
    script, guided = tmp_path / "wrong.yaml", tmp_path / "guided"
    script.write_text(yaml.safe_dump(WRONG))
    result = CliRunner().invoke(app, ["eval", "--out", str(guided), "--problems", FAULTY, "--model",
                                      f"replay:{script}", "--executor", "thread", "--guidance", str(out)])
    assert result.exit_code == 0, result.output
    (traj,) = TrajectoryStore(guided / "trajectories.db").query()
    assert traj.guidance_ids and set(traj.guidance_ids) <= mined
    first = next(s for s in traj.steps if s.role == "observer" and s.messages)
    assert all(f"[{i}]" in first.messages[1]["content"] for i in first.guidance_ids)
    pinned = json.loads((guided / "config.json").read_text())["agent"]["guidance"]
    assert pinned["file"] == str(out) and len(pinned["sha256"]) == 64
    md, _ = write_report(str(failed_run), [f"guided={guided}"], tmp_path / "ablation")
    text = md.read_text()  # the ablation's table: avg@k, best@k and the spread over attempts side by side
    for metric in ("avg@k %", "best@k %", "std %", "variance pp²"):
        assert f"| detection | {metric} | " in text
    assert "| detection | variance pp² | 0.0 | 0.0 | +0.0 |" in text  # 2 attempts, both failed: no spread


def test_the_comparison_holds_the_variance_over_attempts():
    def run(wins):  # wins[problem][attempt]
        return summarize([{"problem_id": p, "task_type": "detection", "family": "f", "attempt": a, "success": w}
                          for p, attempts in enumerate(wins) for a, w in enumerate(attempts)])
    steady, shaky = run([[True, True], [True, True]]), run([[True, False], [True, True]])  # rates 1, 1 | 1, 0.5
    rows = {(r["group"], r["metric"]): r for r in compare([steady, shaky])}
    assert rows["overall", "std %"]["values"] == [0.0, 25.0]
    assert rows["overall", "variance pp²"]["values"] == [0.0, 625.0]
    assert rows["detection", "best@k %"]["deltas"] == [None, 0.0]


def test_lessons_come_from_the_evidence_not_the_problem_id():
    from aoi.evolve.failures import Failure
    from aoi.evolve.guidance import lessons

    seen = Failure(trajectory="t1", problem_id="p", task_type="localization", app="hotel-reservation",
                   family="k8s_target_port-misconfig", reason="wrong_answer", submitted=["frontend"],
                   expected=["geo"], components=["geo"], commands=["kubectl get pods -n h"], outputs=["geo 1/1"])
    unseen = Failure(**{**seen.__dict__, "trajectory": "t2", "outputs": ["frontend 1/1"]})
    unknown = Failure(**{**seen.__dict__, "trajectory": "t3", "expected": None, "components": []})
    said = [lessons(f)[0].lesson for f in (seen, unseen, unknown)]
    assert "The calls did show geo" in said[0] and "No call looked at geo" in said[1]
    assert said[2].startswith('The answer ["frontend"] was judged wrong') and "logs, events" in said[2]
    assert len({lessons(f)[0].id for f in (seen, unseen)}) == 1  # one failure kind: one id, merged by dedupe
