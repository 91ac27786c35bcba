"""The manifest every adapter carries: what it was trained from (base, data, split), how, and what it measured."""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

FIELDS = ("base", "base_sha256", "data_sha256", "split", "role", "hyper_parameters", "metrics", "version")
WEIGHTS = "adapter_model.safetensors"


class ManifestError(ValueError):
    """An adapter folder without a usable manifest."""


def adapter_version(folder: str | Path, kind: str) -> str:
    """Return "<kind>-<first 12 hex of the adapter weights' sha256>": the same weights, the same version.

    Example:
        >>> import tempfile; folder = Path(tempfile.mkdtemp())
        >>> _ = (folder / WEIGHTS).write_bytes(b"w")
        >>> adapter_version(folder, "sft")
        'sft-50e721e49c01'
    """
    weights = Path(folder) / WEIGHTS
    if not weights.is_file():
        raise ManifestError(f"{folder} has no {WEIGHTS}; save the adapter with peft's save_pretrained first")
    return f"{kind}-{hashlib.sha256(weights.read_bytes()).hexdigest()[:12]}"


def write_manifest(folder: str | Path, *, base: dict, data_sha256: str, split: str, role: str,
                   hyper_parameters: dict, metrics: dict, kind: str, extra: dict | None = None) -> dict:
    """Write `manifest.json` beside the adapter and return it; `base` is aoi.models.bases.base_identity(...).

    Example:
        >>> import tempfile; folder = Path(tempfile.mkdtemp())
        >>> _ = (folder / WEIGHTS).write_bytes(b"w")
        >>> m = write_manifest(folder, base={"name": "tiny", "sha256": "ab"}, data_sha256="cd", split="by_target",
        ...                    role="observer", hyper_parameters={"lr": 1e-4}, metrics={}, kind="sft")
        >>> m["base"], m["version"], read_manifest(folder)["role"]
        ('tiny', 'sft-50e721e49c01', 'observer')
    """
    manifest = {"base": base["name"], "base_sha256": base["sha256"], "data_sha256": data_sha256, "split": split,
                "role": role, "hyper_parameters": hyper_parameters, "metrics": metrics,
                "version": adapter_version(folder, kind), "kind": kind,
                "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **(extra or {})}
    (Path(folder) / "manifest.json").write_text(json.dumps(manifest, indent=2, default=str) + "\n")
    return manifest


def read_manifest(folder: str | Path) -> dict:
    """Read an adapter's manifest; say how to get one when it is missing or incomplete."""
    path = Path(folder) / "manifest.json"
    if not path.is_file():
        raise ManifestError(f"{path} is missing; train the adapter with `aoi train sft` or `aoi train grpo`")
    manifest = json.loads(path.read_text())
    missing = [name for name in FIELDS if name not in manifest]
    if missing:
        raise ManifestError(f"{path} lacks {', '.join(missing)}; retrain the adapter with this version of aoi")
    return manifest
