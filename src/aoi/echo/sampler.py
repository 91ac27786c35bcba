"""A sampler: its own policy copy (base + LoRA adapter) and twins; it draws whole GRPO groups of Observer decisions.

Each sample is one decision drawn at a recorded Observer state (the dataset's `rl` view), schema-constrained as
aoi.train.sampling draws them, then played in the twin by aoi.train.rollouts (replay the prefix, play the decision,
the expert finishes) and scored by the reward terms of aoi.train.rewards. Before a group the sampler swaps in the
newest adapter of the weight store, so a group is drawn by one version and tagged with it. With `server_url` the
policy copy is an OpenAI-compatible server's (aoi.train.served: vLLM, or aoi.echo.serve's loopback one) and the swap
loads the adapter into that server.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from aoi.echo.buffer import CLOSED, FULL
from aoi.echo.groups import Group, Sample, group_id
from aoi.echo.handles import call
from aoi.train.common import Lora
from aoi.train.rewards import DEFAULT_WEIGHTS, term_values, weighted
from aoi.train.rollouts import OutcomeCache
from aoi.train.sampling import GenerativeObserver, sample_seed

WAIT_S = 0.05  # back-off while the buffer is full


@dataclass(kw_only=True)
class SamplerSpec:
    """How every sampler draws: the policy, the group size, sampling settings, episode budget and reward weights."""

    base: str = "tiny"
    init: str | None = None  # adapter the run started from (its base is `base`)
    lora: Lora = field(default_factory=Lora)
    device: str = "cpu"
    generations: int = 4  # G: samples per group
    max_new_tokens: int = 256
    temperature: float = 1.0
    constrained: bool = True
    episode_steps: int = 30
    weights: dict = field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    seed: int = 0
    samplers: int = 1  # how many samplers share the dataset (each walks every samplers-th row)
    threads: int | None = 1  # torch threads per sampler process (1 is fastest on a shared machine)
    server_url: str | None = None  # an OpenAI-compatible completions server holding the policy (None: load it here)
    server_model: str | None = None  # the base's model name on that server (None: the first it lists)
    adapter_dir: str | None = None  # where adapters are written for the server to read (None: a temp folder here)
    adapter_prefix: str = "aoi"  # adapters load on the server as <prefix>-s<sampler>-v<N>


class Sampler:
    """Draw groups with the policy; pull them (`generate`) or push them into the buffer (`run`)."""

    def __init__(self, index: int, spec: SamplerSpec, rows: list[dict], *, store: Any = None, buffer: Any = None,
                 model: Any = None, tokenizer: Any = None):
        self.index, self.spec, self.rows, self.store, self.buffer = index, spec, rows, store, buffer
        self.version, self.seq, self.pending_sync = -1, 0, 0.0
        self.incarnation = call(buffer, "register", index) if buffer is not None else 0
        if spec.server_url:  # the server's copy, in every mode (colocated too: the modes compare like for like)
            from aoi.train.served import ServedPolicy

            model, tokenizer = ServedPolicy(spec.server_url, base=spec.base, model=spec.server_model, index=index,
                                            adapter_dir=spec.adapter_dir, prefix=spec.adapter_prefix), None
        elif model is None:  # its own copy (a separate actor); colocated shares the trainer's model
            model, tokenizer = self._load()
        self.model, self.tokenizer = model, tokenizer

    def _load(self) -> tuple[Any, Any]:
        """Load the base with a LoRA adapter (its weights come from the store at the first sync)."""
        from aoi.echo.policy import load_policy

        if self.spec.threads:
            import torch

            torch.set_num_threads(self.spec.threads)
        return load_policy(self.spec.base, init=self.spec.init, lora=self.spec.lora, device=self.spec.device,
                           seed=self.spec.seed)

    def sync(self, min_version: int = -1) -> int:
        """Swap in the store's newest adapter when it is newer than ours (waiting for `min_version`); return ours."""
        latest = call(self.store, "latest")
        while latest < min_version:
            time.sleep(WAIT_S)
            latest = call(self.store, "latest")
        if latest > self.version:
            self.swap(latest, call(self.store, "fetch", latest))
        return self.version

    def swap(self, version: int, files: dict[str, bytes]) -> None:
        """Make an adapter version the policy (in our model, or loaded into the server); count the seconds as sync."""
        from aoi.echo.weights import load_adapter

        started = time.perf_counter()
        if self.spec.server_url:
            self.model.swap(version, files)
        else:
            load_adapter(self.model, files)
        self.version, self.pending_sync = version, self.pending_sync + time.perf_counter() - started

    def draw(self, row: int, version: int | None = None) -> Group:
        """Draw G decisions at the row's state, play each in the twin, score them; return the group."""
        started = time.perf_counter()
        version = self.version if version is None else version
        policy = self._observer(sample_seed(self.spec.seed, row, version, self.index, self.incarnation, self.seq))
        cache, state = OutcomeCache(max_steps=self.spec.episode_steps), self.rows[row]
        samples = tuple(self._sample(policy, cache, state) for _ in range(self.spec.generations))
        group = Group(group_id=group_id(self.index, self.incarnation, self.seq), sampler=self.index, version=version,
                      row=row, samples=samples, busy_s=time.perf_counter() - started, sync_s=self.pending_sync)
        self.seq, self.pending_sync = self.seq + 1, 0.0
        return group

    def _observer(self, seed: int) -> Any:
        """Return the policy as the Observer for one group: on the server, or on our (or the trainer's) model."""
        options = {"max_new_tokens": self.spec.max_new_tokens, "temperature": self.spec.temperature,
                   "constrained": self.spec.constrained, "seed": seed}
        if self.spec.server_url:
            from aoi.train.served import ServedObserver

            return ServedObserver(self.model, **options)
        return GenerativeObserver(self.model, self.tokenizer, **options)

    def _sample(self, policy: Any, cache: OutcomeCache, state: dict) -> Sample:
        """Draw one decision, play it (identical decisions share one episode), score every reward term."""
        policy.complete(state["prompt"], role="observer")
        drawn = policy.calls[-1]
        terms = term_values(cache.decision(state, drawn.text, expect=state["prompt"]))
        return Sample(prompt_ids=drawn.prompt_ids, completion_ids=drawn.completion_ids,
                      logprobs=list(drawn.logprobs or []), text=drawn.text, terms=terms,
                      reward=weighted(terms, self.spec.weights), logprobs_temperature=drawn.logprobs_temperature)

    def generate(self, min_version: int, rows: list[int]) -> list[Group]:
        """Sequential pull: refresh to `min_version` first, then draw one group per requested row."""
        self.sync(min_version)
        return [self.draw(row) for row in rows]

    def run(self) -> dict:
        """Asynchronous push: draw with the newest adapter and push into the buffer until it closes."""
        pushed, waited = 0, 0.0
        while True:
            self.sync()
            group = self.draw(self._next_row())
            status, slept = self._offer(group)
            waited += slept
            if status == CLOSED:
                return {"sampler": self.index, "pushed": pushed, "waited_s": waited}
            pushed += 1

    def _next_row(self) -> int:
        """Return the row of the next group: samplers interleave over the dataset, in order as colocated walks it."""
        return (self.seq * self.spec.samplers + self.index) % len(self.rows)

    def _offer(self, group: Group) -> tuple[str, float]:
        """Put the group into the buffer, waiting while it is full; return the answer and the seconds waited."""
        started = time.perf_counter()
        status = call(self.buffer, "put", group)
        while status == FULL:
            time.sleep(WAIT_S)
            status = call(self.buffer, "put", group)
        return status, time.perf_counter() - started

    def ready(self) -> int:
        """Return the sampler's index once it is loaded (the driver waits on it)."""
        return self.index
