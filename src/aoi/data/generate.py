"""`generate`: teacher data, i.e. an eval run of a (usually expert) team over chosen problems, targets and split side.

The output is an ordinary run directory (`aoi eval --out`: results.jsonl, trajectories.db, config.json, resumable),
plus generate.json (what was selected and how), so `aoi report` reads it and `aoi data export` turns it into data.
"""

from __future__ import annotations

import json
from pathlib import Path

from aoi.data.splits import SplitRules, train_keys
from aoi.data.views import problem_key


def _resolved(problem_id: str, target: str | None) -> str | None:
    """Return the target an episode of (problem_id, target) runs on (a None target means the problem's default)."""
    from aoi.problems import make

    return make(problem_id, target).target


def _by_targets(pairs: list, targets: str) -> list:
    """Keep the pairs aimed at one of the comma-separated targets (every problem tried on each it accepts)."""
    wanted = {t.strip() for t in targets.split(",") if t.strip()}
    if not wanted:
        raise ValueError("--targets is empty; pass all, or comma-separated target names (see `aoi problems show ID`)")
    return [(pid, t) for pid, t in pairs if _resolved(pid, t) in wanted]


def choose(problems: str = "all", targets: str | None = None, task_type: str | None = None, app: str | None = None,
           split: str | None = None, rules: SplitRules = SplitRules()) -> tuple[list, list[str]]:
    """Return ((problem_id, target) pairs to run, notes): the selection, optionally only a split's train side.

    `targets` is None (each problem's own target), "all" (every valid target) or comma-separated names.

    Example:
        >>> pairs, _ = choose("revoke_auth_mongodb-localization-1", targets="mongodb-rate")
        >>> pairs
        [('revoke_auth_mongodb-localization-1', 'mongodb-rate')]
    """
    from aoi.evaluate.select import select

    named = targets not in (None, "all", "default")
    pairs, notes = select(problems, task_type, app, "all" if named else targets)
    if named:
        pairs = _by_targets(pairs, targets)
    if split is not None:
        train, before = train_keys(split, rules), len(pairs)
        pairs = [(pid, t) for pid, t in pairs if problem_key(pid, _resolved(pid, t)) in train]
        notes.append(f"--split {split}: kept the {len(pairs)} of {before} selected problem(s) on the train side")
    return pairs, notes


def generate(pairs: list, out: str | Path, config, k: int = 1, workers: int = 1, selection: dict | None = None,
             console=None):
    """Run K attempts of each pair into `out` (resumable) and record the selection; return the eval summary.

    Example:
        >>> from aoi.config import load_config
        >>> pairs, _ = choose("k8s_target_port-misconfig-detection-1", targets="all", split="by_target")
        >>> generate(pairs, "runs/teacher", load_config(overrides={"model": "expert"}))  # doctest: +SKIP
    """
    from aoi.evaluate.runner import run_eval

    if not pairs:
        raise ValueError("no problem to run; check --problems, --targets, --task-type, --app and --split")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    record = {**(selection or {}), "pairs": [problem_key(pid, t) for pid, t in pairs], "k": k}
    (out / "generate.json").write_text(json.dumps(record, indent=1) + "\n")
    return run_eval(pairs, k, workers, config, out, console=console)
