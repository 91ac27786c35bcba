"""The Gymnasium shape: reset(seed, options) -> (observation, info), `with` closes, the budget is a wrapper."""

from __future__ import annotations

import pytest

from aoi.env import ENV_VERSION, Env, StepLimit, make, shell
from aoi.problems import solutions
from aoi.protocols import Backend

NEXT = "Please take the next action"  # AIOpsLab's orchestrator appends it to every observation but the last
PORT_ID = "k8s_target_port-misconfig-detection-1"
LOOK = solutions.shell("kubectl get pods -n test-social-network")


def test_reset_returns_the_task_and_what_callers_need(tmp_path):
    with make(PORT_ID, seed=2, workdir=tmp_path) as env:
        task, info = env.reset()
        assert isinstance(env.backend, Backend)
        assert task.startswith(env.description) and "Available actions" in task
        assert info == {"problem_id": PORT_ID, "task_type": "detection", "app": "social-network",
                        "namespace": "test-social-network", "family": "k8s_target_port_misconfig",
                        "target": "user-service", "seed": 2, "backend": "twin", "env_version": ENV_VERSION,
                        "description": env.description, "max_steps": 30}
        _, info = env.reset(seed=5, options={"target": "media-service"})
        assert (info["seed"], info["target"], env.problem.target, env.seed) == (5, "media-service", "media-service", 5)
        with pytest.raises(ValueError, match="unknown reset option"):
            env.reset(options={"traget": "media-service"})


def test_the_with_block_closes_the_episode_and_its_folder():
    with make(PORT_ID) as env:
        env.reset()
        folder = env.workdir
        assert folder.is_dir()
    assert not folder.exists() and env.backend.server is None


def test_the_budget_is_a_wrapper_that_truncates_and_judges(tmp_path):
    env = make(PORT_ID, max_steps=2, workdir=tmp_path)
    assert isinstance(env, StepLimit) and isinstance(env.unwrapped, Env) and not hasattr(env.unwrapped, "max_steps")
    with env:
        env.reset()
        first = env.step(LOOK)
        assert first[0].endswith(f"\n{NEXT}") and first[2:4] == (False, False) and (env.steps, env.done) == (1, False)
        observation, reward, terminated, truncated, info = env.step(LOOK)
        assert (terminated, truncated, reward, env.done) == (False, True, 0.0, True)
        assert not observation.endswith(NEXT) and info["results"]["Detection Accuracy"] == "Invalid Format"
        assert env.results is info["results"]
        with pytest.raises(RuntimeError, match="reset"):
            env.step(LOOK)


def test_the_bare_env_never_truncates(tmp_path):
    with make(PORT_ID, max_steps=1, workdir=tmp_path) as env:
        env.reset()
        bare = env.unwrapped
        for _ in range(3):
            observation, _, terminated, truncated, _ = bare.step(LOOK)
            assert not (terminated or truncated or observation.endswith(NEXT))
        assert bare.step(solutions.answer(bare.problem))[1:4] == (1.0, True, False) and bare.done
    with pytest.raises(ValueError, match="max_steps must be at least 1"):
        make(PORT_ID, max_steps=0)


def test_the_wrapper_reads_and_sets_the_envs_attributes(tmp_path):
    with make(PORT_ID, workdir=tmp_path) as env:
        env.seconds_per_step = 0.0
        env.max_steps = 5
        assert env.unwrapped.seconds_per_step == 0.0 and env.max_steps == 5 and "seconds_per_step" not in vars(env)


def test_step_info_says_what_the_action_gave_as_data(tmp_path, monkeypatch):
    """refused, exit_status, cut and accepted travel beside the observation, and `suffix` is exactly what the budget
    appended: no caller reads a status back from the text."""
    def facts(action: str, role: str | None = None) -> tuple[str, dict]:
        observation, _, _, _, info = env.step(action, role=role)
        assert observation.endswith(info["suffix"])
        return observation, {key: info[key] for key in ("refused", "exit_status", "cut", "accepted", "suffix")}

    with make(PORT_ID, seed=2, workdir=tmp_path) as env:
        env.reset()
        look, info = facts(LOOK, "probe")
        assert info == {"refused": False, "exit_status": 0, "cut": None, "accepted": None, "suffix": f"\n{NEXT}"}
        assert look.startswith("NAME") and look.count(NEXT) == 1
        refused, info = facts(solutions.shell("kubectl delete pod --all -n test-social-network"), "probe")
        assert refused.startswith("Error: Forbidden") and (info["refused"], info["exit_status"]) == (True, None)
        failed, info = facts(solutions.shell("kubectl get pod nowhere -n test-social-network"), "probe")
        assert failed.startswith("[ERROR]") and (info["refused"], info["exit_status"]) == (False, 1)
        monkeypatch.setattr(shell, "MAX_OUTPUT", 100)  # the pod list is longer: the env ends the command
        cut, info = facts(LOOK, "probe")
        assert cut.startswith("Error: the command printed")
        assert (info["refused"], info["exit_status"], info["cut"]) == (False, None, "output_limit")
        assert facts(solutions.action("get_logs", "test-social-network", "user-service"))[1]["exit_status"] is None
        assert facts(solutions.action("submit", 1, 2))[1]["accepted"] is False
        assert facts(solutions.action("submit", "Yes"))[1] == {"refused": False, "exit_status": None, "cut": None,
                                                              "accepted": True, "suffix": ""}
