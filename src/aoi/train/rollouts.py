"""Rollouts in the twin: restore a recorded state by replaying its Observer prefix, play a decision, get the outcome.

Episodes are deterministic by seed, so replaying the Observer's earlier decisions (the dataset's `prefix`) with the
expert Probe/Executor brings the episode back to exactly the recorded state (in the decision format the state was
recorded in); the sampled decision is played there and the `Finisher` (aoi.train.finisher: the expert, forbidden to
investigate further) ends the episode, so the outcome is the decision's own: the verdict on its answer, on its fix,
or on what its probe surfaced, plus `evidence`: whether that probe's report named the faulty component, or for any
other decision whether it succeeded itself (so a right answer never scores below probing again for it). A decision
that does not parse is not played. Verdicts are the environment's own (AIOpsLab's results and the strict oracle).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from aoi.agents.actions import FormatError, extract_json
from aoi.agents.observer import NEXT_STEPS
from aoi.models.base import Completion, Message, Model
from aoi.models.compact import STANDARD, prompt_format
from aoi.models.replay import ReplayModel
from aoi.protocols import FatalEpisodeError
from aoi.tasks import succeeded, task
from aoi.train.finisher import Finisher, surfaced

TEAM = ("probe", "executor", "compressor")
UNSAFE = ("refused", "approval_denied")  # step statuses (aoi.protocols.Status) of commands turned down


@dataclass(frozen=True, kw_only=True)
class State:
    """A recorded Observer state: the episode (problem, target, seed) and the decisions that led there."""

    problem_id: str
    target: str | None = None
    seed: int = 0
    prefix: tuple[str, ...] = ()

    @classmethod
    def from_row(cls, row: dict) -> State:
        """Read a state from a dataset row (`prefix` is a JSON list of decision texts, or a list).

        Example:
            >>> State.from_row({"problem_id": "p", "target": "", "seed": 3, "prefix": '["a"]'}).prefix
            ('a',)
        """
        prefix = row.get("prefix") or []
        prefix = json.loads(prefix) if isinstance(prefix, str) else prefix
        return cls(problem_id=row["problem_id"], target=row.get("target") or None, seed=int(row.get("seed") or 0),
                   prefix=tuple(prefix))


@dataclass(frozen=True, kw_only=True)
class Outcome:
    """What an episode ended with, as the rewards read it."""

    task_type: str
    results: dict
    success: bool
    strict: bool
    steps: int
    max_steps: int
    sim_seconds: float
    unsafe: int  # commands refused or denied
    decisions: tuple[str, ...] = ()  # the policy's Observer decisions (one in per-decision rollouts)
    evidence: float = 0.0  # per decision: a probe whose report named a faulty component, or a decision that succeeded
    error: str | None = None
    extra: dict = field(default_factory=dict)


def valid_decision(text: str) -> bool:
    """Return whether a text parses as an Observer decision (a JSON object whose "next" is known).

    Example:
        >>> valid_decision('{"next": "submit", "answer": "Yes"}'), valid_decision("submit now")
        (True, False)
    """
    try:
        return extract_json(text).get("next") in NEXT_STEPS
    except (FormatError, AttributeError):
        return False


class ReplayMismatch(FatalEpisodeError):
    """Replaying a recorded prefix did not bring back the recorded state: the outcome would belong to another state.

    A FatalEpisodeError, so run_episode re-raises it (not a ModelError: the loop must not retry).
    """


class ScriptedObserver:
    """The Observer as a rollout plays it: scripted decisions first (a ReplayModel), then the continuation."""

    def __init__(self, scripted: list[str], continuation: Model, expect: list[Message] | None = None):
        self.script = ReplayModel([("observer", text) for text in scripted], name="prefix")
        self.continuation, self.expect, self.name = continuation, expect, "scripted-observer"
        self.checked = expect is None

    def complete(self, messages: list[Message], *, role: str, max_tokens: int | None = None,
                 temperature: float | None = None, schema: dict | None = None, context: Any = None) -> Completion:
        """Answer from the script while it lasts, then from the continuation policy."""
        if self.script.remaining:
            if self.script.remaining == 1 and not self.checked:
                self._check(messages)
            return self.script.complete(messages, role=role)
        return self.continuation.complete(messages, role=role, max_tokens=max_tokens, temperature=temperature,
                                          schema=schema, context=context)

    def _check(self, messages: list[Message]) -> None:
        """Fail when the replayed prefix did not bring back the state the decision was sampled for."""
        self.checked = True
        if [m.get("content") for m in messages] != [m.get("content") for m in self.expect]:
            raise ReplayMismatch("replaying the dataset's prefix did not reproduce its recorded prompt (the "
                                 "environment or agents changed since export?); re-export the dataset with this code")


def team(observer: Model, expert: Model | None = None) -> dict[str, Model]:
    """Return the models of a rollout: the given Observer with the expert Probe, Executor and Compressor."""
    if expert is None:
        from aoi.models.expert import ExpertModel

        expert = ExpertModel()
    return {"observer": observer, **dict.fromkeys(TEAM, expert)}


def play(state: State, observer: Model, *, max_steps: int = 30, max_iterations: int | None = None,
         decision_format: str = "auto") -> Outcome:
    """Run one episode of the state's problem with the given Observer and the expert team; return its outcome.

    `max_iterations` caps the Observer's decisions (None: the configured default); the prompts name the cap, so a
    replayed prefix only reproduces its recorded state under the cap it was recorded with, and in the decision
    format (`agent.decision_format`) it was recorded in.

    Example:
        >>> from aoi.models.expert import ExpertModel
        >>> outcome = play(State(problem_id="scale_pod_zero_social_net-mitigation-1"), ExpertModel())  # doctest: +SKIP
        >>> outcome.success, outcome.strict  # doctest: +SKIP
        (True, True)
    """
    from aoi.agents.runtime import run_episode
    from aoi.config import load_config
    from aoi.env import make

    overrides = {"model": "expert", "env": {"seed": state.seed, "max_steps": max_steps},
                 "agent": {"decision_format": decision_format}}
    if max_iterations is not None:
        overrides["agent"]["max_iterations"] = max_iterations
    config = load_config(overrides=overrides, environ={})
    env = make(state.problem_id, seed=state.seed, target=state.target, max_steps=max_steps)
    try:
        traj = run_episode(env, config, team(observer))
    except ReplayMismatch as exc:
        raise ReplayMismatch(f"{state.problem_id} seed {state.seed}: {exc}") from None
    finally:
        env.close()
    return outcome_of(traj, max_steps)


def outcome_of(traj, max_steps: int) -> Outcome:
    """Summarise a trajectory as the rewards read it (an episode that was never judged counts as failed)."""
    results = traj.results or {}
    success = succeeded(results)
    seconds = float(results.get(task(traj.task_type).time_key) or 0.0)
    return Outcome(task_type=traj.task_type, results=results, success=success, strict=bool(traj.strict_success),
                   steps=int(results.get("steps", max_steps)), max_steps=max_steps, sim_seconds=seconds,
                   unsafe=sum(step.status in UNSAFE for step in traj.steps), error=traj.error)


def play_decision(state: State, decision: str, *, continuation: Model | None = None,
                  expect: list[Message] | None = None, max_steps: int = 30) -> Outcome:
    """Restore the state, play `decision` as the Observer's next one, and let the Finisher end the episode.

    `expect` is the prompt the decision was sampled for: the replay checks it came back exactly, and its format
    (standard or compact) is the one the episode is replayed in. `continuation` replaces the Finisher (tests).
    """
    if not valid_decision(decision):
        return _unplayed(state, decision, max_steps)
    finisher = continuation or Finisher()
    observer = ScriptedObserver([*state.prefix, decision], finisher, expect)
    outcome = play(state, observer, max_steps=max_steps,
                   decision_format=prompt_format(expect) if expect else STANDARD)
    # a probe: did its report name the cause; any other decision: did it end the episode rightly itself (a right
    # answer had its evidence in hand; without this term a right submission scored below a probe after which the
    # Finisher submitted the same answer, and GRPO learned to put off submitting)
    probe = extract_json(decision).get("next") == "probe"
    evidence = _evidence(state, finisher) if probe else float(outcome.success)
    return Outcome(**{**outcome.__dict__, "decisions": (decision,), "evidence": evidence})


def _unplayed(state: State, decision: str, max_steps: int) -> Outcome:
    """Return the outcome of a decision that does not parse: nothing played, nothing won (the format term says why)."""
    from aoi.problems.registry import make

    task_type = make(state.problem_id, state.target).task_type
    return Outcome(task_type=task_type, results={}, success=False, strict=False, steps=0, max_steps=max_steps,
                   sim_seconds=0.0, unsafe=0, decisions=(decision,))


def _evidence(state: State, finisher: Model) -> float:
    """Return whether the sampled probe's report (in the first prompt after it) named a faulty component."""
    from aoi.problems.registry import make

    contexts = getattr(finisher, "contexts", None)
    if not contexts:  # the episode ended with the decision (its last iteration, or no steps left)
        return 0.0
    answers = make(state.problem_id, state.target).answers
    names = answers.localization if answers.detection == "Yes" else ()
    return surfaced(contexts[0], names)


class OutcomeCache:
    """Outcomes by (state, decision): a decision drawn again at the same state reuses its episode, played once."""

    def __init__(self, max_steps: int = 30):
        self.max_steps, self.played = max_steps, 0
        self.outcomes: dict[tuple[State, str], Outcome] = {}

    def decision(self, row: dict, decision: str, expect: list[Message] | None = None) -> Outcome:
        """Return the outcome of playing `decision` at the row's state (played on first use)."""
        state = State.from_row(row)
        key = (state, decision)
        if key not in self.outcomes:
            self.played += 1
            self.outcomes[key] = play_decision(state, decision, expect=expect, max_steps=self.max_steps)
        return self.outcomes[key]
