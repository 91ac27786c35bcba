"""Process workers are forked from a server that has imported their code and built the run's base twins."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from aoi.evaluate import pool

# A fresh process: the fork server is one per process and keeps what it loaded first.
# A worker's first job reports how many base twins its process holds: only twins built before the fork are there.
SCRIPT = """
import json, os, sys
from aoi.config import load_config
from aoi.evaluate import pool
workers = pool.start("process", 1, load_config(overrides={"model": "expert"}, environ={}), os.getcwd(),
                     [("hotel-reservation", 7)] if sys.argv[1] == "twin" else [])
try:
    held = "__import__('aoi.env.twin_backend').env.twin_backend.base_twin.cache_info().currsize"
    print(json.dumps(workers.submit(eval, held).result(timeout=300)))
finally:
    workers.shutdown()
"""


def twins_in_a_new_worker(tmp_path, twins: str) -> int:
    done = subprocess.run([sys.executable, "-c", SCRIPT, twins], cwd=tmp_path, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_workers_start_with_the_base_twins_of_the_run_built(tmp_path):
    assert twins_in_a_new_worker(tmp_path, "none") == 0
    assert twins_in_a_new_worker(tmp_path, "twin") == 1


def test_the_twins_are_named_to_the_server_by_app_and_seed():
    assert pool.twins_spec([("hotel-reservation", 0), ("astronomy-shop", 12)]) == \
        "hotel-reservation@0,astronomy-shop@12"
    assert pool.twins_spec([]) == ""


# A fresh process limited to two cores starts N workers; each of 6 overlapping jobs reports its worker's pid and cores.
PINNING = """
import json, os, sys
from aoi.config import load_config
from aoi.evaluate import pool
os.sched_setaffinity(0, set(json.loads(sys.argv[2])))
workers = pool.start("process", int(sys.argv[1]), load_config(overrides={"model": "expert"}, environ={}), os.getcwd())
try:
    report = ("__import__('time').sleep(0.5) or "
              "(__import__('os').getpid(), sorted(__import__('os').sched_getaffinity(0)))")
    jobs = [workers.submit(eval, report) for _ in range(6)]
    print(json.dumps(dict(job.result(timeout=300) for job in jobs)))
finally:
    workers.shutdown()
"""


def cores_of_workers(tmp_path, workers: int, cores: list[int]) -> list[list[int]]:
    done = subprocess.run([sys.executable, "-c", PINNING, str(workers), json.dumps(cores)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return sorted(json.loads(done.stdout.splitlines()[-1]).values())


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two cores")
def test_one_worker_per_core_pins_each_to_its_own_and_fewer_are_not_pinned(tmp_path):
    two = sorted(os.sched_getaffinity(0))[:2]
    assert cores_of_workers(tmp_path, 2, two) == [[two[0]], [two[1]]]
    assert cores_of_workers(tmp_path, 1, two) == [two]
