"""benchmarks/learning.py --tiny through every phase, killed in the middle of one and resumed.

The benchmark is stopped by SIGTERM (its `aoi eval` must stop with it); the resumed run must skip the finished phases
(their outputs keep their mtimes), keep the killed evaluation's finished episodes, and write a results JSON with every
field. One run of the whole tiny benchmark: a few minutes.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "learning.py"
KILLED_IN = "eval-sft"  # the phase the first run is killed in, once it recorded an episode
pytestmark = pytest.mark.slow
FIELDS = {"command", "commit", "machine", "load_average", "size", "settings", "seed", "keys", "phase_seconds",
          "phases_missing", "table", "paired", "curve", "training", "chart", "work", "rebuild"}


def start(work: Path, log: Path, *more: str) -> subprocess.Popen:
    with log.open("a") as handle:
        return subprocess.Popen([sys.executable, str(SCRIPT), "--tiny", "--work", str(work), *more], cwd=ROOT,
                                stdout=handle, stderr=subprocess.STDOUT, start_new_session=True)


def wait_for(path: Path, process: subprocess.Popen, log: Path, limit: float = 1200) -> None:
    deadline = time.monotonic() + limit
    while not (path.is_file() and path.read_text().strip()):
        assert process.poll() is None, f"the benchmark ended before {path} had a line:\n{log.read_text()[-3000:]}"
        assert time.monotonic() < deadline, f"{path} had no line after {limit} s"
        time.sleep(1)


def outputs(work: Path) -> dict[str, int]:
    """Return the mtime of every output of the phases done before the kill."""
    kept = [*(work / "phases").glob("*.json"), work / "teacher" / "results.jsonl",
            work / "teacher-no-fault" / "results.jsonl", work / "data" / "splits.json",
            work / "teacher-grpo" / "results.jsonl", work / "grpo-data" / "splits.json",
            work / "sft" / "adapter_model.safetensors", work / "grpo" / "adapter_model.safetensors",
            *(work / "eval" / "base").rglob("results.jsonl")]
    return {str(p): p.stat().st_mtime_ns for p in kept}


def processes_naming(work: Path) -> list[int]:
    """Return the processes whose command line names `work` (the benchmark's, its `aoi eval`'s)."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if str(work).encode() in cmdline.read_bytes():
                found.append(int(cmdline.parent.name))
        except OSError:  # ended meanwhile
            continue
    return found


@pytest.fixture(scope="module")
def resumed(tmp_path_factory):
    work, log = tmp_path_factory.mktemp("learning"), tmp_path_factory.mktemp("logs") / "learning.log"
    first = start(work, log)
    killed_eval = work / "eval" / "sft" / "targets" / "results.jsonl"
    try:
        wait_for(killed_eval, first, log)
        first.send_signal(signal.SIGTERM)  # the benchmark alone, as `kill PID` does: it must stop its `aoi eval`
        stopped = {"returncode": first.wait(timeout=300), "left": processes_naming(work)}
    finally:
        for pid in processes_naming(work):  # nothing, unless the benchmark left its eval running (a failure)
            os.kill(pid, signal.SIGKILL)
        if first.poll() is None:
            os.killpg(first.pid, signal.SIGKILL)
            first.wait()
    before, rows_before = outputs(work), killed_eval.read_text().splitlines()
    second = start(work, log)
    assert second.wait(timeout=1200) == 0, log.read_text()[-3000:]
    return work, log.read_text(), before, rows_before, stopped


def test_a_terminated_run_stops_its_evaluation_and_says_how_to_resume(resumed):
    _, log, _, _, stopped = resumed
    assert stopped["left"] == [] and stopped["returncode"] == 1
    assert "interrupted: the finished phases and episodes are kept; run the same command to resume" in log


def test_the_resumed_run_skips_the_finished_phases_and_reuses_their_output(resumed):
    work, log, before, _, _ = resumed
    resumed_part = log.split(f"phase {KILLED_IN}: running", 1)[1]  # the first run's part ends in that phase
    for phase in ("teacher", "teacher-no-fault", "export", "sft", "teacher-grpo", "export-grpo", "grpo", "eval-base",
                  "eval-sft@50"):
        assert f"phase {phase}: done before" in resumed_part
    assert f"phase {KILLED_IN}: running" in resumed_part and f"phase {KILLED_IN}: done in" in resumed_part
    assert before and outputs(work) | before == outputs(work)  # nothing finished before the kill was rewritten


def test_the_killed_evaluation_kept_its_finished_episodes(resumed):
    work, _, _, rows_before, _ = resumed
    rows = (work / "eval" / "sft" / "targets" / "results.jsonl").read_text().splitlines()
    assert rows[:len(rows_before)] == rows_before and len(rows) == 8  # 4 keys x 2 seeds


