"""`export(run_dirs, out)`: trajectories of one or more runs -> SFT and RL datasets, splits.json and card.md.

Layout of `out` (the contract `aoi train` reads):
    sft/<role>/ + sft/<role>.parquet   one row per clean model call of that role (messages -> the decision)
    rl/ + rl.parquet                   one row per replayable Observer decision; decision_index 0 rows (prefix [])
                                       are the episode starts, one per (problem_id, target, seed)
    splits.json, card.md
Rows are sorted (problem key, seed, attempt, trajectory id, role, index), so the same runs give the same files.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from aoi.data.splits import Key, SplitRules, catalogue_keys, make_splits
from aoi.data.views import app_of, problem_key, rl_rows, sft_rows
from aoi.protocols import MODEL_ROLES
from aoi.trajectory import Trajectory

ROLES = tuple(role.value for role in MODEL_ROLES)  # written even when empty, so trainers find each role


def _features(kind: str):
    """Return the explicit columns of a view (empty datasets and [] prefixes keep their types)."""
    from datasets import Features, List, Value

    chat = List({"role": Value("string"), "content": Value("string")})
    shared = {"problem_id": Value("string"), "task_type": Value("string"), "family": Value("string"),
              "app": Value("string"), "target": Value("string"), "seed": Value("int64"), "success": Value("bool"),
              "strict_success": Value("bool"), "trajectory_id": Value("string"), "decision_index": Value("int64"),
              "env_version": Value("string")}
    if kind == "sft":
        return Features({"prompt": chat, "completion": chat, "role": Value("string"), **shared})
    return Features({"prompt": chat, "prefix": List(Value("string")), "completion": chat, **shared})


@dataclass
class Source:
    """One run read for export: where it is, its trajectories and what ran them."""

    path: Path
    trajectories: list[Trajectory]
    config: dict = field(default_factory=dict)
    selection: dict = field(default_factory=dict)  # generate.json of an `aoi data generate` run


def read_run(path: str | Path) -> Source:
    """Read a run directory (`aoi eval --out`, `aoi data generate --out`) or a trajectory store file.

    In a run directory only episodes recorded in results.jsonl count (others died before being recorded).
    """
    from aoi.store.sqlite import StoreError, TrajectoryStore

    path = Path(path)
    db = path / "trajectories.db" if path.is_dir() else path
    if not db.is_file():
        raise ValueError(f"no trajectory store at {db}; pass a run directory written by `aoi eval --out` or "
                         f"`aoi data generate --out`, or a .db file")
    try:
        trajs = TrajectoryStore(db).query()
    except StoreError as exc:
        raise ValueError(str(exc)) from None
    recorded = _recorded_ids(path / "results.jsonl") if path.is_dir() else None
    config, selection = (_json(path / "config.json"), _json(path / "generate.json")) if path.is_dir() else ({}, {})
    return Source(path, [t for t in trajs if recorded is None or t.id in recorded], config, selection)


def _json(path: Path) -> dict:
    """Return a JSON file's object ({} when the file is absent)."""
    return json.loads(path.read_text()) if path.is_file() else {}


def _recorded_ids(results: Path) -> set[str] | None:
    """Return the trajectory ids results.jsonl records (None when the run has no such file)."""
    from aoi.evaluate.results import ResultsLog

    return {row.get("trajectory_id") for row in ResultsLog(results).read()[0]} if results.is_file() else None


def _order(traj: Trajectory) -> tuple:
    return problem_key(traj.problem_id, traj.target), traj.seed, traj.attempt, traj.id


def _dataset(rows: list[dict], kind: str):
    """Return rows as a `datasets.Dataset` with the view's columns."""
    from datasets import Dataset

    features = _features(kind)
    return Dataset.from_dict({name: [row[name] for row in rows] for name in features}, features=features)


