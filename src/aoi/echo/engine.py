"""`aoi train grpo --engine echo`: validation, the run's preparation, the co-located baseline, and the manifest.

Modes: `colocated` (one process: draw the step's groups, then train on them; the baseline), `sequential` (Ray: the
trainer pulls groups from sampler actors that refresh to its version first; staleness 0) and `async` (Ray: samplers
push version-tagged groups into the replay buffer without waiting; the trainer takes those at most S versions old
and drops the rest). The Ray modes live in aoi.echo.swarm; the options and the run's parts in aoi.echo.run.
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

from aoi.echo.groups import reward_scale
from aoi.echo.metrics import Clock, MetricsLog
from aoi.echo.run import MODES, EchoOptions, Run
from aoi.echo.sampler import Sampler, SamplerSpec
from aoi.echo.trainer import Trainer, TrainSpec
from aoi.train.grpo import COLUMNS, grpo_settings, read_config
from aoi.train.rewards import check_weights
from aoi.train.served import AUTO, check_server, release_adapters, sampler_server


def validate(options: EchoOptions) -> None:
    """Refuse what Echo cannot run, saying what it can."""
    if options.mode not in MODES:
        raise ValueError(f"--mode {options.mode!r} is unknown; use colocated, sequential or async")
    if options.samplers < 1 or options.staleness < 0:
        raise ValueError(f"--samplers {options.samplers} and --staleness {options.staleness}: give at least 1 "
                         "sampler and a staleness of 0 or more")
    _check_out(Path(options.grpo.out), options.grpo.resume)
    if options.grpo.role != "observer" or options.grpo.mode != "per_decision":
        raise ValueError(f"--engine echo trains the observer on per_decision rollouts (got role "
                         f"{options.grpo.role!r}, mode {options.grpo.mode!r}); use --engine trl for the others")
    check_weights(options.grpo.weights)  # the samplers weight the terms as TRL does: the same names
    if options.grpo.precision != "auto":
        raise ValueError(f"--precision {options.grpo.precision}: Echo's trainer computes in its policy's dtype (fp32 "
                         "on CPU, bf16 on CUDA); --precision chooses --engine trl's")


def _check_out(out: Path, resume: bool) -> None:
    """Refuse to mix a new run into an earlier one's folder, and a resume without a checkpoint."""
    if not resume and ((out / "metrics.jsonl").is_file() or any(out.glob("checkpoints/step-*"))):
        raise ValueError(f"{out} holds an earlier run (metrics.jsonl, checkpoints); pass --resume to continue it "
                         "or choose a new --out")
    if resume and not any(out.glob("checkpoints/step-*")):
        raise ValueError(f"--resume found no checkpoint in {out}/checkpoints; run without --resume first")


