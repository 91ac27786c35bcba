"""Where trajectory stores are: the `trajectories.db` of run folders under a directory, and which one holds an id.

`aoi trajectories show ID` searches them when its default store lacks the id, and `aoi view` lists the runs they
belong to. Nothing here creates a store: a folder is only read.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

STORE_NAME = "trajectories.db"
DEPTH = 4  # folder levels searched below a root (runs/<group>/<run>/... is deep enough; a home folder is not walked)
SKIP = {".git", ".venv", "node_modules", "__pycache__", ".mypy_cache", ".ruff_cache", ".pytest_cache"}


def walk_folders(root: str | Path, depth: int = DEPTH) -> Iterator[Path]:
    """Yield `root` and its folders down to `depth` levels, sorted, skipping hidden and tool folders and links.

    Example:
        >>> list(walk_folders("/nonexistent"))
        []
    """
    root = Path(root)
    if not root.is_dir():
        return
    yield root
    if depth <= 0:
        return
    try:
        children = sorted((e for e in os.scandir(root) if e.is_dir(follow_symlinks=False)), key=lambda e: e.name)
    except OSError:
        return  # an unreadable folder holds nothing we can show
    for entry in children:
        if entry.name not in SKIP and not entry.name.startswith("."):
            yield from walk_folders(entry.path, depth - 1)


def find_stores(root: str | Path, depth: int = DEPTH) -> list[Path]:
    """Return the trajectory stores (`trajectories.db` files) in `root` and its folders, sorted by path.

    Example:
        >>> find_stores("/nonexistent")
        []
    """
    return [folder / STORE_NAME for folder in walk_folders(root, depth) if (folder / STORE_NAME).is_file()]


def stores_holding(trajectory_id: str, stores: list[Path]) -> list[tuple[Path, list[str]]]:
    """Return each store (opened for reading) that has an id equal to or starting with `trajectory_id`, with them."""
    from aoi.store.sqlite import StoreError, TrajectoryStore

    found = []
    for path in stores:
        try:
            ids = TrajectoryStore(path, readonly=True).ids_starting(trajectory_id) if trajectory_id else []
        except (StoreError, sqlite3.Error):
            continue  # a damaged or locked store elsewhere must not stop the search
        if ids:
            found.append((path, ids))
    return found
