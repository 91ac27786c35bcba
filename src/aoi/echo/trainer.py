"""The trainer: a GRPO update on the groups it is given, off-policy corrected, then version N+1 is published.

Loss per completion token (DAPO-style token mean over the step's samples), with A the group-relative advantage
(reward - group mean; divided by the group's std with scale_rewards "group"):
    -min(r * A, clip(r, 1 - eps, 1 + eps) * A) * w,   r = pi / pi_old,   w = min(pi_old / pi_behaviour, C)
One update per batch, so pi_old is the policy at the update's start (r is 1 in value, its gradient is the policy
gradient) and w is the truncated importance ratio against the behaviour log-probs the sampler recorded: 1 for fresh
groups, a correction for stale ones (async). TRL's GRPOTrainer applies that correction only with vLLM, hence this loop.
pi_old in w is taken at the temperature of the behaviour log-probs: the sampling temperature for a local sampler's,
1.0 for a server's (vLLM's raw log-probs, aoi.train.served), so w compares one convention on both sides.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aoi.echo.groups import Group, advantages, staleness
from aoi.echo.handles import call
from aoi.echo.weights import WEIGHTS, adapter_files, load_adapter


@dataclass(kw_only=True)
class TrainSpec:
    """The update's settings (from GRPOConfig's names where they exist)."""

    learning_rate: float = 1e-5
    epsilon: float = 0.2  # PPO clip range
    is_cap: float = 3.0  # C: truncation of the importance ratio (TRL's vllm_importance_sampling_cap default)
    temperature: float = 1.0
    max_grad_norm: float = 1.0
    scale_rewards: str = "none"  # "group": advantages divided by the group's reward std (aoi.echo.groups.advantages)
    save_steps: int = 1  # a checkpoint every this many steps (a restarted trainer resumes from the newest)


class Trainer:
    """Hold the trainable policy and its optimizer; update on groups; publish versions; checkpoint; resume."""

    def __init__(self, spec: TrainSpec, policy: dict, out: str | Path, *, store: Any = None, resume: bool = False):
        import torch

        from aoi.echo.policy import load_policy

        if policy.get("threads"):
            torch.set_num_threads(policy["threads"])
        self.spec, self.out, self.store = spec, Path(out), store
        self.model, self.tokenizer = load_policy(policy["base"], init=policy.get("init"), lora=policy.get("lora"),
                                                 device=policy.get("device", "cpu"), trainable=True,
                                                 seed=policy.get("seed", 0))
        params = [p for p in self.model.parameters() if p.requires_grad]
        self.optimizer = torch.optim.AdamW(params, lr=spec.learning_rate)
        self.version, self.step, self.busy_s, self.resumed_from = 0, 0, 0.0, None
        if resume or _restarted():
            self._resume()
        self.publish()

    def publish(self) -> float:
        """Hand the current adapter to the weight store as this version; return the seconds it took."""
        started = time.perf_counter()
        if self.store is not None:
            call(self.store, "publish", self.version, adapter_files(self.model))
        return time.perf_counter() - started

    def update(self, groups: list[Group]) -> dict:
        """Take one optimizer step on the groups; publish version+1; checkpoint; return the step's figures."""
        import torch

        started = time.perf_counter()
        samples = [(s, a) for g in groups
                   for s, a in zip(g.samples, advantages([x.reward for x in g.samples], self.spec.scale_rewards))
                   if s.completion_ids]
        total = max(1, sum(len(s.completion_ids) for s, _ in samples))
        figures = {"loss": 0.0, "is": [], "clipped": 0}
        self.optimizer.zero_grad()
        for sample, advantage in samples:
            self._backward(sample, advantage, total, figures)
        grad = torch.nn.utils.clip_grad_norm_([p for p in self.model.parameters() if p.requires_grad],
                                              self.spec.max_grad_norm)
        self.optimizer.step()
        trained_at, self.version, self.step = self.version, self.version + 1, self.step + 1
        if self.step % self.spec.save_steps == 0:
            self.checkpoint()
        sync = self.publish()
        self.busy_s += time.perf_counter() - started
        return {**_summary(figures, total), "grad_norm": float(grad), "publish_s": sync,
                "train_s": time.perf_counter() - started, "trained_version": trained_at,
                "staleness": [staleness(trained_at, g) for g in groups], "policy_version": self.version,
                "step": self.step, "busy_s": self.busy_s}

    def _backward(self, sample, advantage: float, total: int, figures: dict) -> None:
        """Accumulate one sample's clipped, importance-weighted token losses into the gradients."""
        import torch

        from aoi.echo.policy import completion_logprobs

        logp = completion_logprobs(self.model, sample.prompt_ids, sample.completion_ids, self.spec.temperature)
        old = logp.detach()
        behaviour = torch.tensor(sample.logprobs, dtype=old.dtype, device=old.device) if sample.logprobs else old
        weight = torch.exp(self._comparable(sample, old) - behaviour).clamp(max=self.spec.is_cap)
        ratio = torch.exp(logp - old)
        clipped = ratio.clamp(1 - self.spec.epsilon, 1 + self.spec.epsilon)
        loss = -(torch.minimum(ratio * advantage, clipped * advantage) * weight).sum() / total
        loss.backward()
        figures["loss"] += float(loss.detach())
        figures["is"] += weight.tolist()
        figures["clipped"] += int(((ratio - clipped).abs() > 0).sum())

    def _comparable(self, sample, old: Any) -> Any:
        """Return pi_old's log-probs at the temperature the sample's behaviour log-probs were taken at."""
        import torch

        from aoi.echo.policy import completion_logprobs

        at = sample.logprobs_temperature
        if at is None or at == self.spec.temperature or not sample.logprobs:
            return old
        with torch.no_grad():
            return completion_logprobs(self.model, sample.prompt_ids, sample.completion_ids, at)

    def checkpoint(self) -> Path:
        """Save adapter, optimizer and version into checkpoints/step-N (what a restarted trainer resumes from)."""
        import torch

        folder = self.out / "checkpoints" / f"step-{self.step}"
        folder.mkdir(parents=True, exist_ok=True)
        for name, data in adapter_files(self.model).items():
            (folder / name).write_bytes(data)
        torch.save(self.optimizer.state_dict(), folder / "optimizer.pt")
        (folder / "state.json").write_text(json.dumps({"step": self.step, "version": self.version}))
        return folder

    def _resume(self) -> None:
        """Load the newest checkpoint's adapter, optimizer, step and version (none: start at version 0)."""
        import torch

        folder = latest_checkpoint(self.out)
        if folder is None:
            return
        load_adapter(self.model, {WEIGHTS: (folder / WEIGHTS).read_bytes()})
        self.optimizer.load_state_dict(torch.load(folder / "optimizer.pt", weights_only=True))
        state = json.loads((folder / "state.json").read_text())
        self.step, self.version, self.resumed_from = state["step"], state["version"], state["step"]

    def state(self) -> dict:
        """Return the step, version, busy seconds, and the checkpoint step it resumed from (None: a fresh start)."""
        return {"step": self.step, "version": self.version, "busy_s": self.busy_s, "resumed_from": self.resumed_from}

    def files(self) -> dict[str, bytes]:
        """Return the current adapter's files (the run's result; the driver writes them into --out)."""
        return adapter_files(self.model)


