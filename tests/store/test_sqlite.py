"""The trajectory store: CRUD and filters, success derivation, WAL, a writer killed mid-commit, concurrent writers."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading

import pytest

from aoi.store import SCHEMA_VERSION, StoreError, TrajectoryStore
from aoi.trajectory import Policy, Step, Trajectory


def episode(problem_id="p-detection-1", task_type="detection", attempt=0, model="expert", results=None,
            **extra) -> Trajectory:
    """Return a small finished episode."""
    steps = [Step("observer", "plan"), Step("probe", "look", action='exec_shell("kubectl get pods")',
                                            observation="NAME READY", input_tokens=10, output_tokens=3)]
    return Trajectory(problem_id, task_type, attempt=attempt, policy=Policy(model), steps=steps,
                      results=results if results is not None else {"Detection Accuracy": "Correct"},
                      started_at=100.0 + attempt, ended_at=110.0 + attempt, **extra)


@pytest.fixture
def store(tmp_path) -> TrajectoryStore:
    return TrajectoryStore(tmp_path / "runs" / "t.db")


def test_save_get_round_trip(store):
    traj = episode(submission={"system_level": "Application"}, strict_success=True, guidance_ids=["g1"],
                   config={"model": {"spec": "expert"}})
    store.save(traj)
    assert store.get(traj.id) == traj
    assert store.get("missing") is None


def test_query_count_and_filters(store):
    store.save(episode(attempt=0))
    store.save(episode(attempt=1, results={"Detection Accuracy": "Incorrect"}))
    store.save(episode("p-localization-1", "localization", model="openai:gpt-4o-mini", results={"success": True}))
    assert store.count() == 3
    assert store.count(task_type="detection") == 2
    assert store.count(model="openai:gpt-4o-mini", success=True) == 1
    assert [t.attempt for t in store.query(problem_id="p-detection-1")] == [0, 1]
    assert [t.attempt for t in store.query(success=False)] == [1]
    assert len(store.query(limit=2)) == 2


def test_exists_and_delete(store):
    traj = episode(attempt=2)
    store.save(traj)
    assert store.exists("p-detection-1", 2, "expert")
    assert not store.exists("p-detection-1", 3, "expert")
    assert not store.exists("p-detection-1", 2, "other")
    assert store.delete(traj.id) and not store.delete(traj.id)
    assert store.count() == 0


def test_save_same_id_replaces(store):
    traj = episode()
    store.save(traj)
    traj.results = {"Detection Accuracy": "Incorrect"}
    store.save(traj)
    assert store.count() == 1 and store.count(success=False) == 1


def test_summaries_carry_columns_without_steps(store):
    store.save(episode(strict_success=False))
    (row,) = store.summaries()
    assert row["success"] is True and row["strict_success"] is False
    assert (row["steps_count"], row["input_tokens"], row["output_tokens"]) == (2, 10, 3)
    assert "data" not in row


def test_wal_mode_and_schema_version(store):
    with sqlite3.connect(store.path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        indexes = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert {"episodes_problem_attempt", "episodes_model"} <= indexes
    assert store.schema_version() == SCHEMA_VERSION


def test_newer_schema_is_refused(store):
    with sqlite3.connect(store.path) as conn:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(StoreError, match="upgrade aoi"):
        TrajectoryStore(store.path)


def test_a_file_that_is_not_a_database_is_refused(tmp_path):
    (tmp_path / "notes.db").write_text("not sqlite at all, just text " * 100)
    with pytest.raises(StoreError, match="not a usable SQLite store"):
        TrajectoryStore(tmp_path / "notes.db")


def test_a_failing_save_leaves_nothing(store):
    def explode(conn, traj):
        raise RuntimeError("boom")

    failing = TrajectoryStore(store.path, before_commit=explode)
    with pytest.raises(RuntimeError):
        failing.save(episode())
    assert store.count() == 0


def test_threads_share_a_store(store):
    threads = [threading.Thread(target=lambda i=i: store.save(episode(attempt=i))) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert store.count() == 8


# A child that saves N episodes, then stops inside the transaction of episode N+1 (after its INSERT, before COMMIT)
# and says so; the parent kills it there. Episode N+1 is large (8 MB) so SQLite spills uncommitted pages to the WAL.
CRASHER = """
import sys, time
from aoi.store import TrajectoryStore
from aoi.trajectory import Step, Trajectory
path, n = sys.argv[1], int(sys.argv[2])
def hang(conn, traj):
    if traj.attempt == n:
        print("in-transaction", flush=True)
        time.sleep(120)
store = TrajectoryStore(path, before_commit=hang)
for i in range(n + 1):
    size = 8_000_000 if i == n else 1000
    store.save(Trajectory("p-detection-1", "detection", attempt=i, steps=[Step("probe", "x", "a", "o" * size)]))
"""


def test_sigkill_mid_commit_loses_only_the_episode_in_flight(tmp_path):
    path, n = tmp_path / "t.db", 5
    child = subprocess.Popen([sys.executable, "-c", CRASHER, str(path), str(n)], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "in-transaction"
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
    assert child.returncode == -signal.SIGKILL
    store = TrajectoryStore(path)
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        rows = conn.execute("SELECT attempt, steps_count FROM episodes ORDER BY attempt").fetchall()
    assert [r[0] for r in rows] == list(range(n)) and all(r[1] == 1 for r in rows)
    assert [len(t.steps[0].observation) for t in store.query()] == [1000] * n
    store.save(episode(attempt=n))
    assert store.count() == n + 1


# A writer that waits for "go" on stdin, then saves its episodes one by one.
WRITER = """
import sys
from aoi.store import TrajectoryStore
from aoi.trajectory import Policy, Trajectory
path, name, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
store = TrajectoryStore(path)
sys.stdin.readline()
for i in range(n):
    store.save(Trajectory(f"p-{i}", "detection", attempt=i, policy=Policy(name), id=f"{name}-{i}"))
"""


def test_two_writer_processes_interleave(tmp_path):
    path, n = tmp_path / "t.db", 60
    TrajectoryStore(path)
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), name, str(n)], stdin=subprocess.PIPE,
                                text=True) for name in ("a", "b")]
    for writer in writers:
        writer.stdin.write("go\n")
        writer.stdin.flush()
    assert [writer.wait(timeout=120) for writer in writers] == [0, 0]
    store = TrajectoryStore(path)
    assert store.count(model="a") == n and store.count(model="b") == n
    ids = {t.id for t in store.query()}
    assert ids == {f"{name}-{i}" for name in "ab" for i in range(n)}
