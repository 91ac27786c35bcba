"""Rewards come from real episodes in the twin and score the sampled decision's own outcome: on the same recorded
state, a fixing decision beats one that is not, a probe that surfaces the cause beats one that does not, and a
submission scores its answer. The rollout plays the decisions; the reward functions only read the outcomes."""

from __future__ import annotations

import json

import pytest

from aoi.models.compact import STANDARD
from aoi.models.replay import ReplayModel
from aoi.protocols import FatalEpisodeError
from aoi.train.dataset import load_view
from aoi.train.decisions import decision_rollout
from aoi.train.rewards import DEFAULT_WEIGHTS, reward_functions, term_values, weighted
from aoi.train.rollouts import OutcomeCache, ReplayMismatch, State, play, play_decision

from .conftest import LOCALIZATION, MITIGATION


def execute_row(dataset) -> dict:
    """Return the recorded state where the expert Observer sends the Executor to fix the fault."""
    rows = load_view(dataset, "rl", "by_target", "train")
    for row, completion in zip(rows, load_view(dataset, "sft/observer", "by_target", "train")["completion"]):
        if row["problem_id"] == MITIGATION and json.loads(completion[0]["content"])["next"] == "execute":
            return row | {"expert": completion[0]["content"]}
    raise AssertionError("the expert never decided to execute on the mitigation problem")


class Texts:
    """A tokenizer whose token i is the i-th text: completion [i] decodes to texts[i]."""

    def __init__(self, texts: list[str]):
        self.texts = texts

    def batch_decode(self, ids: list[list[int]], skip_special_tokens: bool) -> list[str]:
        return [self.texts[i] for [i] in ids]


class Trainer:
    """What the rollout reads of TRL's trainer: the batch's rows and the tokenizer."""

    def __init__(self, rows: list[dict], texts: list[str]):
        self.batch_rows, self.processing_class = rows, Texts(texts)


def rollout(rows: list[dict], decisions: list[str], cache: OutcomeCache | None = None) -> dict:
    """Play each decision at its row's state as GRPO's per-decision rollout_func does; return its answer."""
    def draw(prompts, trainer) -> dict:
        return {"prompt_ids": [[0]] * len(prompts), "completion_ids": [[i] for i in range(len(prompts))],
                "logprobs": [None] * len(prompts)}

    prompts = [row["prompt"] for row in rows]
    return decision_rollout(draw, cache or OutcomeCache())(prompts, Trainer(rows, decisions))


def _scores(row: dict, decisions: list[str]) -> tuple[dict, list[float]]:
    """Return each reward term's scores and the weighted totals of decisions played at the row's state."""
    funcs, weights = reward_functions(DEFAULT_WEIGHTS)
    out = rollout([row] * len(decisions), decisions)
    completions = [[{"role": "assistant", "content": text}] for text in decisions]
    scores = {f.__name__: f([row["prompt"]] * len(decisions), completions, outcome=out["outcome"]) for f in funcs}
    return scores, [sum(w * scores[f.__name__][i] for f, w in zip(funcs, weights)) for i in range(len(decisions))]


def test_the_fixing_decision_scores_higher_on_the_same_state(dataset):
    row = execute_row(dataset)
    submit_now = json.dumps({"phase": "submit", "next": "submit", "answer": None})
    scores, total = _scores(row, [row["expert"], submit_now])
    assert scores["success"] == [1.0, 0.0] and scores["strict"] == [1.0, 0.0]
    assert scores["format"] == [1.0, 1.0] and scores["efficiency"][0] > 0 == scores["efficiency"][1]
    assert total[0] > total[1]


def test_the_rollout_plays_each_distinct_decision_once_and_hands_on_what_it_drew(dataset):
    row, cache = execute_row(dataset), OutcomeCache()
    out = rollout([row] * 3, [row["expert"], row["expert"], "not a decision"], cache)
    assert out["completion_ids"] == [[0], [1], [2]] and len(out["outcome"]) == 3
    assert out["outcome"][0] is out["outcome"][1] and out["outcome"][2].decisions == ("not a decision",)
    assert cache.played == 2