def _summary(figures: dict, tokens: int) -> dict:
    """Return the loss, importance-weight mean and max, and the clipped share of an update's tokens.

    Example:
        >>> _summary({"loss": -0.5, "is": [1.0, 3.0], "clipped": 1}, tokens=4)
        {'loss': -0.5, 'is_ratio_mean': 2.0, 'is_ratio_max': 3.0, 'clip_frac': 0.25}
    """
    ratios = figures["is"] or [1.0]
    return {"loss": figures["loss"], "is_ratio_mean": sum(ratios) / len(ratios), "is_ratio_max": max(ratios),
            "clip_frac": figures["clipped"] / tokens}


def latest_checkpoint(out: str | Path) -> Path | None:
    """Return the newest checkpoints/step-N folder of a run (None when there is none).

    Example:
        >>> latest_checkpoint("/nonexistent") is None
        True
    """
    folders = [p for p in Path(out, "checkpoints").glob("step-*") if (p / "state.json").is_file()]
    return max(folders, key=lambda p: int(p.name.split("-")[1]), default=None)


def _restarted() -> bool:
    """Return whether this process is a Ray actor restarted after a crash (it must resume, not start over)."""
    ray = sys.modules.get("ray")  # an actor's process has imported ray; the co-located trainer need not
    if ray is None or not ray.is_initialized() or ray.get_runtime_context().get_actor_id() is None:
        return False
    return bool(ray.get_runtime_context().was_current_actor_reconstructed)
