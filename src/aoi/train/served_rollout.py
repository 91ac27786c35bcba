"""GRPO's groups drawn on a vLLM server (`aoi train grpo --sampler-url URL|vllm`) while TRL trains on torch.

`served_rollout` draws a batch's decisions for GRPO's rollout_func (aoi.train.decisions plays them), like
aoi.train.sampling.local_draws, but each decision is drawn on the server by aoi.train.served (the schema as
`structured_outputs`; a group's G draws in one request, which the server batches), without behaviour log-probs: TRL
1.16 uses a rollout's log-probs only in its own vLLM's importance-sampling correction (`use_vllm`, off here), and the
adapter is synced every step, so the scoring request (prompt_logprobs over the whole prompt) was cost for nothing (v3:
a group of 4 took 112 s median to draw and score at the training steps, 26 s median to draw at the state choice).
Before a batch is drawn at a new optimizer step, the trainer's adapter is written and loaded on the server as
`aoi-grpo-<run>-s0-v<step>`, and the previous step's unloaded: each group is drawn by the weights being trained. With
`vllm` as the URL a managed server on the base (batching: no scoring flags) is started at the first batch and stopped
when training ends.
Each batch adds a line to OUT/served.jsonl: the step, what it was drawn for (`states`: the varied-state choice,
`step`: a training group), the adapter that drew it, its decisions and seconds.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import tempfile
import time
from pathlib import Path
from typing import Any

from aoi.train.common import append_jsonl
from aoi.train.sampling import batch, sample_seed
from aoi.train.served import ServedObserver, ServedPolicy, sampler_server


class ServedRollout:
    """The drawing half of a TRL rollout_func, on a completions server; `close()` unloads the adapter and stops a
    server it started."""

    def __init__(self, url: str, *, base: str, out: Path, seed: int, constrained: bool = True,
                 precision: str = "fp32"):
        self.url, self.base, self.out, self.seed = url, base, Path(out), seed
        self.constrained, self.precision = constrained, precision
        self.prefix = "aoi-grpo-" + hashlib.sha256(str(self.out.resolve()).encode()).hexdigest()[:6]
        self.stack = contextlib.ExitStack()
        self.policy: ServedPolicy | None = None
        self.version, self.batches = -1, 0

    def __call__(self, prompts: list, trainer: Any) -> dict:
        """Draw one decision per prompt (prompts arrive repeated G times) with the trainer's current adapter."""
        return batch(self._draw(prompts, trainer, purpose="step").calls)

    def texts(self, prompts: list, trainer: Any) -> list[str]:
        """Draw as a batch is drawn (for the varied-state choice); return the decisions' texts."""
        return [call.text for call in self._draw(prompts, trainer, purpose="states").calls]

    def _draw(self, prompts: list, trainer: Any, *, purpose: str) -> ServedObserver:
        """Draw one decision per prompt with the trainer's current adapter; return the observer that kept them."""
        if self.policy is None:
            self._start(trainer)
        started = time.perf_counter()
        if trainer.state.global_step != self.version:
            self._sync(trainer)
        synced = time.perf_counter()
        self.batches += 1
        observer = ServedObserver(self.policy, max_new_tokens=trainer.args.max_completion_length,
                                  temperature=trainer.args.temperature, constrained=self.constrained,
                                  seed=sample_seed(self.seed, self.version, self.batches), score=False)
        for prompt, n in runs(prompts):  # a group's G copies of its prompt: one request the server batches
            observer.draw(prompt, role="observer", n=n)
        self._record({"step": self.version, "adapter": self.policy.loaded, "decisions": len(prompts), "for": purpose,
                      "sync_s": round(synced - started, 3), "draw_s": round(time.perf_counter() - synced, 3)})
        return observer

    def _start(self, trainer: Any) -> None:
        """Reach (or start) the server, and have the trainer close this rollout when training ends."""
        from transformers import TrainerCallback

        url = self.stack.enter_context(sampler_server(self.url, self.base, self.precision, scoring=False))
        self.policy = ServedPolicy(url, base=self.base, prefix=self.prefix)
        rollout = self

        class Close(TrainerCallback):
            def on_train_end(self, args, state, control, **kwargs):
                rollout.close()

        trainer.add_callback(Close())

    def _sync(self, trainer: Any) -> None:
        """Write the trainer's adapter and load it on the server as this step's version (the previous unloaded)."""
        model = trainer.accelerator.unwrap_model(trainer.model)
        with tempfile.TemporaryDirectory() as folder:
            model.save_pretrained(folder)
            files = {p.name: p.read_bytes() for p in Path(folder).iterdir() if p.is_file()}
        self.version = trainer.state.global_step
        self.policy.swap(self.version, files)

    def _record(self, line: dict) -> None:
        """Append one batch's line to OUT/served.jsonl."""
        append_jsonl(self.out / "served.jsonl", line)

    def close(self) -> None:
        """Unload our adapter and stop the server if it was started here."""
        if self.policy is not None:
            self.policy.close()
            self.policy = None
        self.stack.close()


def runs(prompts: list) -> list[tuple[Any, int]]:
    """Return the prompts as (prompt, how many times in a row), in order (TRL repeats each prompt G times).

    Example:
        >>> runs(["a", "a", "b", "a"])
        [('a', 2), ('b', 1), ('a', 1)]
    """
    return [(prompt, len(list(repeats))) for prompt, repeats in itertools.groupby(prompts)]


def served_rollout(url: str, *, base: str, out: Path, seed: int, constrained: bool = True,
                   precision: str = "fp32") -> ServedRollout:
    """Return the sampler drawing GRPO's groups on the server at `url` (`vllm`: start one on `base`, serving the
    trainer's `precision`).

    Example:
        >>> rollout = served_rollout("http://127.0.0.1:8000/v1", base="smollm2", out=Path("runs/g"), seed=0)
        >>> out = rollout(prompts, trainer)  # doctest: +SKIP
    """
    return ServedRollout(url, base=base, out=out, seed=seed, constrained=constrained, precision=precision)
