"""Messages in the store: kept once, compressed, read back whole, freed with their episodes; old stores still read."""

from __future__ import annotations

import sqlite3

import orjson
import pytest

from aoi.store import TrajectoryStore
from aoi.store.messages import REFS
from aoi.store.messages import stats as message_stats
from aoi.store.sqlite import COLUMNS, _create_v1, _record
from aoi.trajectory import Policy, Step, Trajectory

SYSTEM = {"role": "system", "content": "You are the probe. Run read-only kubectl commands. " * 40}


def conversation(task: str, calls: int) -> list[Step]:
    """Return the steps of one probe conversation: each call sends the earlier messages again, plus two more."""
    messages, steps = [SYSTEM, {"role": "user", "content": task}], []
    for n in range(calls):
        reply = f'exec_shell("kubectl get pods -n ns{n}")'
        steps.append(Step("probe", reply, action=reply, observation=f"pod-{n} Running", messages=list(messages)))
        messages += [{"role": "assistant", "content": reply}, {"role": "user", "content": f"pod-{n} Running"}]
    return steps


def episode(task: str = "look at the pods", calls: int = 4, **extra) -> Trajectory:
    return Trajectory("p-detection-1", "detection", policy=Policy("expert"), steps=conversation(task, calls),
                      results={"Detection Accuracy": "Correct"}, **extra)


@pytest.fixture
def store(tmp_path) -> TrajectoryStore:
    return TrajectoryStore(tmp_path / "t.db")


def stored_data(store: TrajectoryStore, episode_id: str) -> dict:
    with sqlite3.connect(store.path) as conn:
        return _record(conn.execute("SELECT data FROM episodes WHERE id = ?", (episode_id,)).fetchone()[0])


def counts(store: TrajectoryStore) -> dict:
    with sqlite3.connect(store.path) as conn:
        return message_stats(conn)


def test_messages_come_back_whole_and_in_order(store):
    traj = episode()
    traj.steps.append(Step("observer", "submit", action='submit("Yes")', messages=[]))
    traj.steps.append(Step("observer", "unanswered", messages=None))
    store.save(traj)
    assert store.get(traj.id) == traj
    assert store.query()[0].steps[3].messages == traj.steps[3].messages


def test_the_stored_record_keeps_keys_not_messages(store):
    traj = episode()
    store.save(traj)
    with sqlite3.connect(store.path) as conn:
        assert isinstance(conn.execute("SELECT data FROM episodes").fetchone()[0], bytes)  # compressed JSON
    steps = stored_data(store, traj.id)["steps"]
    assert all("messages" not in step for step in steps)
    assert [len(step[REFS]) for step in steps] == [2, 4, 6, 8]
    assert SYSTEM["content"][:40] not in orjson.dumps(steps).decode()


def test_each_distinct_message_is_stored_once_and_compressed(store):
    first, second = episode(calls=4), episode(calls=4)
    store.save(first)
    store.save(second)  # the same conversation again: nothing new to store
    figures = counts(store)
    assert figures["stored"] == 2 + 2 * 3  # system, task, then an assistant/user pair per call but the last
    assert figures["compressed_bytes"] < figures["stored_bytes"]
    store.save(episode(task="another task", calls=1))
    assert counts(store)["stored"] == 8 + 1  # only the new task message is added


def test_deleting_an_episode_frees_only_what_no_other_uses(store):
    keep, drop = episode(calls=2), episode(task="only here", calls=2)
    store.save(keep)
    store.save(drop)
    assert counts(store)["stored"] == 5
    assert store.delete(drop.id)
    assert counts(store)["stored"] == 4 and store.get(keep.id) == keep


def test_replacing_an_episode_frees_its_old_messages(store):
    traj = episode(task="first version", calls=1)
    store.save(traj)
    traj.steps = conversation("second version", 1)
    store.save(traj)
    assert counts(store)["stored"] == 2 and store.get(traj.id) == traj


def test_a_missing_message_is_reported_not_guessed(store):
    traj = episode(calls=1)
    store.save(traj)
    with sqlite3.connect(store.path) as conn:
        conn.execute("DELETE FROM messages")
    with pytest.raises(KeyError, match="referenced but not stored"):
        store.get(traj.id)


def write_schema_1(path, trajs: list[Trajectory], inline_messages: bool) -> None:
    """Write a store as AOI wrote it at schema 1: one table, steps inline in `data` (messages too, or no key)."""
    with sqlite3.connect(path) as conn:
        _create_v1(conn)
        conn.execute("PRAGMA user_version = 1")
        for traj in trajs:
            data = traj.to_dict()
            for step in data["steps"]:
                if not inline_messages:
                    del step["messages"]
            row = dict.fromkeys(COLUMNS) | {
                "id": traj.id, "problem_id": traj.problem_id, "task_type": traj.task_type, "success": 1,
                "model": traj.policy.model, "attempt": traj.attempt, "started_at": traj.started_at,
                "steps_count": len(traj.steps), "data": orjson.dumps(data).decode()}
            conn.execute(f"INSERT INTO episodes ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
                         list(row.values()))


@pytest.mark.parametrize("inline_messages", [False, True])
def test_a_schema_1_store_opens_migrates_and_reads(tmp_path, inline_messages):
    old = episode(calls=2)
    write_schema_1(tmp_path / "old.db", [old], inline_messages)
    store = TrajectoryStore(tmp_path / "old.db")
    assert store.schema_version() == 2
    read = store.get(old.id)
    expected = old.steps[1].messages if inline_messages else None
    assert read.steps[1].messages == expected and read.steps[1].text == old.steps[1].text
    store.save(episode(task="new", calls=1))
    assert store.count() == 2 and counts(store)["stored"] == 2
