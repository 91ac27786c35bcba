"""Process workers are forked from a server that has imported their code and built the run's base twins."""

from __future__ import annotations

import json
import subprocess
import sys

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
