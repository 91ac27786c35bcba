"""Versioned LoRA adapters: the trainer publishes version N+1 after each update, samplers fetch and swap it in.

`WeightStore` keeps each version as an ordinary adapter folder (`v<N>/adapter_model.safetensors` and
`adapter_config.json`) under its root and serves the files' bytes, so a sampler on another node needs no shared disk.
aoi.echo.actors runs it as a Ray actor; `adapter_files` and `load_adapter` are the two ends of the swap.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

WEIGHTS, CONFIG = "adapter_model.safetensors", "adapter_config.json"


class WeightStore:
    """Adapter folders by version under `root`; the newest `keep` versions stay on disk.

    Example:
        >>> import tempfile; store = WeightStore(tempfile.mkdtemp(), keep=2)
        >>> for v in range(3): store.publish(v, {WEIGHTS: bytes([v])})
        >>> store.latest(), store.fetch(2)[WEIGHTS], store.versions()
        (2, b'\\x02', [1, 2])
    """

    def __init__(self, root: str | Path, keep: int = 4):
        self.root, self.keep = Path(root), max(1, keep)
        self.root.mkdir(parents=True, exist_ok=True)

    def publish(self, version: int, files: dict[str, bytes]) -> None:
        """Write a version's files (atomically: a reader never sees half a folder); forget the oldest versions."""
        staging = self.root / f".v{version}.tmp"
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir()
        for name, data in files.items():
            (staging / name).write_bytes(data)
        shutil.rmtree(self.root / f"v{version}", ignore_errors=True)
        staging.rename(self.root / f"v{version}")
        for old in self.versions()[:-self.keep]:
            shutil.rmtree(self.root / f"v{old}", ignore_errors=True)

    def versions(self) -> list[int]:
        """Return the versions on disk, oldest first."""
        return sorted(int(p.name[1:]) for p in self.root.glob("v*") if p.is_dir() and p.name[1:].isdigit())

    def latest(self) -> int:
        """Return the newest version (-1 before the first publish)."""
        versions = self.versions()
        return versions[-1] if versions else -1

    def fetch(self, version: int) -> dict[str, bytes]:
        """Return a version's files; say which versions exist when it is gone."""
        folder = self.root / f"v{version}"
        if not folder.is_dir():
            raise KeyError(f"adapter version {version} is not in {self.root} (kept: {self.versions()}); "
                           "fetch the latest() one")
        return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}

    def path(self, version: int) -> str:
        """Return a version's folder (a LoRA adapter peft can load)."""
        return str(self.root / f"v{version}")


def adapter_files(model: Any) -> dict[str, bytes]:
    """Return a PEFT model's adapter as the files peft's save_pretrained writes (weights and adapter_config.json)."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        model.save_pretrained(folder)
        return {p.name: p.read_bytes() for p in Path(folder).iterdir() if p.is_file()}


def load_adapter(model: Any, files: dict[str, bytes]) -> None:
    """Swap the adapter weights of a PEFT model in place (between episodes; the base stays loaded)."""
    import torch
    from peft import set_peft_model_state_dict
    from safetensors.torch import load

    state = load(files[WEIGHTS])
    device = next(model.parameters()).device
    with torch.no_grad():
        set_peft_model_state_dict(model, {k: v.to(device) for k, v in state.items()})
