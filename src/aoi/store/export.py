"""Export trajectories: AIOpsLab's result JSON (reference/aiopslab.md 1.7), JSONL, and Hugging Face `datasets`.

AIOpsLab's trace holds only what crossed the environment: for each env action an `assistant` item (the action text
sent to `env.step`) and an `env` item (its observation). A step counts as an env action when its role is one that
calls `env.step` (ENV_ROLES) and its `action` is not empty: agents record the text they sent to the environment in
`Step.action` and leave it empty for steps that did not touch it (an Observer decision to probe, a compression).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

import orjson

from aoi import protocols
from aoi.tasks import NEXT_SUFFIX, succeeded
from aoi.trajectory import Step, Trajectory

ENV_ROLES = frozenset(role for role in protocols.ENV_ROLES if role is not None)
_JSON = orjson.OPT_NON_STR_KEYS


def is_env_step(step: Step) -> bool:
    """Return whether a step was an action sent to the environment.

    Example:
        >>> is_env_step(Step(role="probe", text="...", action='exec_shell("kubectl get pods")'))
        True
        >>> is_env_step(Step(role="compressor", text="summary"))
        False
    """
    return step.role in ENV_ROLES and bool(step.action)


def aiopslab_trace(traj: Trajectory) -> list[dict]:
    """Rebuild AIOpsLab's session trace (assistant/env pairs) from the env actions of a trajectory."""
    trace = []
    for step in filter(is_env_step, traj.steps):
        observation = step.observation.removesuffix(NEXT_SUFFIX)  # AIOpsLab's trace has it not
        trace += [{"role": "assistant", "content": step.action}, {"role": "env", "content": observation}]
    return trace


def to_aiopslab_json(traj: Trajectory, agent_name: str) -> dict:
    """Return the trajectory as AIOpsLab's saved result (Session.to_dict: same keys, same order).

    Example:
        >>> sorted(to_aiopslab_json(Trajectory("p-detection-1", "detection"), "aoi"))
        ['agent', 'end_time', 'problem_id', 'results', 'session_id', 'start_time', 'trace']
    """
    return {"agent": agent_name, "session_id": traj.id, "problem_id": traj.problem_id,
            "start_time": traj.started_at, "end_time": traj.ended_at, "trace": aiopslab_trace(traj),
            "results": traj.results}


def aiopslab_filename(traj: Trajectory) -> str:
    """Return AIOpsLab's result file name, `<session_id>_<start_time>.json`.

    Example:
        >>> aiopslab_filename(Trajectory("p", "detection", id="abc", started_at=1712345678.25))
        'abc_1712345678.25.json'
    """
    return f"{traj.id}_{traj.started_at}.json"


def write_aiopslab(traj: Trajectory, folder: str | Path, agent_name: str = "aoi") -> Path:
    """Write AIOpsLab's result file for one trajectory into `folder`; return its path.

    Example:
        >>> write_aiopslab(traj, "results/")  # doctest: +SKIP
        PosixPath('results/3f2a..._1712345678.25.json')
    """
    path = Path(folder) / aiopslab_filename(traj)
    _write_atomic(path, orjson.dumps(to_aiopslab_json(traj, agent_name), default=str,
                                     option=_JSON | orjson.OPT_INDENT_2))
    return path


def to_jsonl(trajs: Iterable[Trajectory], path: str | Path) -> int:
    """Write trajectories one JSON object a line (to_dict form); return how many.

    Example:
        >>> to_jsonl(store.query(model="expert"), "runs/expert.jsonl")  # doctest: +SKIP
        87
    """
    lines = [orjson.dumps(t.to_dict(), default=str, option=_JSON) for t in trajs]
    _write_atomic(Path(path), b"".join(line + b"\n" for line in lines))
    return len(lines)


def read_jsonl(path: str | Path) -> list[Trajectory]:
    """Read trajectories written by to_jsonl, naming the line of any that is not one.

    Example:
        >>> [t.problem_id for t in read_jsonl("runs/expert.jsonl")]  # doctest: +SKIP
        ['k8s_target_port-misconfig-detection-1', ...]
    """
    trajs = []
    for number, line in enumerate(Path(path).read_bytes().splitlines(), 1):
        if not line.strip():
            continue
        try:
            trajs.append(Trajectory.from_dict(orjson.loads(line)))
        except (orjson.JSONDecodeError, TypeError) as exc:
            raise ValueError(f"{path}:{number} is not a trajectory written by to_jsonl ({exc}); "
                             f"remove or fix that line") from exc
    return trajs


def hf_row(traj: Trajectory) -> dict:
    """Return one flat, Arrow-friendly row: free-form fields (submission, results, config) as JSON text."""
    data = traj.to_dict()
    policy = data.pop("policy")
    for key in ("submission", "results", "config"):
        data[key] = orjson.dumps(data[key], default=str, option=_JSON).decode()
    return {**data, "model": policy["model"], "adapter": policy["adapter"], "version": policy["version"],
            "success": succeeded(traj.results)}


def to_hf_dataset(trajs: Iterable[Trajectory]):
    """Return the trajectories as a Hugging Face `datasets.Dataset` (one row each, steps a list of structs).

    Example:
        >>> ds = to_hf_dataset(store.query(task_type="detection"))  # doctest: +SKIP
        >>> ds.filter(lambda row: row["success"]).push_to_hub(...)  # doctest: +SKIP
    """
    try:
        import datasets
    except ImportError as exc:
        raise ImportError("to_hf_dataset needs the `datasets` package: pip install datasets (it comes with "
                          "AOI's `train` extra)") from exc
    return datasets.Dataset.from_list([hf_row(t) for t in trajs])


def _write_atomic(path: Path, payload: bytes) -> None:
    """Write a file through a temporary sibling and a rename, so readers never see half of it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
        os.chmod(tmp, 0o644)  # mkstemp makes 0600; results are ordinary files
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