def first_prompt(problem_id: str, target: str) -> list[dict]:
    """Return the Observer's first prompt of an episode (as a dataset row records it)."""
    model = ReplayModel([("observer", json.dumps({"phase": "submit", "next": "submit", "answer": []}))])
    play(State(problem_id=problem_id, target=target), model, decision_format=STANDARD)
    return model.requests[0][1]


def test_rows_that_share_a_prompt_are_each_played_at_their_own_state():
    problem_id, targets = "k8s_target_port-misconfig-localization-1", ("compose-post-service", "home-timeline-service")
    prompt = first_prompt(problem_id, targets[0])
    assert first_prompt(problem_id, targets[1]) == prompt  # nothing in the prompt says which target it is
    rows = [{"prompt": prompt, "problem_id": problem_id, "target": target, "seed": 0, "prefix": "[]",
             "decision_index": 0} for target in targets]
    answer = json.dumps({"phase": "submit", "next": "submit", "answer": [targets[0]]})
    outcomes = rollout(rows, [answer, answer])["outcome"]
    assert [o.success for o in outcomes] == [True, False]  # right at the first target's state only


def test_a_prefix_that_does_not_replay_to_its_prompt_is_refused(dataset):
    row = execute_row(dataset)
    wrong_prompt = [{"role": "system", "content": "another state"}]
    with pytest.raises(ReplayMismatch, match="seed 0: replaying the dataset's prefix did not reproduce") as caught:
        play_decision(State.from_row(row), row["expert"], expect=wrong_prompt)
    assert isinstance(caught.value, FatalEpisodeError)  # run_episode re-raised it: no string to recognise


def test_a_rollout_handed_prompts_of_other_rows_is_refused(dataset):
    row = execute_row(dataset)
    with pytest.raises(RuntimeError, match="not the rows the trainer kept"):
        decision_rollout(lambda prompts, trainer: {}, OutcomeCache())([[{"role": "user", "content": "x"}]],
                                                                      Trainer([row], ["{}"]))


def test_unknown_reward_names_are_refused():
    with pytest.raises(ValueError, match="unknown reward 'speed'"):
        reward_functions({"speed": 1.0})
    with pytest.raises(ValueError, match="unknown reward 'speed'"):
        weighted({"success": 1.0}, {"speed": 1.0})


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
    assert scores["evidence"] == [1.0, 0.0, 0.0, 1.0, 0.0]  # the survey's report named it; the right answer
    # The free expert continuation would have solved the task after either probe; the Finisher answers from what
    # the probe surfaced, so only the survey leads to the right answer.
    assert scores["success"] == [1.0, 0.0, 0.0, 1.0, 0.0] and scores["format"] == [1.0] * 4 + [0.0]
    # the right answer at once scores above the probe after which the Finisher gives it
    assert total[3] > total[0] > total[1] and total[3] > total[2] > total[4] and len(set(total)) >= 4
    assert scores["efficiency"] == [0.8333, 0.0, 0.0, 0.9667, 0.0]
    assert total == pytest.approx([3.16666, 0.2, 0.2, 3.19334, 0.0], abs=1e-9)


def test_echo_weights_a_sample_as_trl_does(compact_dataset):
    rows = load_view(compact_dataset, "rl", "by_target", "train")
    start = next(row for row in rows if row["problem_id"] == LOCALIZATION and row["decision_index"] == 0)
    decisions = [json.dumps({"next": "submit", "answer": ["user"]}), "not a decision"]
    scores, total = _scores(start, decisions)
    outcomes = rollout([start] * 2, decisions)["outcome"]
    assert [weighted(term_values(o), DEFAULT_WEIGHTS) for o in outcomes] == total


def test_the_finisher_may_verify_a_fix_but_not_investigate(dataset):
    row = execute_row(dataset)
    outcome = play_decision(State.from_row(row), row["expert"], expect=row["prompt"])
    assert outcome.success and outcome.strict and outcome.evidence == 1.0  # a fix that worked earns it
