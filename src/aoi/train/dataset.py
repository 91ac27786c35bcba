"""Read the training datasets `aoi data export` writes: a view (sft/<role>, rl), its split, and their hash."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

SPLITS = ("by_target", "by_family", "by_app")
PARTS = ("train", "test", "held_out")


class DatasetError(ValueError):
    """A dataset folder that cannot be trained on; the message says what is missing and how to make it."""


def problem_key(row: dict) -> str:
    """Return the split file's key of a row: "problem_id@target" (target "" when the problem has none).

    Example:
        >>> problem_key({"problem_id": "scale_pod_zero_social_net-mitigation-1", "target": "user-service"})
        'scale_pod_zero_social_net-mitigation-1@user-service'
        >>> problem_key({"problem_id": "noop_detection_social_network-1", "target": None})
        'noop_detection_social_network-1@'
    """
    return f"{row['problem_id']}@{row.get('target') or ''}"


def split_keys(data_dir: str | Path, split: str, part: str = "train") -> set[str]:
    """Return the problem keys of one part of a split from `splits.json`.

    Example:
        >>> import tempfile; folder = Path(tempfile.mkdtemp())
        >>> _ = (folder / "splits.json").write_text('{"by_target": {"train": ["a@x"], "test": ["a@y"]}}')
        >>> split_keys(folder, "by_target", "test")
        {'a@y'}
    """
    if split not in SPLITS or part not in PARTS:
        raise DatasetError(f"split {split!r}/{part!r} is unknown; use one of {', '.join(SPLITS)} and one of "
                           f"{', '.join(PARTS)}")
    path = Path(data_dir) / "splits.json"
    if not path.is_file():
        raise DatasetError(f"{path} is missing; make the dataset with `aoi data export RUN_DIR... --out {data_dir}`")
    splits = json.loads(path.read_text())
    if split not in splits or part not in splits[split]:
        raise DatasetError(f"{path} has no {split}/{part} list; re-export the dataset with a current `aoi data export`")
    return set(splits[split][part])


def load_view(data_dir: str | Path, view: str, split: str | None = None, part: str = "train") -> Any:
    """Load a view ("sft/observer", "rl") as a `datasets.Dataset`, keeping only the rows of one split part.

    Example:
        >>> rows = load_view("runs/data", "sft/observer", split="by_target")  # doctest: +SKIP
        >>> rows.column_names[:2]  # doctest: +SKIP
        ['prompt', 'completion']
    """
    import datasets

    folder = Path(data_dir) / view
    parquet = Path(data_dir) / f"{view}.parquet"
    if folder.is_dir():
        rows = datasets.load_from_disk(str(folder), keep_in_memory=True)  # no cache files in the folder
    elif parquet.is_file():
        rows = datasets.Dataset.from_parquet(str(parquet), keep_in_memory=True)
    else:
        raise DatasetError(f"{data_dir} has no {view}/ dataset (nor {view}.parquet); export it with "
                           f"`aoi data export RUN_DIR... --out {data_dir}` (it needs trajectories of that role)")
    if split is not None:
        keys = split_keys(data_dir, split, part)
        # in memory: a cache file written into the dataset folder would change its hash
        rows = rows.filter(lambda row: problem_key(row) in keys, keep_in_memory=True)
    if len(rows) == 0:
        raise DatasetError(f"{data_dir}/{view} has no rows in the {split} {part} part; generate more teacher data "
                           "or choose another --split")
    return rows


def data_sha256(data_dir: str | Path) -> str:
    """Return one sha256 over the dataset's files (names and bytes, in sorted order), for manifests.

    Example:
        >>> import tempfile; folder = Path(tempfile.mkdtemp())
        >>> _ = (folder / "splits.json").write_text("{}")
        >>> len(data_sha256(folder))
        64
    """
    digest = hashlib.sha256()
    root = Path(data_dir)
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(root)).encode() + b"\0")
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()
