"""The agents on a tiny random local model: nonsense output becomes feedback and a forced submission, never a crash."""

from __future__ import annotations

import pytest

from aoi.agents.runtime import run_episode
from aoi.config import load_config
from aoi.env import make


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    pytest.importorskip("torch", reason="needs the `local` extra (torch)")
    pytest.importorskip("transformers", reason="needs the `local` extra (transformers)")
    from aoi.models.local import LocalModel
    from aoi.models.testing import save_tiny_model

    return LocalModel(str(save_tiny_model(tmp_path_factory.mktemp("tiny"))), max_new_tokens=8)


def test_an_episode_on_a_tiny_model_ends_with_a_forced_submission(tiny_model):
    config = load_config(overrides={"model": "expert", "agent.max_iterations": 3}, environ={})
    env = make("noop_detection_hotel_reservation-1")
    try:
        traj = run_episode(env, config, {role: tiny_model for role in ("observer", "probe", "executor")})
    finally:
        env.close()
    observer = [s for s in traj.steps if s.role == "observer"]
    assert [s.status for s in observer[:3]] == ["format_error"] * 3  # random text is never a valid decision
    assert observer[-1].action.startswith("```\nsubmit(")  # the last iteration still submits, in the right format
    assert traj.error is None and "Detection Accuracy" in traj.results
    assert all(s.input_tokens > 0 for s in observer[:3])  # token usage recorded per call
