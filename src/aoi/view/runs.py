"""The runs a viewer shows: found under the folders it was given, read back without writing anything.

A run is a folder with `results.jsonl` (an `aoi eval --out`), `metrics.jsonl` and no results (an `aoi train`
run) or only `trajectories.db` (the store `aoi run` writes). Each is named by a key, its path under its root, which
is how pages and the API name it; no other path is ever taken from a request.
"""

from __future__ import annotations

import json
import os
import socket
from dataclasses import dataclass
from pathlib import Path

from aoi.store.locate import STORE_NAME, walk_folders

RESULTS, SUMMARY, CONFIG, METRICS, MANIFEST = "results.jsonl", "summary.json", "config.json", "metrics.jsonl", \
    "manifest.json"
AUDIT, LOCK = "audit.jsonl", "eval.lock"
FILES = (RESULTS, SUMMARY, CONFIG, METRICS, MANIFEST, AUDIT)  # what /api/file serves, by name
STAMPED = (RESULTS, SUMMARY, METRICS, STORE_NAME, STORE_NAME + "-wal")  # a change here is a change of the run


class Refused(ValueError):
    """A request named something outside the run folders the viewer was given (HTTP 403)."""


@dataclass(frozen=True)
class Run:
    """One run folder: its key (its path under the root it was found in), resolved path and kind."""

    key: str
    path: Path
    kind: str  # eval | training | store


def kind_of(folder: Path) -> str | None:
    """Return what kind of run a folder holds, or None.

    Example:
        >>> kind_of(Path("/nonexistent")) is None
        True
    """
    if (folder / RESULTS).is_file():
        return "eval"
    if (folder / METRICS).is_file():
        return "training"
    return "store" if (folder / STORE_NAME).is_file() else None


def find_runs(roots: list[Path]) -> dict[str, Run]:
    """Return the runs in the roots and their folders, by key (a root that is a run is keyed by its name)."""
    runs: dict[str, Run] = {}
    for root in roots:
        root = root.resolve()
        for folder in walk_folders(root):
            kind = kind_of(folder)
            if kind is None:
                continue
            key = "/".join((root.name or "root", *folder.relative_to(root).parts))
            while key in runs:  # two roots of the same name
                key += "~"
            runs[key] = Run(key, folder, kind)
    return runs


def inside(run: Run, name: str) -> Path:
    """Return the file `name` of a run; Refused when it is not one the viewer serves or resolves outside the run."""
    if name not in FILES and name != STORE_NAME:
        raise Refused(f"{name!r} is not a run file the viewer serves (one of {', '.join(FILES)})")
    path = (run.path / name).resolve()
    if not path.is_relative_to(run.path):
        raise Refused(f"{run.key}/{name} leads outside the run folder (to {path}); the viewer serves only what is "
                      "inside the folders it was given")
    return path


def read_json(run: Run, name: str) -> dict | None:
    """Return a run's JSON file, or None when it is missing or half-written."""
    try:
        return json.loads(inside(run, name).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def read_jsonl(run: Run, name: str) -> list[dict]:
    """Return the objects of a run's JSONL file, skipping a torn last line (a run still writing it)."""
    try:
        lines = inside(run, name).read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    rows = []
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            rows.append(record)
    return rows


def stamp(run: Run) -> str:
    """Return a token that changes whenever the run's results, summary, metrics or store change."""
    parts = []
    for name in STAMPED:
        try:
            info = os.stat(run.path / name)
        except OSError:
            continue
        parts.append(f"{name}:{info.st_mtime_ns}:{info.st_size}")
    return "|".join(parts)


def in_progress(run: Run) -> bool:
    """Return whether an `aoi eval` is writing the run now: the pid its eval.lock names is alive on this host.

    The lock itself is never taken (a viewer must not make an eval starting at that moment fail).
    """
    try:
        holder = json.loads((run.path / LOCK).read_text(encoding="utf-8"))
        pid, host = int(holder["pid"]), holder["host"]
    except (OSError, ValueError, KeyError, TypeError):
        return False
    if host != socket.gethostname() or pid == os.getpid():
        return False
    return _alive(pid) and _holds(pid, run.path / LOCK)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _holds(pid: int, lock: Path) -> bool:
    """Return whether process `pid` has the lock file open (Linux /proc; elsewhere assume it does)."""
    fds = Path(f"/proc/{pid}/fd")
    if not fds.is_dir():
        return True
    try:
        target = lock.resolve()
        return any(Path(os.readlink(fd)) == target for fd in fds.iterdir())
    except OSError:
        return True  # not ours to read: the live pid is the best evidence left
