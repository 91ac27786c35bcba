"""Same problem, seed and actions: byte-identical observations and results, for every twin problem id."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from aoi.env import make
from aoi.env.telemetry import LOG_LABELS
from aoi.problems import list_problems, solutions

TWIN_IDS = [p.id for p in list_problems() if p.backend == "twin"]


def script(env) -> list[str]:
    """Look at pods, the first component's logs and the traces, then submit the right answer."""
    p = env.problem
    component = sorted(p.valid_targets)[0] if p.valid_targets else "frontend"
    service = p.target if p.target and p.fault.mechanism not in ("flagd_flag",) else component
    steps = [solutions.shell(f"kubectl get pods -n {p.namespace} -o wide"),
             solutions.action("get_logs", p.namespace, service if p.namespace in LOG_LABELS else "x"),
             solutions.action("get_traces", p.namespace, 5)]
    return steps + [solutions.answer(p)]


def transcript(problem_id: str, seed: int, workdir) -> list:
    """Play the script and return every observation and the final info."""
    env = make(problem_id, seed=seed, workdir=workdir)
    try:
        out = [env.reset()[0]]
        for text in script(env):
            obs, reward, terminated, truncated, info = env.step(text)
            info = {k: v for k, v in info.items() if k != "wall_seconds"}
            out.append([obs, reward, terminated, truncated, info])
        return out
    finally:
        env.close()


@pytest.mark.parametrize("problem_id", TWIN_IDS)
def test_same_seed_same_transcript(problem_id, tmp_path):
    first = transcript(problem_id, 3, tmp_path / "a")
    second = transcript(problem_id, 3, tmp_path / "a")
    assert json.dumps(first) == json.dumps(second)


def test_reset_seed_reseeds_like_make(tmp_path):
    with make("k8s_target_port-misconfig-detection-1", seed=1, workdir=tmp_path / "b") as env:
        env.reset(seed=2)
        look = env.step(script(env)[0])[0]
    assert look == transcript("k8s_target_port-misconfig-detection-1", 2, tmp_path / "a")[1][0]


def test_different_seed_different_names(tmp_path):
    one = transcript("k8s_target_port-misconfig-detection-1", 1, tmp_path / "a")
    two = transcript("k8s_target_port-misconfig-detection-1", 2, tmp_path / "a")
    assert one[1][0] != two[1][0]


CHILD = """
import json, sys
from aoi.twin import build_twin
twin = build_twin(["hotel-reservation"], seed=5)
pods = twin.list("pods", "test-hotel-reservation")
print(json.dumps([[p["metadata"]["name"], p["status"].get("podIP")] for p in pods] +
                 [[s["metadata"]["name"], s["spec"].get("clusterIP")] for s in twin.list("services")]))
"""


def test_determinism_holds_across_processes_and_hash_seeds():
    outputs = set()
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        done = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, env=env, check=True)
        outputs.add(done.stdout)
    assert len(outputs) == 1
