"""Per-step figures of an Echo run, to `metrics.jsonl` and TensorBoard (keys: src/aoi/echo/README.md).

The keys TRL's metrics.jsonl also has (`step`, `time`, `reward`, `reward_std`, `rewards/<term>/mean`, `loss`) mean the
same here, so one report reads runs of both engines.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aoi.echo.groups import Group
from aoi.train.common import append_jsonl


@dataclass(kw_only=True)
class Clock:
    """What the run has consumed and spent so far (the rates and idle shares are over the whole run)."""

    started: float
    samplers: int
    rollouts: int = 0
    tokens: int = 0
    dropped: int = 0

    def wall(self) -> float:
        """Return the seconds since the run started."""
        return max(1e-9, time.perf_counter() - self.started)


def reward_figures(groups: list[Group], weights: dict) -> dict:
    """Return the step's reward mean and std, and every weighted term's mean, over the samples of its groups.

    Example:
        >>> from aoi.echo.groups import Sample
        >>> s = lambda r: Sample(prompt_ids=[], completion_ids=[1], logprobs=[0.0], text="", terms={"success": r},
        ...                      reward=r)
        >>> g = Group(group_id="s0-i0-0", sampler=0, version=0, row=0, samples=(s(1.0), s(0.0)), busy_s=0.0)
        >>> reward_figures([g], {"success": 1.0})
        {'reward': 0.5, 'reward_std': 0.5, 'rewards/success/mean': 0.5}
    """
    samples = [s for g in groups for s in g.samples]
    rewards = [s.reward for s in samples] or [0.0]
    mean = sum(rewards) / len(rewards)
    figures = {"reward": mean, "reward_std": (sum((r - mean) ** 2 for r in rewards) / len(rewards)) ** 0.5}
    for name in weights:
        values = [s.terms.get(name, 0.0) for s in samples] or [0.0]
        figures[f"rewards/{name}/mean"] = sum(values) / len(values)
    return figures


def step_line(*, mode: str, groups: list[Group], update: dict, clock: Clock, weights: dict, sampler_busy: float,
              dropped: int, queue_depth: int) -> dict:
    """Return one metrics line for an optimizer step (the update's figures plus the swarm's)."""
    clock.rollouts += sum(len(g.samples) for g in groups)
    clock.tokens += sum(g.tokens for g in groups)
    clock.dropped += dropped
    wall, stale, syncs = clock.wall(), update["staleness"], [g.sync_s for g in groups if g.sync_s > 0]
    return {"step": update["step"], "time": time.time(), "engine": "echo", "mode": mode, "wall": round(wall, 3),
            "policy_version": update["policy_version"], "staleness": stale,
            "versions": [g.version for g in groups], "group_ids": [g.group_id for g in groups],
            "rollouts": sum(len(g.samples) for g in groups),
            "staleness_mean": sum(stale) / max(1, len(stale)), "staleness_max": max(stale, default=0),
            "dropped_stale": dropped, "dropped_stale_total": clock.dropped, "queue_depth": queue_depth,
            "trainer_idle": _share(1 - update["busy_s"] / wall),
            "sampler_idle": _share(1 - sampler_busy / (clock.samplers * wall)),
            "weight_sync_s": sum(syncs) / len(syncs) if syncs else 0.0,
            "rollouts_per_s": clock.rollouts / wall, "tokens_per_s": clock.tokens / wall,
            "samplers": clock.samplers, **reward_figures(groups, weights),
            **{k: update[k] for k in ("loss", "grad_norm", "is_ratio_mean", "is_ratio_max", "clip_frac", "train_s")}}


def _share(value: float) -> float:
    """Clamp a share into [0, 1] (timers of different processes disagree by milliseconds)."""
    return round(min(1.0, max(0.0, value)), 4)


class MetricsLog:
    """Append step lines to OUT/metrics.jsonl and their scalars to OUT/tensorboard/."""

    def __init__(self, out: str | Path):
        from torch.utils.tensorboard import SummaryWriter

        self.path = Path(out) / "metrics.jsonl"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.writer: Any = SummaryWriter(log_dir=str(Path(out) / "tensorboard"))

    def write(self, line: dict) -> None:
        """Write one line; numbers become TensorBoard scalars at the line's step."""
        append_jsonl(self.path, line)
        for key, value in line.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool) and key not in ("step", "time"):
                self.writer.add_scalar(key, value, line["step"])
        self.writer.flush()

    def close(self) -> None:
        """Close the TensorBoard writer."""
        self.writer.close()
