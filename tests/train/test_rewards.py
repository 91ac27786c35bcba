"""Rewards come from real episodes in the twin and score the sampled decision's own outcome: on the same recorded
state, a fixing decision beats one that is not, a probe that surfaces the cause beats one that does not, and a
submission scores its answer."""

from __future__ import annotations

import json

import pytest

from aoi.train.dataset import load_view
from aoi.train.rewards import DEFAULT_WEIGHTS, reward_functions
from aoi.train.rollouts import OutcomeCache, ReplayMismatch, State, play_decision

from .conftest import LOCALIZATION, MITIGATION


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


def _scores(row: dict, decisions: list[str]) -> tuple[dict, list[float]]:
    """Return each reward term's scores and the weighted totals of decisions played at the row's state."""
    funcs, weights = reward_functions(OutcomeCache(), DEFAULT_WEIGHTS)
    n = len(decisions)
    columns = {key: [row[key]] * n for key in ("problem_id", "target", "seed", "prefix", "decision_index")}
    completions = [[{"role": "assistant", "content": text}] for text in decisions]
    scores = {f.__name__: f([row["prompt"]] * n, completions, **columns) for f in funcs}
    return scores, [sum(w * scores[f.__name__][i] for f, w in zip(funcs, weights)) for i in range(n)]


def test_a_probe_earns_what_it_surfaced_and_a_submission_its_answer(compact_dataset):
    rows = load_view(compact_dataset, "rl", "by_target", "train")
    start = next(row for row in rows if row["problem_id"] == LOCALIZATION and row["decision_index"] == 0)
    expert = load_view(compact_dataset, "sft/observer", "by_target", "train")["completion"][0][0]["content"]
    namespace = "test-hotel-reservation"
    decisions = [expert,  # the survey: its report names the faulty component
                 json.dumps({"next": "probe", "instruction": f"Check the Services of namespace {namespace}"}),
                 json.dumps({"next": "submit", "answer": ["geo"]}),
                 json.dumps({"next": "submit", "answer": ["user"]}),
                 "not a decision"]
    assert json.loads(expert)["next"] == "probe" and "phase" not in json.loads(expert)  # compact teacher data
    scores, total = _scores(start, decisions)
    assert scores["evidence"] == [1.0, 0.0, 0.0, 0.0, 0.0]
    # The free expert continuation would have solved the task after either probe; the Finisher answers from what
    # the probe surfaced, so only the survey leads to the right answer.
    assert scores["success"] == [1.0, 0.0, 0.0, 1.0, 0.0] and scores["format"] == [1.0] * 4 + [0.0]
    assert total[0] > total[1] and total[3] > total[2] > total[4] and len(set(total)) >= 4


def test_the_finisher_may_verify_a_fix_but_not_investigate(dataset):
    row = execute_row(dataset)
    outcome = play_decision(State.from_row(row), row["expert"], expect=row["prompt"])
    assert outcome.success and outcome.strict and outcome.evidence == 0.0  # an execution earns no evidence