def prepare(options: EchoOptions) -> Run:
    """Read the config and dataset; return the run's shared parts (metrics log started)."""
    from aoi.train.common import offline
    from aoi.train.dataset import load_view

    options.grpo = read_config(options.grpo)
    validate(options)
    if options.sampler_url and options.sampler_url != AUTO:  # a bad URL or a server not answering: a clear error
        check_server(options.sampler_url, options.sampler_model)  # before any actor starts
    offline()
    grpo, settings = options.grpo, grpo_settings(options.grpo.grpo)
    rows = load_view(grpo.data, "rl", grpo.split, "train").select_columns(list(COLUMNS)).to_list()
    base = grpo.base or (_init_base(grpo.init) if grpo.init else "tiny")
    init = str(grpo.init) if grpo.init else None
    policy = {"base": base, "init": init, "lora": grpo.lora, "device": grpo.device, "seed": grpo.seed, "threads": 1}
    sampler = SamplerSpec(base=base, init=init, lora=grpo.lora, device=grpo.device,
                          generations=settings["num_generations"], max_new_tokens=settings["max_completion_length"],
                          temperature=settings["temperature"], constrained=grpo.constrained,
                          episode_steps=grpo.episode_steps, weights=grpo.weights, seed=grpo.seed,
                          samplers=options.samplers, server_url=options.sampler_url,
                          server_model=options.sampler_model, adapter_dir=options.sampler_adapter_dir,
                          adapter_prefix=adapter_prefix(grpo.out))
    train = TrainSpec(learning_rate=settings["learning_rate"], epsilon=settings.get("epsilon", 0.2),
                      is_cap=settings.get("vllm_importance_sampling_cap", 3.0), temperature=settings["temperature"],
                      max_grad_norm=settings.get("max_grad_norm", 1.0), save_steps=int(grpo.grpo.get("save_steps", 1)),
                      scale_rewards=reward_scale(settings["scale_rewards"]))
    samples = settings["per_device_train_batch_size"] * settings["gradient_accumulation_steps"]
    per_step = max(1, samples // settings["num_generations"])
    Path(grpo.out).mkdir(parents=True, exist_ok=True)
    return Run(options=options, rows=rows, sampler=sampler, train=train, policy=policy, groups_per_step=per_step,
               log=MetricsLog(grpo.out), clock=Clock(started=time.perf_counter(), samplers=options.samplers))


def adapter_prefix(out: Path) -> str:
    """Return the name prefix of a run's adapters on the server: aoi- and a digest of its --out."""
    return "aoi-" + hashlib.sha256(str(Path(out).resolve()).encode()).hexdigest()[:6]


def _init_base(init: Path) -> str:
    """Return the base named by an init adapter's manifest."""
    from aoi.train.manifest import read_manifest

    return read_manifest(init)["base"]


def train_echo(options: EchoOptions) -> dict:
    """Run GRPO with the Echo engine in the chosen mode; write adapter, metrics and manifest; return the manifest.

    Example:
        >>> from aoi.train.grpo import GrpoOptions
        >>> grpo = GrpoOptions(data=Path("runs/data"), out=Path("runs/echo"), max_steps=4)  # doctest: +SKIP
        >>> train_echo(EchoOptions(grpo=grpo, mode="async", samplers=2, staleness=1))  # doctest: +SKIP
        {'base': 'tiny', ..., 'engine': 'echo', 'mode': 'async'}
    """
    run = prepare(options)
    try:
        precision = "bf16" if str(options.grpo.device).startswith("cuda") else "fp32"  # the policy's dtype
        with sampler_server(run.sampler.server_url, run.policy["base"], precision) as url:
            run.sampler.server_url = url
            try:
                summary, files = drive(run)
            finally:  # the samplers' last adapters leave the server with the run
                if url:
                    release_adapters(url, run.sampler.adapter_prefix)
    finally:
        run.log.close()
    return finish(run, summary, files)


def drive(run: Run) -> tuple[dict, dict]:
    """Run the chosen mode; return its summary and the final adapter's files."""
    if run.options.mode == "colocated":
        return colocated(run)
    from aoi.echo.swarm import swarm

    return swarm(run)


def colocated(run: Run) -> tuple[dict, dict]:
    """Draw each step's groups, then train on them, in this one process (the sampler shares the trainer's model).

    With --sampler-url the sampler draws on the server instead, after loading the trainer's adapter into it each
    step (its seconds count as weight sync), so the baseline compares like for like with the Ray modes. With
    `--sampler-url vllm` a managed vLLM server on the base is started for the run (aoi.train.served.sampler_server).
    """
    from aoi.echo.weights import adapter_files

    run.clock.samplers = 1
    trainer = Trainer(run.train, run.policy, run.options.grpo.out, resume=run.options.grpo.resume)
    sampler = Sampler(0, run.sampler, run.rows, model=trainer.model, tokenizer=trainer.tokenizer)
    busy, run.clock.started = 0.0, time.perf_counter()  # the clock starts when the models are loaded
    while trainer.step < run.options.grpo.max_steps:
        if run.sampler.server_url and sampler.version != trainer.version:
            sampler.swap(trainer.version, adapter_files(trainer.model))
        groups = [sampler.draw(row, version=trainer.version) for row in run.rows_of(trainer.step)]
        busy += sum(g.busy_s for g in groups)
        run.record(groups, trainer.update(groups), busy)
    return {"steps": trainer.step, "version": trainer.version}, adapter_files(trainer.model)


def finish(run: Run, summary: dict, files: dict[str, bytes]) -> dict:
    """Write the final adapter and the manifest (kind grpo, engine echo) into --out; return the manifest."""
    from aoi.models.bases import base_identity
    from aoi.train.common import read_jsonl
    from aoi.train.dataset import data_sha256
    from aoi.train.manifest import write_manifest

    grpo, out = run.options.grpo, Path(run.options.grpo.out)
    for name, data in files.items():
        (out / name).write_bytes(data)
    lines = read_jsonl(out / "metrics.jsonl") if (out / "metrics.jsonl").is_file() else []
    last = lines[-1] if lines else {}
    metrics = {**summary, "wall_seconds": round(run.clock.wall(), 3),
               **{k: last[k] for k in ("reward", "rollouts_per_s", "tokens_per_s", "trainer_idle",
                                       "sampler_idle", "dropped_stale_total") if k in last}}
    hyper = {"grpo": grpo_settings(grpo.grpo), "rewards": grpo.weights, "lora": grpo.lora.as_dict(),
             "seed": grpo.seed, "max_steps": grpo.max_steps, "episode_steps": grpo.episode_steps,
             "groups_per_step": run.groups_per_step, "train": run.train.__dict__}
    return write_manifest(out, base=base_identity(run.policy["base"]), data_sha256=data_sha256(grpo.data),
                          split=grpo.split, role=grpo.role, hyper_parameters=hyper, metrics=metrics, kind="grpo",
                          extra={"engine": "echo", "mode": run.options.mode, "samplers": run.options.samplers,
                                 "staleness": run.options.staleness, "init": run.policy["init"],
                                 "constrained": grpo.constrained, "device": grpo.device,
                                 "sampler_url": run.options.sampler_url})
