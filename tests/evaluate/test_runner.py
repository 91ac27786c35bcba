"""run_eval and `aoi eval`: files written, resume after kill -9 and a torn line, Ctrl-C, options pinned per run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from aoi.env import ENV_VERSION
from aoi.evaluate.cli import eval_command
from aoi.evaluate.results import ResultsLog, episode_key
from aoi.problems import make as make_problem
from aoi.store.sqlite import TrajectoryStore

from .conftest import PROBLEMS, small_run, submit_script


def lines(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


def test_small_eval_writes_results_summary_trajectories_and_config(tmp_path):
    out = tmp_path / "run"
    summary = small_run(out, "Yes", k=2, workers=2)
    rows = lines(out)
    assert sorted((r["problem_id"], r["attempt"]) for r in rows) == sorted((p, a) for p in PROBLEMS for a in (0, 1))
    assert {r["seed"] - r["attempt"] for r in rows} == {0}
    noop = [r for r in rows if r["problem_id"].startswith("noop")]
    assert all(not r["success"] and r["failure"] == "wrong_answer" for r in noop)
    assert all(r["results"]["Detection Accuracy"] == "Correct" and r["ttx"] == r["results"]["TTD"]
               for r in rows if r not in noop)
    assert all(r["model_in_tokens"] > 0 and r["steps"] == 1 and r["task_type"] == "detection" for r in rows)
    saved = json.loads((out / "summary.json").read_text())
    assert saved["overall"]["avg_at_k"] == pytest.approx(2 / 3) == summary.overall["avg_at_k"]
    assert saved["overall"]["best_at_k"] == pytest.approx(2 / 3) and saved["pending"] == 0
    assert saved["by_task_type"]["detection"]["episodes"] == 6 and saved["overall"]["failures"] == {"wrong_answer": 2}
    stored = TrajectoryStore(out / "trajectories.db").summaries()
    assert {s["id"] for s in stored} == {r["trajectory_id"] for r in rows}
    config = json.loads((out / "config.json").read_text())
    assert config["model"]["spec"].startswith("replay:") and config["store"]["path"].endswith("trajectories.db")


def test_rerun_of_a_finished_eval_runs_nothing_and_counts_nothing_twice(tmp_path):
    out = tmp_path / "run"
    small_run(out, k=1, workers=1, executor="thread")
    before = (out / "results.jsonl").read_text()
    summary = small_run(out, k=1, workers=1, executor="thread")
    assert (out / "results.jsonl").read_text() == before
    assert summary.overall["episodes"] == 3 and len(summary.sessions) == 2 and summary.sessions[-1]["episodes"] == 0


def eval_args(spec: str, out: Path, k: int, workers: int = 2, *extra: str) -> list[str]:
    return [sys.executable, "-m", "aoi.evaluate", "eval", "--problems", ",".join(PROBLEMS), "-k", str(k),
            "--workers", str(workers), "--model", spec, "--out", str(out), *extra]


def start(args: list[str], cwd: Path) -> subprocess.Popen:
    """Start an eval in its own process group (so the test can kill it with its workers)."""
    return subprocess.Popen(args, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)


def wait_for_lines(out: Path, proc: subprocess.Popen, count: int = 1, limit: float = 120.0) -> int:
    """Wait until results.jsonl has `count` lines; return how many it has."""
    path, deadline = out / "results.jsonl", time.monotonic() + limit
    while time.monotonic() < deadline and proc.poll() is None:
        if path.exists() and path.read_text().count("\n") >= count:
            return path.read_text().count("\n")
        time.sleep(0.02)
    raise AssertionError(f"no results line within {limit}s; eval output:\n{proc.communicate()[0]}")


def group_gone(pgid: int, limit: float = 15.0) -> bool:
    """Wait until no process of a process group is left; return whether none is."""
    deadline = time.monotonic() + limit
    while True:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.1)


def test_resume_after_kill_9_and_a_torn_last_line(tmp_path):
    out, k = tmp_path / "run", 3
    spec = submit_script(tmp_path, "Yes")
    proc = start(eval_args(spec, out, k), tmp_path)
    try:
        written = wait_for_lines(out, proc)
        os.kill(proc.pid, signal.SIGKILL)  # the eval only: its spawned workers must notice and exit
        proc.wait()
        assert group_gone(proc.pid), "worker processes outlived the killed eval"
    finally:
        if not group_gone(proc.pid, 0):
            os.killpg(proc.pid, signal.SIGKILL)
    assert written < len(PROBLEMS) * k, "the eval finished before it could be killed"
    killed = json.loads((out / "summary.json").read_text())["sessions"][-1]
    assert killed["interrupted"] is True  # on record as interrupted from its start; never cleared by kill -9
    path = out / "results.jsonl"
    first = path.read_text().splitlines()[0]
    with open(path, "a") as handle:  # a duplicate line, then a line cut mid-write
        handle.write(first + "\n" + first[: len(first) // 2])
    done = subprocess.run(eval_args(spec, out, k), check=False, cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "dropped 2" in done.stdout
    rows = lines(out)
    keys = Counter(episode_key(r) for r in rows)
    assert set(keys.values()) == {1} and len(rows) == len(PROBLEMS) * k
    assert {(p, a) for p, _, a in keys} == {(p, a) for p in PROBLEMS for a in range(k)}
    summary = json.loads((out / "summary.json").read_text())
    assert summary["overall"]["episodes"] == 9 and summary["overall"]["avg_at_k"] == pytest.approx(2 / 3)
    assert summary["pending"] == 0 and len(summary["sessions"]) == 2  # the killed session, then the resume
    stored = TrajectoryStore(out / "trajectories.db").summaries()
    assert sorted(s["id"] for s in stored) == sorted(r["trajectory_id"] for r in rows)


def test_ctrl_c_keeps_finished_episodes_and_says_how_to_resume(tmp_path):
    out = tmp_path / "run"
    spec = submit_script(tmp_path, "Yes")
    proc = start(eval_args(spec, out, 3, 1), tmp_path)
    wait_for_lines(out, proc)
    os.kill(proc.pid, signal.SIGINT)  # the eval only: workers ignore SIGINT anyway
    output = proc.communicate(timeout=120)[0]
    assert proc.returncode == 130, output
    assert "interrupted" in output and "resume" in output
    rows, dropped = ResultsLog(out / "results.jsonl").read()
    assert dropped == 0 and 1 <= len(rows) < 9
    assert json.loads((out / "summary.json").read_text())["sessions"][-1]["interrupted"] is True
    subprocess.run(eval_args(spec, out, 3, 2), cwd=tmp_path, check=True, capture_output=True, timeout=300)
    assert len(lines(out)) == 9


def test_sigterm_is_recorded_as_an_interruption(tmp_path):
    out = tmp_path / "run"
    proc = start(eval_args(submit_script(tmp_path, "Yes"), out, 3, 1), tmp_path)
    wait_for_lines(out, proc)
    os.kill(proc.pid, signal.SIGTERM)
    output = proc.communicate(timeout=120)[0]
    assert proc.returncode == 130 and "interrupted" in output, output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["sessions"][-1]["interrupted"] is True and summary["pending"] > 0


def slow_script(folder: Path, delay: float) -> str:
    """Write a replay script whose Observer answers after `delay` seconds; return its model spec."""
    decision = {"phase": "submit", "next": "submit", "instruction": "", "context": "", "answer": "Yes"}
    path = folder / "slow.json"
    path.write_text(json.dumps([{"role": "observer", "text": json.dumps(decision), "delay": delay}]))
    return f"replay:{path}"


def pool_workers(pgid: int) -> int:
    """Return how many pool workers of the group are set up: forked from the fork server (same command line) and
    running their parent watcher (a second thread, started once the eval has handed the worker all it sends)."""
    count = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            cmdline = (stat.parent / "cmdline").read_bytes()
            threads = len(list((stat.parent / "task").iterdir()))
        except OSError:
            continue  # gone meanwhile
        count += int(fields[2]) == pgid and b"forkserver" in cmdline and threads > 1
    return count


def test_one_sigterm_stops_the_eval_at_once_and_records_the_episodes_in_flight(tmp_path):
    out = tmp_path / "run"
    proc = start(eval_args(slow_script(tmp_path, delay=300), out, 1, 2), tmp_path)
    try:
        deadline = time.monotonic() + 120
        while pool_workers(proc.pid) < 2 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)  # both workers set up: their episodes are in flight (each answers in 300 s)
        assert pool_workers(proc.pid) == 2, proc.communicate(timeout=5)[0]
        time.sleep(0.5)
        os.kill(proc.pid, signal.SIGTERM)  # once, the eval only
        output = proc.communicate(timeout=90)[0]  # far less than an episode: nothing waited for one
        assert group_gone(proc.pid), "the worker processes outlived the eval"
    finally:
        if not group_gone(proc.pid, 0):
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, output
    assert "interrupted by SIGTERM: abandoned 2 episode(s) in flight" in " ".join(output.split()), output
    summary = json.loads((out / "summary.json").read_text())
    session = summary["sessions"][-1]
    assert session["interrupted"] is True and summary["pending"] == 3 and session["episodes"] == 0
    assert sorted(session["abandoned"]) == sorted([p, make_problem(p).target, 0] for p in PROBLEMS[:2])
    assert ResultsLog(out / "results.jsonl").read() == ([], 0)


def test_a_finished_session_is_not_marked_interrupted(tmp_path):
    summary = small_run(tmp_path / "run", k=1, workers=1, executor="thread")
    assert summary.pending == 0 and summary.sessions[-1]["interrupted"] is False and not summary.interrupted


def test_resume_with_other_options_is_refused(tmp_path, script):
    app = typer.Typer()
    app.command()(eval_command)
    args = ["--problems", PROBLEMS[1], "--model", script("No"), "--out", str(tmp_path / "run"), "--executor", "thread"]
    first = CliRunner().invoke(app, args)
    assert first.exit_code == 0, first.output
    second = CliRunner().invoke(app, [*args, "--max-steps", "7"])
    assert second.exit_code == 2 and "env.max_steps" in second.output and "--out" in second.output


def test_cli_rejects_unknown_problem_and_notes_flower(tmp_path):
    app = typer.Typer()
    app.command()(eval_command)
    bad = CliRunner().invoke(app, ["--problems", "nope-detection-1", "--out", str(tmp_path / "x")])
    assert bad.exit_code == 2 and "unknown problem id" in bad.output
    flower = CliRunner().invoke(app, ["--problems", "flower_node_stop-detection", "--out", str(tmp_path / "y")])
    assert flower.exit_code == 2 and "aiopslab backend" in flower.output


def test_rows_carry_the_env_version_and_a_resume_across_versions_is_refused_unless_forced(tmp_path, script):
    app = typer.Typer()
    app.command()(eval_command)
    out = tmp_path / "run"
    args = ["--problems", ",".join(PROBLEMS[:2]), "--model", script("No"), "--out", str(out), "--executor", "thread"]
    first = CliRunner().invoke(app, args)
    assert first.exit_code == 0, first.output
    rows = lines(out)
    assert {r["env_version"] for r in rows} == {ENV_VERSION}
    assert json.loads((out / "summary.json").read_text())["run"]["env_version"] == ENV_VERSION
    older = [{**rows[0], "env_version": "0"}, {k: v for k, v in rows[1].items() if k != "env_version"}]
    (out / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in older))
    refused = CliRunner().invoke(app, args)
    said = " ".join(refused.output.split())  # rich wraps long lines
    assert refused.exit_code == 2 and "--force-version" in said
    assert "1 row(s) from env version 0, 1 row(s) from env version unrecorded" in said
    forced = CliRunner().invoke(app, [*args, "--problems", ",".join(PROBLEMS), "--force-version"])
    assert forced.exit_code == 0 and "mixing them" in " ".join(forced.output.split())
    assert [r.get("env_version") for r in lines(out)] == ["0", None, ENV_VERSION]


class _DonePool:
    """A pool whose jobs are finished as soon as they are submitted; it logs each submission."""

    def __init__(self, log: list):
        self.log = log

    def submit(self, fn, job):
        from concurrent.futures import Future

        self.log.append(("submit", job))
        future = Future()
        future.set_result(job)
        return future


def test_a_freed_worker_gets_its_next_job_before_the_finished_one_is_recorded():
    from aoi.evaluate.runner import _loop

    log, running = [], {}

    def finish(future):
        log.append(("finish", running.pop(future)))

    _loop(_DonePool(log), running, iter(range(7)), 2, finish)
    submitted = [job for kind, job in log if kind == "submit"]
    assert submitted == list(range(7)) and sorted(job for kind, job in log if kind == "finish") == list(range(7))
    for job in range(5):  # job + 2 went to the worker that ran job, before job's row was written
        assert log.index(("submit", job + 2)) < log.index(("finish", job))
    # two in flight, then one more per finished job: four submissions before the first row is written
    assert [kind for kind, _ in log[:5]] == ["submit"] * 4 + ["finish"]


def test_ctrl_c_while_recording_leaves_the_unrecorded_finished_jobs_in_flight():
    from aoi.evaluate.runner import _loop

    log, running = [], {}

    def finish(future):
        log.append(("finish", running.pop(future)))
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        _loop(_DonePool(log), running, iter(range(7)), 2, finish)
    recorded = {job for kind, job in log if kind == "finish"}
    assert len(recorded) == 1
    # the other finished job and the two submitted for the freed workers wait in `running` for _wind_down
    assert sorted(running.values()) == sorted({0, 1, 2, 3} - recorded)