def test_the_results_json_has_every_field_and_figure(resumed):
    work = resumed[0]
    data = json.loads((work / "learning.json").read_text())
    assert set(data) >= FIELDS and data["phases_missing"] == [] and data["size"] == "tiny"
    assert set(data["table"]) == {"base", "sft@50", "sft", "grpo", "expert"}
    for variant, sets in data["table"].items():
        expected = {"held-out targets"} if "@" in variant else {"held-out targets", "held-out families"}
        assert set(sets) == expected
        assert sets["held-out targets"]["episodes"] == 8 and len(sets["held-out targets"]["success_by_seed"]) == 2
    assert set(data["paired"]) == {"sft vs base", "grpo vs sft"}
    for sets in data["paired"].values():
        assert set(sets) == {"held-out targets", "held-out families"}
        found = sets["held-out targets"]
        assert found["episodes"] == 8 and not set(found["gained"]) & set(found["lost"])
        assert 0 < found["sign_test_p"] <= 1
    curve = data["curve"]
    steps, points = curve["sft_steps"], [x for x, _ in curve["sft_success"]]
    assert points[0] == 0 and points[2] == steps and abs(points[1] - steps / 2) <= 0.5  # the checkpoint nearest 50%
    assert curve["grpo_reward"] and curve["sft_position_losses"][0]["step"] == 0
    groups = curve["grpo_groups"]  # one group of G samples per GRPO step (tiny: 1 step)
    assert groups["groups"] == 1 and 0 <= groups["flat_one_decision"] <= groups["flat_success"] <= 1
    assert Path(data["chart"]).read_bytes()[:4] == b"\x89PNG"


def test_aoi_report_shows_the_learning_curve_of_the_grpo_run(resumed):
    from aoi.evaluate.training import write_training_report

    markdown, _ = write_training_report(resumed[0] / "grpo")
    assert "Learning curve" in markdown.read_text() and (markdown.parent / "learning_curve.png").is_file()


def test_a_phase_runs_alone_and_a_done_one_is_skipped(resumed):
    work = resumed[0]
    done = subprocess.run([sys.executable, str(SCRIPT), "--tiny", "--work", str(work), "--phase", "sft"], cwd=ROOT,
                          capture_output=True, text=True)
    assert done.returncode == 0 and "phase sft: done before" in done.stdout and "eval-base" not in done.stdout


def test_a_plan_written_before_later_key_sets_and_settings_gets_them_and_keeps_the_rest(tmp_path):
    def plan_only() -> subprocess.CompletedProcess:  # an unknown phase: the plan is written, nothing runs
        return subprocess.run([sys.executable, str(SCRIPT), "--tiny", "--work", str(tmp_path), "--phase", "none"],
                              cwd=ROOT, capture_output=True, text=True)

    assert plan_only().returncode != 0
    path = tmp_path / "plan.json"
    fresh = json.loads(path.read_text())
    old = {**fresh, "keys": {k: v for k, v in fresh["keys"].items() if k not in ("grpo", "teacher no-fault")}}
    assert fresh["keys"]["grpo"] and not set(fresh["keys"]["grpo"]) & set(fresh["keys"]["teacher"])
    path.write_text(json.dumps(old))
    assert "unknown phase" in plan_only().stderr and json.loads(path.read_text())["keys"] == fresh["keys"]
    path.write_text(json.dumps({**old, "keys": {**old["keys"], "teacher": ["x@y"]}}))
    assert "start the run in a fresh --work" in plan_only().stderr
    # a setting added to Size since the plan was written takes its current value; a planned one is kept
    settings = {k: v for k, v in fresh["size"].items() if k != "varied_states"}
    path.write_text(json.dumps({**fresh, "size": {**settings, "sft_curve": [0.3, 1.0]}}))
    assert "eval-sft@30" in plan_only().stderr  # the phases come from the planned curve
    assert json.loads(path.read_text())["size"] == {**fresh["size"], "sft_curve": [0.3, 1.0]}


def test_set_changes_a_new_plans_settings_and_a_resumed_run_keeps_them(tmp_path):
    def plan_only(*more: str) -> str:  # an unknown phase: the plan is written, nothing runs; return stderr
        return subprocess.run([sys.executable, str(SCRIPT), "--tiny", "--work", str(tmp_path), "--phase", "none",
                               *more], cwd=ROOT, capture_output=True, text=True).stderr

    assert "grpo_steps takes int" in plan_only("--set", "grpo_steps=many")
    assert not (tmp_path / "plan.json").exists()
    assert "eval-grpo@50" in plan_only("--set", "grpo_steps=4", "--set", "grpo_curve=0.5,1")  # phases from the curve
    size = json.loads((tmp_path / "plan.json").read_text())["size"]
    assert (size["grpo_steps"], size["grpo_curve"]) == (4, [0.5, 1.0])
    assert "unknown phase" in plan_only() and "eval-grpo@50" in plan_only()  # resumed: the planned settings
    assert "unknown phase" in plan_only("--set", "grpo_steps=4")  # its own setting again
    assert "planned with other settings than --set grpo_steps=5" in plan_only("--set", "grpo_steps=5")


@pytest.mark.parametrize("size", ["tiny", "quick", "default"])
def test_the_teacher_answers_no_on_train_side_healthy_systems_and_held_out_detection_has_unseen_ones(size,
                                                                                                      monkeypatch):
    from aoi.data.splits import SplitRules, catalogue_keys, make_splits

    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    import learning_plan

    keys = learning_plan.choose_keys(learning_plan.SIZES[size], seed=0)
    splits = make_splits(catalogue_keys(), SplitRules(seed=0))["by_target"]
    healthy = [k for k in keys["held-out targets"] if k.startswith("noop_")]
    assert keys["teacher no-fault"] and set(keys["teacher no-fault"]) <= set(splits["train"])
    assert set(healthy) <= set(splits["test"]) and len(healthy) == learning_plan.SIZES[size].targets_per_type // 2
    trained = {*keys["teacher"], *keys["teacher no-fault"], *keys["grpo"]}
    assert not trained & {*keys["held-out targets"], *keys["held-out families"]}
