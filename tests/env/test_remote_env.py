"""RemoteEnv and Env are interchangeable: the same team, seed and problem give the same trajectory either way."""

from __future__ import annotations

import json
import re
import threading
import time

import pytest
import uvicorn

from aoi.agents.runtime import models_from_config, run_episode
from aoi.config import RunConfig
from aoi.env import ENV_VERSION, make
from aoi.env.client import EnvClient
from aoi.env.server import bind, create_app
from aoi.protocols import Env

TOKEN = "remote-token-" + "x" * 16
PROBLEM = "k8s_target_port-misconfig-localization-1"
TIMING = {"TTD", "TTL", "TTA", "TTM", "wall_seconds"}


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """Serve the environment on a free port; yield (url, the folder holding each session's files)."""
    folder = tmp_path_factory.mktemp("sessions")
    sock = bind(0)
    server = uvicorn.Server(uvicorn.Config(create_app(TOKEN, max_sessions=2, workdir=folder), log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    yield f"http://127.0.0.1:{sock.getsockname()[1]}", folder
    server.should_exit = True
    thread.join(10)
    sock.close()


def played(env, workdir: str) -> str:
    """Run the expert team on an env; return its trajectory as JSON, episode folder (a regex) and timings masked."""
    config = RunConfig(model="expert")
    config.env.seed = 3
    traj = run_episode(env, config, models_from_config(config))
    steps = [[str(s.role), s.text, s.action, s.observation, s.input_tokens, s.output_tokens] for s in traj.steps]
    results = {k: v for k, v in (traj.results or {}).items() if k not in TIMING}
    record = [steps, traj.submission, results, traj.error, traj.env_version, traj.problem_id, traj.target]
    return re.sub(workdir, "<WORKDIR>", json.dumps(record, default=str))


def test_run_episode_gives_the_same_trajectory_remotely(served, tmp_path):
    url, sessions = served
    with make(PROBLEM, seed=3, workdir=tmp_path / "local") as local:
        assert isinstance(local, Env)
        here = played(local, re.escape(str(tmp_path / "local")))
    with EnvClient(url, TOKEN) as client, client.make(PROBLEM, seed=3) as remote:
        assert isinstance(remote, Env)
        there = played(remote, re.escape(str(sessions)) + "/[0-9a-f]+")  # the session's folder: its id
        assert remote.done and remote.results["strict_success"] is True
    assert there == here and f'"{ENV_VERSION}"' in here


def test_remote_reset_takes_a_seed_and_a_target_and_opens_a_fresh_session(served):
    url, _ = served
    with EnvClient(url, TOKEN) as client, client.make(PROBLEM, seed=1) as remote:
        _, first = remote.reset()
        old = remote.session_id
        _, second = remote.reset(seed=4, options={"target": "compose-post-service"})
        assert (first["seed"], first["target"]) == (1, "user-service")
        assert (second["seed"], second["target"], remote.problem.target) == (4, "compose-post-service",
                                                                               "compose-post-service")
        assert remote.session_id != old and old not in [s["session_id"] for s in client.sessions()]
        with pytest.raises(ValueError, match="unknown reset option"):
            remote.reset(options={"traget": "x"})
