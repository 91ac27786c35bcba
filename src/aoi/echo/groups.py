"""What samplers hand the trainer: a GRPO group (all G samples of one prompt, one policy version), kept whole.

Group-relative advantages need every sample of a group and the version that drew them, so a group travels as one
record from sampler to buffer to trainer; a sampler that dies mid-group never hands over the part it drew.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field


@dataclass(frozen=True, kw_only=True)
class Sample:
    """One sampled decision: its tokens, the behaviour policy's log-probs, and the reward terms of its episode."""

    prompt_ids: list[int]
    completion_ids: list[int]
    logprobs: list[float]  # log pi_behaviour(token) per completion token, recorded by the sampler
    text: str
    terms: dict[str, float]  # every reward term's value (aoi.train.rewards.TERMS)
    reward: float  # the weighted sum the advantage is computed from
    logprobs_temperature: float | None = None  # temperature of `logprobs` (None: the trainer's; a server's: 1.0)


@dataclass(frozen=True, kw_only=True)
class Group:
    """The G samples one sampler drew for one prompt with one policy version."""

    group_id: str  # "s<sampler>-i<incarnation>-<seq>": unique across sampler restarts
    sampler: int
    version: int  # the policy version that drew every sample of the group
    row: int  # index of the dataset row (the recorded Observer state)
    samples: tuple[Sample, ...]
    busy_s: float  # seconds the sampler spent drawing and playing this group
    sync_s: float = 0.0  # seconds the sampler spent swapping in this version's adapter before the group (0: none)
    created_at: float = field(default_factory=time.time)

    @property
    def tokens(self) -> int:
        """Return the completion tokens of the group."""
        return sum(len(s.completion_ids) for s in self.samples)


SCALES = ("none", "group")  # GRPOConfig.scale_rewards values this engine applies


def reward_scale(value: str | bool) -> str:
    """Return GRPOConfig's `scale_rewards` as one of SCALES (True is "group", False "none"); refuse the others.

    Example:
        >>> reward_scale(True), reward_scale("none")
        ('group', 'none')
    """
    name = ("group" if value else "none") if isinstance(value, bool) else value
    if name not in SCALES:
        raise ValueError(f"scale_rewards {value!r}: Echo applies {' or '.join(SCALES)}; set one in the config's grpo")
    return name


def advantages(rewards: list[float], scale: str = "none", eps: float = 1e-4) -> list[float]:
    """Return group-relative advantages: reward - group mean, divided by (group std + eps) when `scale` is "group"
    (GRPOConfig.scale_rewards); all 0 when every reward ties.

    Example:
        >>> [round(a, 3) for a in advantages([1.0, 0.0])], [round(a, 3) for a in advantages([1.0, 0.0], "group")]
        ([0.5, -0.5], [0.707, -0.707])
        >>> advantages([0.5, 0.5], "group")
        [0.0, 0.0]
    """
    mean = sum(rewards) / len(rewards)
    std = (sum((r - mean) ** 2 for r in rewards) / max(1, len(rewards) - 1)) ** 0.5
    if std == 0:
        return [0.0] * len(rewards)
    return [(r - mean) / (std + eps) if scale == "group" else r - mean for r in rewards]


def staleness(trainer_version: int, group: Group) -> int:
    """Return how many versions the group lags the trainer (0: drawn by the weights being trained).

    Example:
        >>> g = Group(group_id="s0-i0-0", sampler=0, version=3, row=0, samples=(), busy_s=0.0)
        >>> staleness(5, g)
        2
    """
    return trainer_version - group.version


def group_id(sampler: int, incarnation: int, seq: int) -> str:
    """Return the id of a sampler's seq-th group in one incarnation (a restart is a new incarnation).

    Example:
        >>> group_id(1, 2, 7)
        's1-i2-7'
    """
    return f"s{sampler}-i{incarnation}-{seq}"