def _write(dataset, folder: Path) -> None:
    """Write a dataset twice: save_to_disk at `folder`, parquet beside it."""
    dataset.save_to_disk(str(folder), num_shards=1)  # an empty dataset saved with no shard fails to load
    dataset.to_parquet(str(folder.with_suffix(".parquet")))


def _rl_unique(trajs: list[Trajectory]) -> list[dict]:
    """Return the RL rows of all episodes, one per (problem key, seed, prefix): the first episode's wins."""
    seen, rows = set(), []
    for traj in trajs:
        for row in rl_rows(traj):
            identity = (row["problem_id"], row["target"], row["seed"], tuple(row["prefix"]))
            if identity not in seen:
                seen.add(identity)
                rows.append(row)
    return rows


def _keys(trajs: list[Trajectory]) -> list[Key]:
    """Return the catalogue's keys plus any key of the data it lacks (an id from another catalogue version)."""
    keys = catalogue_keys()
    names = {k.name for k in keys}
    for traj in trajs:
        if problem_key(traj.problem_id, traj.target) not in names:
            keys.append(Key(traj.problem_id, traj.target, traj.family, app_of(traj.problem_id), ()))
    return keys


def _fresh(out: Path, overwrite: bool) -> Path:
    """Return `out` ready to write: new or empty, or an earlier export (card.md) when overwriting is asked for."""
    if out.exists() and any(out.iterdir()):
        if not (overwrite and (out / "card.md").is_file()):
            hint = "pass --overwrite to replace it" if (out / "card.md").is_file() else "pick a new or empty folder"
            raise ValueError(f"{out} is not empty; {hint}")
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)
    return out


def export(run_dirs: list[str | Path], out: str | Path, rules: SplitRules = SplitRules(), command: str = "",
           overwrite: bool = False) -> dict:
    """Write the datasets of the runs' trajectories into `out`; return the counts the card shows.

    Example:
        >>> counts = export(["runs/expert"], "data/expert")  # doctest: +SKIP
        >>> counts["sft"]["observer"], counts["rl"]  # doctest: +SKIP
        (412, 412)
    """
    import datasets

    from aoi.data.card import write_card

    sources = _sources(run_dirs)
    trajs = sorted((t for s in sources for t in s.trajectories), key=_order)
    out = _fresh(Path(out), overwrite)
    datasets.disable_progress_bars()  # one bar per file written is noise; the command prints the counts
    counts = {"episodes": len(trajs), "sft": _write_sft(trajs, out)}
    rl = _rl_unique(trajs)
    _write(_dataset(rl, "rl"), out / "rl")
    counts["rl"], counts["rl_starts"] = len(rl), sum(row["decision_index"] == 0 for row in rl)
    splits = make_splits(_keys(trajs), rules)
    (out / "splits.json").write_text(json.dumps(splits, indent=1) + "\n")
    write_card(out / "card.md", sources, trajs, counts, splits, rules, command)
    return counts


def _sources(run_dirs: list[str | Path]) -> list[Source]:
    """Read every run, refusing none given or none with a recorded episode."""
    if not run_dirs:
        raise ValueError("no run given; pass one or more run directories written by `aoi eval --out`")
    sources = [read_run(path) for path in run_dirs]
    if not any(s.trajectories for s in sources):
        raise ValueError(f"no recorded episode in {', '.join(str(s.path) for s in sources)}; run `aoi data "
                         f"generate` or `aoi eval` into it first")
    return sources


def _write_sft(trajs: list[Trajectory], out: Path) -> dict[str, int]:
    """Write one SFT dataset per role (ROLES always, others when present); return the rows per role."""
    sft = [row for traj in trajs for row in sft_rows(traj)]
    counts = {}
    for role in dict.fromkeys([*ROLES, *(row["role"] for row in sft)]):
        rows = [row for row in sft if row["role"] == role]
        _write(_dataset(rows, "sft"), out / "sft" / role)
        counts[role] = len(rows)
    return counts
