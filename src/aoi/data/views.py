"""Training rows from trajectories: the SFT view (each model call of a role: messages -> its decision) and the RL
view (each Observer decision, with the earlier decisions that replay the episode up to it).

The twin is deterministic, so the state before the Observer's decision i is restored exactly by running the episode
again with the same problem, target and seed, the same fixed Probe/Executor, and the Observer's decisions 0..i-1
(`prefix`). A failed model call has no text to replay, so an episode's RL rows stop at its first one.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator

from aoi.protocols import Role, Status
from aoi.trajectory import Step, Trajectory

OBSERVER = Role.OBSERVER.value
KEEP = (Status.OK, Status.ERROR)  # statuses of decisions worth imitating (ERROR: the tool failed on a well-formed call)


def problem_key(problem_id: str, target: str | None) -> str:
    """Return the key splits use for a problem aimed at a target.

    Example:
        >>> problem_key("revoke_auth_mongodb-localization-1", "mongodb-rate"), problem_key("noop_detection_x-1", None)
        ('revoke_auth_mongodb-localization-1@mongodb-rate', 'noop_detection_x-1@')
    """
    return f"{problem_id}@{target or ''}"


@functools.cache
def app_of(problem_id: str) -> str:
    """Return the app a problem id runs on ("" for an id the registry does not know)."""
    from aoi.problems import make

    try:
        return make(problem_id).app
    except ValueError:
        return ""


def _text(value) -> str:
    """Return a str Enum's value, or the value as text."""
    value = getattr(value, "value", value)
    return value if isinstance(value, str) else json.dumps(value, default=str)


def chat(messages: list[dict]) -> list[dict]:
    """Return messages as plain {role, content} strings (the columns every chat template reads).

    Example:
        >>> chat([{"role": "user", "content": "hi", "name": "x"}])
        [{'role': 'user', 'content': 'hi'}]
    """
    return [{"role": _text(m.get("role", "")), "content": _text(m.get("content") or "")} for m in messages]


def model_calls(traj: Trajectory, role: str) -> Iterator[tuple[int, Step]]:
    """Yield (index among the role's model calls, step) for each step of `role` that sent messages to a model."""
    calls = (step for step in traj.steps if step.role == role and step.messages)
    yield from enumerate(calls)


def episode_fields(traj: Trajectory) -> dict:
    """Return the columns every row of an episode shares."""
    return {"problem_id": traj.problem_id, "task_type": traj.task_type, "family": traj.family,
            "app": app_of(traj.problem_id), "target": traj.target or "", "seed": traj.seed,
            "env_version": traj.env_version}  # a prefix replays the state only under the version that recorded it


def _outcome(traj: Trajectory) -> dict:
    """Return the episode's verdicts and id (columns of both views)."""
    from aoi.store.signals import episode_signals

    signals = episode_signals(traj)
    return {"success": signals["success"], "strict_success": signals["strict_success"], "trajectory_id": traj.id}


def sft_rows(traj: Trajectory) -> list[dict]:
    """Return one SFT row per clean model call (status in KEEP, text not empty) of every role, in step order; a JSON
    reply is the target in the form a local model can write (`as_written_locally`)."""
    shared, rows = {**episode_fields(traj), **_outcome(traj)}, []
    for role in dict.fromkeys(_text(step.role) for step in traj.steps):
        for index, step in model_calls(traj, role):
            if step.status in KEEP and step.text.strip():
                reply = [{"role": "assistant", "content": as_written_locally(step.text)}]
                rows.append({"prompt": chat(step.messages), "completion": reply, "role": role, **shared,
                             "decision_index": index})
    return rows


def as_written_locally(text: str) -> str:
    """Return a JSON reply without whitespace between its tokens, else the text as it is.

    A local model on vLLM writes its JSON under a grammar that allows no whitespace outside strings (the managed
    server's `disable_any_whitespace`: aoi.models.vllm_launch), so that is the form it must learn. The teachers
    write `json.dumps`'s ", " and ": "; a model trained on those, made to skip the space, wrote `"}{"` as its every
    instruction (the second default run of benchmarks/learning.py, docs/training.md).

    Example:
        >>> as_written_locally('{"next": "probe", "instruction": "list pods: all, then events"}')
        '{"next":"probe","instruction":"list pods: all, then events"}'
        >>> as_written_locally("The pods are healthy."), as_written_locally('[1, 2]')
        ('The pods are healthy.', '[1, 2]')
    """
    try:
        value = json.loads(text)
    except ValueError:
        return text
    return json.dumps(value, separators=(",", ":")) if isinstance(value, dict) else text


def replayable(traj: Trajectory) -> list[Step]:
    """Return the Observer's model calls up to its first failed one (no text to replay)."""
    decisions = []
    for _, step in model_calls(traj, OBSERVER):
        if not step.text and step.status == Status.ERROR:
            break
        decisions.append(step)
    return decisions


def rl_rows(traj: Trajectory) -> list[dict]:
    """Return one RL row per replayable Observer decision: its messages, the prefix that restores its state, and
    the decision taken there (`completion`, a reference, not a target: rewards come from rollouts)."""
    decisions, shared = replayable(traj), {**episode_fields(traj), **_outcome(traj)}
    return [{"prompt": chat(step.messages), "prefix": [d.text for d in decisions[:index]], "decision_index": index,
             "completion": [{"role": "assistant", "content": step.text}], **shared}
            for index, step in enumerate(decisions)]
