"""Reward signals: read from the episode's verdicts and its steps, the one place datasets and training get them."""

from __future__ import annotations

from aoi.store.signals import episode_signals
from aoi.trajectory import Policy, Step, Trajectory


def episode(**extra) -> Trajectory:
    steps = [Step("observer", "bad", status="format_error", messages=[{"role": "user", "content": "decide"}]),
             Step("probe", "rm", status="refused", messages=[{"role": "user", "content": "look"}]),
             Step("observer", "d1", messages=[{"role": "user", "content": "decide again"}]),
             Step("executor", "patch", status="approval_denied", messages=[{"role": "user", "content": "fix"}]),
             Step("observer", "", action='submit(["geo"])', observation="1", messages=[])]
    defaults = {"policy": Policy("expert"), "strict_success": False,
                "results": {"Localization Accuracy": 50.0, "success": False, "is_subset": True, "TTL": 90.0,
                            "steps": 7}}
    return Trajectory("revoke_auth_mongodb-localization-1", "localization", steps=steps, **{**defaults, **extra})


def test_signals_come_from_the_verdicts_and_the_steps():
    signals = episode_signals(episode())
    assert (signals["success"], signals["strict_success"], signals["partial"]) == (False, False, 0.5)
    assert (signals["ttx"], signals["env_steps"], signals["model_calls"]) == (90.0, 7, 4)
    assert (signals["format_errors"], signals["observer_format_errors"], signals["refused"]) == (1, 1, 1)
    assert signals["approval_denied"] == 1 and signals["ended_by_error"] is False


def test_an_episode_ended_by_an_error_says_so():
    signals = episode_signals(episode(error="ModelError: 401", results={}))
    assert signals["ended_by_error"] is True and signals["success"] is False and signals["ttx"] is None

