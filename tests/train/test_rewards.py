"""Rewards come from real episodes in the twin: on the same recorded state, a fixing decision beats one that is not."""

from __future__ import annotations

import json

import pytest

from aoi.train.dataset import load_view
from aoi.train.rewards import DEFAULT_WEIGHTS, reward_functions
from aoi.train.rollouts import OutcomeCache, ReplayMismatch, State, play_decision

from .conftest import MITIGATION


def execute_row(dataset) -> dict:
    """Return the recorded state where the expert Observer sends the Executor to fix the fault."""
    rows = load_view(dataset, "rl", "by_target", "train")
    for row, completion in zip(rows, load_view(dataset, "sft/observer", "by_target", "train")["completion"]):
        if row["problem_id"] == MITIGATION and json.loads(completion[0]["content"])["next"] == "execute":
            return row | {"expert": completion[0]["content"]}
    raise AssertionError("the expert never decided to execute on the mitigation problem")


def test_the_fixing_decision_scores_higher_on_the_same_state(dataset):
    row = execute_row(dataset)
    submit_now = json.dumps({"phase": "submit", "next": "submit", "answer": None})
    funcs, weights = reward_functions(OutcomeCache(), DEFAULT_WEIGHTS)
    columns = {key: [row[key]] * 2 for key in ("problem_id", "target", "seed", "prefix", "decision_index")}
    completions = [[{"role": "assistant", "content": row["expert"]}], [{"role": "assistant", "content": submit_now}]]
    scores = {f.__name__: f([row["prompt"]] * 2, completions, **columns) for f in funcs}
    assert scores["success"] == [1.0, 0.0] and scores["strict"] == [1.0, 0.0]
    assert scores["format"] == [1.0, 1.0] and scores["efficiency"][0] > 0 == scores["efficiency"][1]
    total = [sum(w * scores[f.__name__][i] for f, w in zip(funcs, weights)) for i in range(2)]
    assert total[0] > total[1]


def test_a_prefix_that_does_not_replay_to_its_prompt_is_refused(dataset):
    row = execute_row(dataset)
    wrong_prompt = [{"role": "system", "content": "another state"}]
    with pytest.raises(ReplayMismatch, match="did not reproduce its recorded prompt"):
        play_decision(State.from_row(row), row["expert"], expect=wrong_prompt)


def test_unknown_reward_names_are_refused():
    with pytest.raises(ValueError, match="unknown reward 'speed'"):
        reward_functions(OutcomeCache(), {"speed": 1.0})
