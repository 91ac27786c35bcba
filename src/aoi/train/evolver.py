"""GRPO for the scenario generator (`aoi train grpo --role evolver`): rewards from executing its scenarios in the twin.

A prompt is one seed scenario (aoi.evolve.generate.seed_messages); TRL samples G candidates per prompt through the
`local:` backend (masked to generate.decoding_schema unless `rollout: {constrained: false}`; either way a reply stops
when its JSON closes). Each candidate is executed in a fresh twin (aoi.evolve.execute) and scored on the execution-
verified dimensions of aoi.evolve.rewards, diversity within its group; each dimension is one TRL reward function with
its weight (`rewards:` in the config; defaults: aoi.evolve.rewards.DEFAULT_WEIGHTS), logged as
`rewards/<dimension>/mean`. An out-of-scope candidate scores zero on every dimension. Every candidate goes to
OUT/candidates.jsonl with its step, dimensions and reasons; `scenarios/valid` (format valid) and
`scenarios/executable` (injects a fault its solution fixes) count them in the metrics log.
"""

from __future__ import annotations

import hashlib
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from aoi.evolve.diversity import Novelty
from aoi.evolve.execute import execute
from aoi.evolve.generate import ROLE, candidate, decoding_schema, seed_messages
from aoi.evolve.rewards import DEFAULT_WEIGHTS as EVOLVER_WEIGHTS
from aoi.evolve.rewards import Rewarded, load_weights, score_records
from aoi.problems.scenarios import Scenario, load_scenarios
from aoi.train import grpo
from aoi.train.common import append_jsonl, callbacks, device_arguments, offline, resolve_precision
from aoi.train.manifest import write_manifest
from aoi.train.rewards import DEFAULT_WEIGHTS as OBSERVER_WEIGHTS
from aoi.train.sampling import batch, policy_observer, sample_seed

# A scenario takes 250-450 SmolLM2 tokens under the decoding schema; a cap below ~250 leaves most unparsable.
EVOLVER_DEFAULTS = {"max_completion_length": 512}


def train_evolver(options: grpo.GrpoOptions) -> dict:
    """Train the scenario generator with GRPO on a seed file; write adapter, checkpoints, metrics, manifest.

    Example:
        >>> train_evolver(grpo.GrpoOptions(data=Path("seeds.jsonl"), out=Path("runs/evolver"), role="evolver",
        ...                                max_steps=2))  # doctest: +SKIP
        {'base': 'tiny', 'role': 'evolver', ...}
    """
    if options.weights == OBSERVER_WEIGHTS:  # the command's default: the generator's dimensions instead
        options = replace(options, weights=dict(EVOLVER_WEIGHTS))
    options = grpo.read_config(options)
    seeds = _validate(options)
    offline()
    precision = resolve_precision(options.precision, options.device, grpo._base(options))
    device_args = device_arguments(options.device, precision)
    scorer = GroupScorer(seeds, weights=options.weights, generator=f"local:{grpo._base(options)}+grpo",
                         log=Path(options.out) / "candidates.jsonl", seed=options.seed)
    trainer = _trainer(options, seeds, scorer, device_args)
    scorer.trainer = trainer  # its state object is replaced when training starts: read it through the trainer
    started = time.perf_counter()
    result = trainer.train(resume_from_checkpoint=True if options.resume else None)
    wall = time.perf_counter() - started
    trainer.model.save_pretrained(str(options.out))
    hyper = grpo._hyper(options, trainer.args)
    for name in ("mode", "episode_steps", "episode_iterations"):  # the Observer's episodes: not the generator's
        hyper.pop(name)
    return write_manifest(options.out, base=grpo._base_identity(options), data_sha256=file_sha256(options.data),
                          split="seeds", role="evolver", hyper_parameters=hyper,
                          metrics=_metrics(options, result, wall, scorer), kind="grpo",
                          extra={"init": grpo._init_version(options), "device": options.device,
                                 "precision": precision, "constrained": options.constrained, "seeds": len(seeds)})


