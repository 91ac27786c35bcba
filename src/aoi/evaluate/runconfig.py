"""The configuration of an eval run: store paths moved into the run directory, pinned in config.json for resumes."""

from __future__ import annotations

import json
import os
from pathlib import Path

from aoi.config import RunConfig

# Options that may differ between sessions of one run: where files go (the same folder may be named differently), and
# at any depth how long a model request may wait (a run resumed on a busier machine may need longer; no answer changes).
UNPINNED = ("store",)
UNPINNED_ANYWHERE = ("timeout", "max_retry_wait")


def prepare_config(config: RunConfig, out_dir: str | Path, seed: int) -> RunConfig:
    """Return a copy of the config for an eval in out_dir: store and audit log inside it, the base seed set.

    Example:
        >>> prepare_config(RunConfig(), "runs/x", 3).store.path.as_posix()
        'runs/x/trajectories.db'
    """
    if config.approval.mode == "ask":
        raise ValueError("approval.mode 'ask' prompts on the terminal, which an unattended eval cannot answer; "
                         "set approval.mode to auto or deny (--config FILE or AOI_APPROVAL)")
    if config.env.backend not in ("twin", "cluster"):
        raise ValueError(f"aoi eval runs on the twin or a cluster, not env.backend {config.env.backend!r} "
                         f"(AIOpsLab runs go through `aoi aiopslab eval`)")
    out_dir = Path(out_dir)
    config = config.model_copy(deep=True)
    config.store.path, config.store.audit_log = out_dir / "trajectories.db", out_dir / "audit.jsonl"
    config.env.seed, config.env.target = seed, None
    return config


def _differences(old: dict, new: dict, prefix: str = "") -> list[str]:
    """Return the dotted options whose values differ between two resolved configs.

    Example:
        >>> _differences({"model": {"spec": "expert", "max_tokens": 9, "timeout": 60}},
        ...              {"model": {"spec": "openai:x", "max_tokens": 9, "timeout": 600}})
        ['model.spec']
    """
    keys = [k for k in dict.fromkeys([*old, *new])
            if not (prefix == "" and k in UNPINNED) and k not in UNPINNED_ANYWHERE]
    found = []
    for key in keys:
        a, b = old.get(key), new.get(key)
        if isinstance(a, dict) and isinstance(b, dict):
            found += _differences(a, b, f"{prefix}{key}.")
        elif a != b:
            found.append(f"{prefix}{key}")
    return found


def pin_config(path: str | Path, data: dict) -> None:
    """Write the resolved config on a run's first session; later sessions must match it (else ValueError)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        changed = _differences(json.loads(path.read_text(encoding="utf-8")), json.loads(json.dumps(data)))
        if changed:
            raise ValueError(f"{path.parent} holds a run made with other options ({', '.join(changed)} differ from "
                             f"{path}); resume with the same options (model, seed, max steps, config file) or pass "
                             f"another --out")
        return
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)
