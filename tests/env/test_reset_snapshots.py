"""Resets from a kept snapshot: the third reset of a (problem, seed) clones the state the second one reached, and
plays byte for byte as a reset that injected the fault itself."""

from __future__ import annotations

import json

import orjson
import pytest

from aoi.env import make, twin_backend
from aoi.env.twin_backend import SNAPSHOTS_KEPT, Snapshots

from .test_determinism import transcript

PROBLEMS = ["k8s_target_port-misconfig-detection-1", "revoke_auth_mongodb-mitigation-1",
            "astronomy_shop_payment_service_failure-localization-1"]


def state(env) -> bytes:
    """The whole store (objects, version) and the watch history of an episode's twin."""
    store = env.backend.twin.store
    objects = [store.list(res) for res in sorted(store.resources(), key=lambda r: r.key)]
    return orjson.dumps([store.rv, store.oldest_rv(), [c.rv for c in store.log.since(0)], objects])


@pytest.mark.parametrize("problem_id", PROBLEMS)
def test_a_reset_from_a_snapshot_plays_as_one_that_injected(problem_id, tmp_path):
    SNAPSHOTS_KEPT.clear()
    first = transcript(problem_id, 3, tmp_path / "a")  # computed; the key is noted
    transcript(problem_id, 3, tmp_path / "a")  # computed again; its state is kept
    key, hits = next(iter(SNAPSHOTS_KEPT.kept)), SNAPSHOTS_KEPT.hits
    third = transcript(problem_id, 3, tmp_path / "a")  # cloned from the kept state
    assert key[0] == problem_id and key[2] == 3 and SNAPSHOTS_KEPT.hits == hits + 1
    assert json.dumps(third) == json.dumps(first)


def test_the_snapshot_state_is_the_computed_state(tmp_path):
    SNAPSHOTS_KEPT.clear()
    states = []
    for _ in range(3):
        with make(PROBLEMS[1], seed=4, workdir=tmp_path / "w") as env:
            env.reset()
            states.append(state(env))
    assert len(SNAPSHOTS_KEPT.kept) == 1 and SNAPSHOTS_KEPT.hits >= 1
    assert states[0] == states[1] == states[2]


def test_a_snapshot_serves_only_its_own_problem_and_seed(tmp_path):
    snapshots = Snapshots(size=1)
    with make(PROBLEMS[0], seed=1, workdir=tmp_path / "w") as env:
        env.reset()
        problem, twin = env.problem, env.backend.twin
    for _ in range(2):
        snapshots.offer((problem.id, problem.target, 1), problem, twin, [])
    assert snapshots.get((problem.id, problem.target, 1), problem) is not None
    assert snapshots.get((problem.id, problem.target, 2), problem) is None
    other = make(PROBLEMS[1]).problem
    assert snapshots.get((problem.id, problem.target, 1), other) is None  # same key, another definition
    snapshots.offer(("x", None, 0), problem, twin, [])
    snapshots.offer(("x", None, 0), problem, twin, [])
    assert len(snapshots.kept) == 1 and ("x", None, 0) in snapshots.kept  # the oldest went
    assert twin_backend.SNAPSHOTS >= 1