def _validate(options: grpo.GrpoOptions) -> list[Scenario]:
    """Refuse what the generator's GRPO cannot do; return the seed scenarios."""
    if options.mode != "per_decision" or options.episode_iterations is not None:
        raise ValueError("rollout.mode and rollout.max_iterations are the Observer's episode settings; the evolver "
                         "samples one scenario per completion: drop them from the config")
    if not isinstance(options.constrained, bool):
        raise ValueError(f"rollout.constrained is {options.constrained!r}; use true (decoding masked to the scenario "
                         "schema) or false (free decoding up to the JSON's close)")
    if "judge" in options.weights:
        raise ValueError("rewards.judge needs a judge model, which GRPO does not load; score with "
                         "`aoi scenarios validate --judge` instead and drop it from rewards")
    load_weights(options.weights)  # unknown dimensions and negative weights, with the names to use
    if options.resume and not list(Path(options.out, "checkpoints").glob("checkpoint-*")):
        raise ValueError(f"--resume found no checkpoint in {options.out}/checkpoints; run without --resume first")
    if not Path(options.data).is_file():
        raise ValueError(f"--data {options.data} is not a file; the evolver trains on seed scenarios, JSON Lines "
                         "(`aoi scenarios seeds --out FILE`)")
    return load_scenarios(options.data)


def file_sha256(path: str | Path) -> str:
    """Return the sha256 of a file's bytes (the seed file, for the manifest).

    Example:
        >>> import tempfile; p = Path(tempfile.mkdtemp()) / "s.jsonl"; _ = p.write_text("")
        >>> file_sha256(p)[:12]
        'e3b0c44298fc'
    """
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _trainer(options: grpo.GrpoOptions, seeds: list[Scenario], scorer: GroupScorer, device_args: dict) -> Any:
    """Build the GRPOTrainer: base (+ init adapter or fresh LoRA), one reward per dimension, the scenario sampler."""
    import datasets
    from trl import GRPOConfig, GRPOTrainer

    rows = datasets.Dataset.from_list([{"prompt": seed_messages(s), "seed_id": s.id} for s in seeds])
    model, tokenizer, peft_config = grpo._model(options)
    config = GRPOConfig(output_dir=str(Path(options.out) / "checkpoints"), max_steps=options.max_steps,
                        seed=options.seed, reward_weights=[float(w) for w in options.weights.values()],
                        **grpo.grpo_settings(options.grpo, EVOLVER_DEFAULTS), **device_args)
    rollout = scenario_rollout({_key(row["prompt"]): s for row, s in zip(rows, seeds, strict=True)},
                               seed=options.seed, constrained=options.constrained)
    return GRPOTrainer(model=model, reward_funcs=[scorer.reward(name) for name in options.weights], args=config,
                       train_dataset=rows, processing_class=tokenizer, peft_config=peft_config,
                       callbacks=[scorer.counter(), *callbacks(options.out)], rollout_func=rollout)


def _key(prompt: list[dict]) -> str:
    """Return what identifies a seed's prompt: its last message (the seed scenario itself)."""
    return prompt[-1]["content"]


def scenario_rollout(seeds: dict[str, Scenario], *, seed: int, constrained: bool) -> Callable:
    """Return a TRL rollout_func sampling one scenario per incoming prompt with the model being trained."""
    batches = {"count": 0}  # each call draws fresh samples, also after a resume (seeded by step and call)

    def rollout(prompts: list, trainer) -> dict:
        batches["count"] += 1
        policy = policy_observer(trainer, constrained=constrained,
                                 seed=sample_seed(seed, trainer.state.global_step, batches["count"]))
        for prompt in prompts:
            policy.complete(prompt, role=ROLE, schema=decoding_schema(seeds[_key(prompt)]))
        return batch(policy.calls)

    return rollout


