"""GRPO for the Observer (TRL GRPOTrainer + PEFT LoRA) with rewards from real episodes in the twin.

Two rollout modes (`rollout.mode` in the config file), both played in TRL's rollout_func, which hands each sample's
outcome to the reward functions (aoi.train.rewards: plain functions of the `outcome` column):
- `per_decision` (the default): each row of the dataset's `rl` view is a recorded Observer state; the rollout draws
  G decisions for its prompt and plays each in the twin after replaying the row's prefix, finished by the expert
  Observer (aoi.train.decisions); the episode's verdict is that decision's reward. It is TRL's native shape (one
  prompt, G completions), its credit goes to the one decision that differs within a group, and it costs one
  generated decision per sample.
- `whole_episode`: the policy plays the Observer for a whole episode from each start row; the episode's reward is
  shared by its decisions (aoi.train.episodes).
Decisions are sampled masked to the Observer's schema (`rollout.constrained`, default true; aoi.train.sampling), so
every sample parses; `constrained: false` draws per-decision samples by TRL's own generation.
With `rollout: {varied_states: true}` (per_decision) training keeps only the states where the starting policy's own
G draws end with different rewards (aoi.train.decisions.varied_rows; each state's draws in OUT/states.jsonl): a
group whose rewards are all equal teaches nothing.
With `--sampler-url URL` (or `vllm`: one started for the run) per-decision groups are drawn on a vLLM server that
loads the trainer's adapter after each optimizer step (aoi.train.served_rollout); the trainer stays on torch.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import yaml

from aoi.train.common import Lora, callbacks, device_arguments, offline, read_jsonl, resolve_precision
from aoi.train.dataset import data_sha256, load_view
from aoi.train.manifest import read_manifest, write_manifest
from aoi.train.rewards import DEFAULT_WEIGHTS, reward_functions
from aoi.train.rollouts import OutcomeCache

MODES = ("per_decision", "whole_episode")
SECTIONS = ("grpo", "rewards", "rollout", "lora")
MIN_DECISION_TOKENS = 16  # the shortest decision, {"next": "probe"}, takes 7-10 SmolLM2 tokens as the mask lets it
COLUMNS = ("prompt", "problem_id", "target", "seed", "prefix", "decision_index")
# GRPOConfig defaults sized for CPU; any GRPOConfig field may be set in the config file's `grpo` section.
# scale_rewards "none" (Dr. GRPO): advantage = reward - group mean. TRL's "group" divides by the group's std, so a group
# whose rewards differ only by the efficiency term's jitter (std 0.003 in learning-v3's GRPO) got as large a gradient
# as one where a decision succeeded and another failed (grad norm 5.6-5.7 against 3-6.7).
GRPO_DEFAULTS = {"num_generations": 4, "per_device_train_batch_size": 1, "max_completion_length": 256,
                 "learning_rate": 1e-5, "temperature": 1.0, "beta": 0.0, "scale_rewards": "none", "logging_steps": 1,
                 "save_steps": 10, "save_total_limit": 3, "report_to": "none", "gradient_checkpointing": False}


def grpo_settings(overrides: dict, *layers: dict) -> dict:
    """Return GRPO_DEFAULTS under `layers` and `overrides`; unless set, gradient accumulation makes one optimizer step
    one group: an Observer's prompt runs to ~3,000 tokens, and four sequences per forward took SmolLM2's trainer to
    18.7 GB RSS (benchmarks/learning.py, killed for memory) where one at a time stayed at 4.6-5.6 GB.

    Example:
        >>> grpo_settings({})["gradient_accumulation_steps"], grpo_settings({"per_device_train_batch_size": 2,
        ...     "num_generations": 2})["gradient_accumulation_steps"]
        (4, 1)
    """
    merged = {**GRPO_DEFAULTS, **{k: v for layer in layers for k, v in layer.items()}, **overrides}
    per_forward = merged["per_device_train_batch_size"]
    return {"gradient_accumulation_steps": max(1, merged["num_generations"] // per_forward), **merged}


@dataclass(kw_only=True)
class GrpoOptions:
    """One GRPO run (the command's flags); the config file adds TRL's options, reward weights and the mode."""

    data: Path
    out: Path
    role: str = "observer"
    init: Path | None = None  # an SFT adapter to start from (its manifest names the base)
    base: str | None = None  # tiny, smollm2 or a model directory (default: the init adapter's base, else tiny)
    split: str = "by_target"
    max_steps: int = 20
    device: str = "cpu"
    precision: str = "auto"  # fp32, bf16 (autocast) or auto: bf16 on CUDA and on a CPU with native bf16
    seed: int = 0
    resume: bool = False  # continue from the newest checkpoint in OUT/checkpoints
    config: Path | None = None
    mode: str = "per_decision"
    constrained: bool = True  # sample decisions masked to the Observer's schema (False: TRL's own generation)
    episode_steps: int = 30  # the environment's step budget per episode
    episode_iterations: int | None = None  # whole_episode only: cap on the policy's decisions (None: the config's)
    sampler_url: str | None = None  # draw per-decision groups on this vLLM server ("vllm": start one; None: here)
    varied_states: bool = False  # per_decision: train only on states whose first G draws end with different rewards
    weights: dict = field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    grpo: dict = field(default_factory=dict)
    lora: Lora = field(default_factory=Lora)


def read_config(options: GrpoOptions) -> GrpoOptions:
    """Fold the YAML/JSON config file into the options; unknown sections or GRPOConfig fields are errors.

    Example:
        >>> import tempfile; path = Path(tempfile.mkdtemp()) / "grpo.yaml"
        >>> _ = path.write_text("grpo: {loss_type: dr_grpo}\\nrewards: {success: 2.0}\\nrollout: {mode: whole_episode}")
        >>> o = read_config(GrpoOptions(data=Path("d"), out=Path("o"), config=path))
        >>> o.grpo["loss_type"], o.weights, o.mode
        ('dr_grpo', {'success': 2.0}, 'whole_episode')
    """
    if options.config is None:
        return options
    path = Path(options.config)
    if not path.is_file():
        raise ValueError(f"config file {path} does not exist; give a YAML or JSON file with sections {SECTIONS}")
    data = (json.loads if path.suffix == ".json" else yaml.safe_load)(path.read_text()) or {}
    unknown = sorted(set(data) - set(SECTIONS))
    if unknown:
        raise ValueError(f"{path}: unknown section {unknown[0]!r}; use {', '.join(SECTIONS)}")
    _check_grpo_fields(path, data.get("grpo") or {})
    rollout = data.get("rollout") or {}
    return GrpoOptions(**{**options.__dict__, "grpo": data.get("grpo") or {}, "weights": data.get("rewards")
                          or options.weights, "mode": rollout.get("mode", options.mode),
                          "episode_steps": rollout.get("episode_steps", options.episode_steps),
                          "constrained": rollout.get("constrained", options.constrained),
                          "varied_states": rollout.get("varied_states", options.varied_states),
                          "episode_iterations": rollout.get("max_iterations", options.episode_iterations),
                          "lora": Lora(**data["lora"]) if data.get("lora") else options.lora})


def _check_grpo_fields(path: Path, grpo: dict) -> None:
    """Refuse names that are not GRPOConfig fields, and the ones the command sets itself."""
    from trl import GRPOConfig

    known = {f.name for f in fields(GRPOConfig)}
    own = {"output_dir", "max_steps", "seed", "use_cpu", "bf16", "reward_weights"}
    for name in grpo:
        if name not in known:
            raise ValueError(f"{path}: grpo.{name} is not a GRPOConfig field (TRL 1.16); check its spelling")
        if name in own:
            raise ValueError(f"{path}: grpo.{name} is set by the command (--max-steps, --seed, --device, rewards:)")


def train_grpo(options: GrpoOptions) -> dict:
    """Train the Observer with GRPO; write the adapter, checkpoints, metrics and manifest; return the manifest.

    Example:
        >>> train_grpo(GrpoOptions(data=Path("runs/data"), out=Path("runs/grpo"), max_steps=2))  # doctest: +SKIP
        {'base': 'tiny', ...}
    """
    options = read_config(options)
    _validate(options)
    offline()
    precision = resolve_precision(options.precision, options.device, _base(options))
    device_args = device_arguments(options.device, precision)
    digest = data_sha256(options.data)
    rows = _rows(options)
    cache = OutcomeCache(max_steps=options.episode_steps)
    draws = _draws(options, precision) if options.mode == "per_decision" else None
    trainer = _trainer(options, rows, cache, device_args, draws)
    choosing = time.perf_counter()
    try:
        if options.varied_states:
            trainer.train_dataset = _varied(options, trainer, rows, cache, draws)
        started = time.perf_counter()
        result = trainer.train(resume_from_checkpoint=True if options.resume else None)
    finally:  # a served sampler also closes at the end of training; on an error it must still unload and stop
        if hasattr(draws, "close"):
            draws.close()
    wall = time.perf_counter() - started
    trainer.model.save_pretrained(str(options.out))
    return write_manifest(options.out, base=_base_identity(options), data_sha256=digest, split=options.split,
                          role=options.role, hyper_parameters=_hyper(options, trainer.args),
                          metrics={**_metrics(options, result, wall, cache), "states": len(trainer.train_dataset),
                                   "states_recorded": len(rows),
                                   "state_choice_seconds": round(started - choosing, 3)}, kind="grpo",
                          extra={"init": _init_version(options), "mode": options.mode, "device": options.device,
                                 "precision": precision, "constrained": options.constrained,
                                 "sampler_url": options.sampler_url, "varied_states": options.varied_states})


def _validate(options: GrpoOptions) -> None:
    """Refuse what this trainer cannot do, saying what it can."""
    if options.role != "observer":
        raise ValueError(f"GRPO trains the observer (rewards come from its episodes) or the evolver (the scenario "
                         f"generator), not {options.role!r}")
    if options.mode not in MODES:
        raise ValueError(f"rollout.mode {options.mode!r} is unknown; use {' or '.join(MODES)}")
    if not isinstance(options.constrained, bool):
        raise ValueError(f"rollout.constrained is {options.constrained!r}; use true (schema-constrained sampling) "
                         "or false (TRL's own generation)")
    if options.sampler_url and options.mode != "per_decision":
        raise ValueError("--sampler-url draws per_decision groups; whole_episode rollouts sample in this process")
    if not isinstance(options.varied_states, bool):
        raise ValueError(f"rollout.varied_states is {options.varied_states!r}; use true (train on the states whose "
                         "draws end differently) or false (every recorded state)")
    if options.varied_states and options.mode != "per_decision":
        raise ValueError("rollout.varied_states chooses per_decision states; whole_episode rollouts start at the "
                         "episodes' starts")
    length = grpo_settings(options.grpo)["max_completion_length"]
    if options.constrained and length < MIN_DECISION_TOKENS:
        raise ValueError(f"grpo.max_completion_length {length} is too short for a decision that "
                         f"parses (the shortest takes up to 10 tokens); give {MIN_DECISION_TOKENS} or more")
    if options.resume and not list(Path(options.out, "checkpoints").glob("checkpoint-*")):
        raise ValueError(f"--resume found no checkpoint in {options.out}/checkpoints; run without --resume first")


def _rows(options: GrpoOptions) -> Any:
    """Return the train rows: every recorded decision (per_decision) or the episodes' starts (whole_episode)."""
    rows = load_view(options.data, "rl", options.split, "train").select_columns(list(COLUMNS))
    if options.mode == "whole_episode":
        rows = rows.filter(lambda row: row["decision_index"] == 0, keep_in_memory=True)
    return rows


def _trainer(options: GrpoOptions, rows, cache: OutcomeCache, device_args: dict, draws: Callable | None) -> Any:
    """Build the GRPOTrainer: base (+ the init adapter or a fresh LoRA), rewards, rollouts, metric sinks."""
    from trl import GRPOConfig

    from aoi.train.decisions import rows_trainer

    model, tokenizer, peft_config = _model(options)
    funcs, weights = reward_functions(options.weights)
    config = GRPOConfig(output_dir=str(Path(options.out) / "checkpoints"), max_steps=options.max_steps,
                        seed=options.seed, reward_weights=weights, **grpo_settings(options.grpo),
                        **device_args)
    return rows_trainer()(model=model, reward_funcs=funcs, args=config, train_dataset=rows,
                          processing_class=tokenizer, peft_config=peft_config,
                          callbacks=[*callbacks(options.out), follow_schedule()],
                          rollout_func=_rollout(options, cache, draws))


def follow_schedule() -> Any:
    """Return a callback that, on a resume, sets the learning rate to where this run's schedule is at that step.

    A checkpoint keeps the rate its own schedule had reached: 0 at the end of a linear decay. Resumed with more
    steps, training went on at that rate and logged `learning_rate: 0.0`; the schedule is rebuilt for the new
    `--max-steps` but its rate was not applied until the next scheduler step.
    """
    from transformers import TrainerCallback

    class FollowSchedule(TrainerCallback):
        """Re-apply the schedule's rate after the checkpoint's optimizer and scheduler were loaded."""

        def on_train_begin(self, args, state, control, optimizer=None, lr_scheduler=None, **kwargs):
            """Set each parameter group's rate (and the rate the trainer logs) from the schedule at this step."""
            scheduler = getattr(lr_scheduler, "scheduler", lr_scheduler)
            lambdas = getattr(scheduler, "lr_lambdas", None)
            if optimizer is None or not lambdas or not state.global_step:
                return
            rates = [base * rate(state.global_step) for base, rate in zip(scheduler.base_lrs, lambdas)]
            for group, value in zip(optimizer.param_groups, rates):
                group["lr"] = value
            scheduler._last_lr = rates

    return FollowSchedule()


def _rollout(options: GrpoOptions, cache: OutcomeCache, draws: Callable | None) -> Callable:
    """Return the trainer's rollout_func: whole episodes, or one decision per sample (by `draws`) played."""
    if options.mode == "whole_episode":
        from aoi.train.episodes import rollout_function

        return rollout_function(cache, options.episode_steps, options.seed, options.episode_iterations,
                                options.constrained)
    from aoi.train.decisions import decision_rollout

    return decision_rollout(draws, cache, log=Path(options.out) / "samples.jsonl")


def _varied(options: GrpoOptions, trainer: Any, rows, cache: OutcomeCache, draws: Callable) -> Any:
    """Return the rows whose G draws by the starting policy end with different rewards (the texts only: a served
    sampler skips its scoring requests)."""
    from aoi.train.decisions import varied_rows

    def decoded(prompts: list, trainer: Any) -> list[str]:
        return trainer.processing_class.batch_decode(draws(prompts, trainer)["completion_ids"],
                                                     skip_special_tokens=True)

    return varied_rows(rows, getattr(draws, "texts", decoded), trainer, cache, group=trainer.args.num_generations,
                       weights=options.weights, log=Path(options.out) / "states.jsonl",
                       policy=_init_version(options) or f"{_base(options)} with a fresh LoRA")


def _draws(options: GrpoOptions, precision: str) -> Callable:
    """Return how per-decision samples are drawn: on a vLLM server (serving the trainer's precision), schema-
    constrained here, or by TRL itself."""
    if options.sampler_url:
        from aoi.train.served_rollout import served_rollout

        return served_rollout(options.sampler_url, base=_base(options), out=options.out, seed=options.seed,
                              constrained=options.constrained, precision=precision)
    if options.constrained:
        from aoi.train.sampling import local_draws

        return local_draws(options.seed)
    from aoi.train.decisions import trl_generation

    return trl_generation


def _model(options: GrpoOptions) -> tuple[Any, Any, Any]:
    """Return (model, tokenizer, peft config): the init adapter made trainable, or the base with a fresh LoRA."""
    from aoi.models.bases import load_base

    model, tokenizer = load_base(_base(options), options.device)
    if options.init is None:
        return model.train(), tokenizer, options.lora.peft()
    from peft import PeftModel

    read_manifest(options.init)  # a clear error for a folder that is not one of our adapters
    return PeftModel.from_pretrained(model, str(options.init), is_trainable=True).train(), tokenizer, None


def _base(options: GrpoOptions) -> str:
    """Return the base to load: --base, else the init adapter's, else tiny."""
    if options.base:
        return options.base
    return read_manifest(options.init)["base"] if options.init else "tiny"


def _base_identity(options: GrpoOptions) -> dict:
    """Return the base's identity for the manifest."""
    from aoi.models.bases import base_identity

    return base_identity(_base(options))


def _init_version(options: GrpoOptions) -> str | None:
    """Return the init adapter's version (None when GRPO started from a fresh LoRA)."""
    return read_manifest(options.init)["version"] if options.init else None


def _hyper(options: GrpoOptions, args) -> dict:
    """Return the hyper-parameters the manifest records: TRL's effective settings, weights, LoRA, mode."""
    chosen = {name: getattr(args, name) for name in sorted({*grpo_settings(options.grpo), "loss_type",
                                                            "scale_rewards", "epsilon", "num_iterations"})}
    lora = options.lora.as_dict() if options.init is None else {"from": str(options.init)}
    return {"grpo": chosen, "rewards": options.weights, "lora": lora, "mode": options.mode,
            "constrained": options.constrained, "varied_states": options.varied_states, "seed": options.seed,
            "max_steps": options.max_steps, "episode_steps": options.episode_steps,
            "episode_iterations": options.episode_iterations}


def _metrics(options: GrpoOptions, result, wall: float, cache: OutcomeCache) -> dict:
    """Return the run's figures: steps, speed, episodes played, and each reward's mean over the last log."""
    logged = [line for line in read_jsonl(Path(options.out) / "metrics.jsonl") if "reward" in line]
    last = logged[-1] if logged else {}
    rewards = {key: value for key, value in last.items() if key.startswith("rewards/") or key == "reward"}
    return {"steps": result.global_step, "wall_seconds": round(wall, 3), "episodes_played": cache.played,
            "steps_per_second": round(result.global_step / wall, 4) if wall else None, "last": rewards}


def options_dict(options: GrpoOptions) -> dict:
    """Return the options as plain data (for printing)."""
    return {k: str(v) if isinstance(v, Path) else v for k, v in asdict(options).items()}