class GroupScorer:
    """Execute and score each batch's candidates once (groups: the candidates of one seed); rewards read the scores."""

    def __init__(self, seeds: list[Scenario], *, weights: dict, generator: str, log: Path, seed: int):
        self.seeds, self.weights, self.generator = {s.id: s for s in seeds}, dict(weights), generator
        self.log, self.seed, self.trainer = Path(log), seed, None
        self.novelty = LazyNovelty(seeds)
        self.batch: tuple[tuple, list[Rewarded]] = ((), [])
        self.counts: Counter = Counter()  # since the last log: candidates, format-valid, executable
        self.totals: Counter = Counter()  # over the run

    def reward(self, name: str) -> Callable:
        """Return the TRL reward function of one dimension (0 for an out-of-scope candidate)."""

        def reward(prompts, completions, seed_id, **columns) -> list[float]:
            scored = self.score(completions, seed_id)
            return [0.0 if r.zero_reason else r.scores[name].value for r in scored]

        reward.__name__ = name
        return reward

    def score(self, completions: list, seed_ids: list[str]) -> list[Rewarded]:
        """Return each completion's Rewarded, executing the batch only the first time a dimension asks for it."""
        texts = [c[0]["content"] if isinstance(c, list) else c for c in completions]
        key = (tuple(seed_ids), tuple(texts))
        if key != self.batch[0]:
            self.batch = (key, self._score(texts, seed_ids))
        return self.batch[1]

    def _score(self, texts: list[str], seed_ids: list[str]) -> list[Rewarded]:
        """Execute and score every group of the batch; log each candidate."""
        scored: list[Rewarded | None] = [None] * len(texts)
        for sid in dict.fromkeys(seed_ids):
            indices = [i for i, s in enumerate(seed_ids) if s == sid]
            made = [candidate(self.seeds[sid], texts[i], generator=self.generator, group=j)
                    for j, i in enumerate(indices)]
            records = [execute(c.scenario if c.scenario is not None else c.text, seed=self.seed) for c in made]
            group = score_records(records, novelty=self.novelty, weights=self.weights)
            for i, made_one, rewarded in zip(indices, made, group, strict=True):
                scored[i] = rewarded
                self._note(made_one, rewarded)
        return scored

    def _note(self, made, rewarded: Rewarded) -> None:
        """Append a candidate to the log and count it."""
        step = self.trainer.state.global_step + 1 if self.trainer is not None else None
        line = made.record() | {"step": step, "reward": rewarded.total, "dimensions": rewarded.values(),
                                "executable": rewarded.valid, "problems": list(rewarded.problems)}
        append_jsonl(self.log, line)
        found = Counter(candidates=1, valid=int(made.valid), executable=int(rewarded.valid))
        self.counts.update(found)
        self.totals.update(found)

    def counter(self) -> Any:
        """Return a TrainerCallback adding the candidate counts since the last log to each logged metrics dict."""
        from transformers import TrainerCallback

        scorer = self

        class ScenarioCounts(TrainerCallback):
            """Add scenarios/candidates, scenarios/valid and scenarios/executable to the logs (then reset)."""

            def on_log(self, args, state, control, logs=None, **kwargs):
                """Extend the logs the metric sinks after this callback write."""
                if logs is not None and "reward" in logs:
                    logs.update({f"scenarios/{k}": scorer.counts[k] for k in ("candidates", "valid", "executable")})
                    scorer.counts.clear()

        return ScenarioCounts()


class LazyNovelty:
    """aoi.evolve.diversity.Novelty of the seeds, embedded on first use: a batch with nothing runnable loads none."""

    def __init__(self, seeds: list[Scenario]):
        self.seeds, self.real = seeds, None

    def nearest(self, group: list) -> list:
        """Return each scenario's nearest neighbour among the seeds and the rest of the group."""
        if not group:
            return []
        self.real = self.real or Novelty(self.seeds)
        return self.real.nearest(group)


def _metrics(options: grpo.GrpoOptions, result, wall: float, scorer: GroupScorer) -> dict:
    """Return the run's figures: steps, speed, candidate counts, and each dimension's mean at the last log."""
    from aoi.train.common import read_jsonl

    logged = [line for line in read_jsonl(Path(options.out) / "metrics.jsonl") if "reward" in line]
    last = {k: v for k, v in (logged[-1] if logged else {}).items() if k.startswith("rewards/") or k == "reward"}
    return {"steps": result.global_step, "wall_seconds": round(wall, 3),
            "steps_per_second": round(result.global_step / wall, 4) if wall else None,
            "candidates": scorer.totals["candidates"], "valid": scorer.totals["valid"],
            "executable": scorer.totals["executable"], "last": last}
