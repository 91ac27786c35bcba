"""The phases of benchmarks/learning.py: each writes into the work folder and is skipped once its marker is there.

A phase is done when `WORK/phases/<name>.json` exists (written last, with its wall seconds); its output stays where
it is and later phases read it. A phase that was killed runs again: the teacher data and every evaluation are
`aoi eval` run directories, which keep their finished episodes; SFT and GRPO continue from their newest complete
checkpoint (or start afresh when none was written). A resumed phase's seconds are those of the session that finished
it (the killed session's part is not counted).
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import yaml
from learning_plan import Size, pairs

SETS = {"held-out targets": "targets", "held-out families": "families"}


def marker(work: Path, name: str) -> Path:
    """Return the done marker of a phase."""
    return work / "phases" / f"{name}.json"


def run_phase(work: Path, name: str, action) -> dict:
    """Run a phase unless its marker says it is done; write the marker; return it."""
    path = marker(work, name)
    if path.is_file():
        record = json.loads(path.read_text())
        print(f"phase {name}: done before ({record['seconds']:.0f} s), skipped", flush=True)
        return record
    print(f"phase {name}: running", flush=True)
    started = time.time()
    detail = action() or {}
    record = {"phase": name, "seconds": round(time.time() - started, 1), "finished_at": time.time(), **detail}
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(record, indent=1) + "\n")
    temporary.replace(path)
    print(f"phase {name}: done in {record['seconds']:.0f} s", flush=True)
    return record


def teacher(work: Path, keys: list[str], folder: str, size: Size, attempts: int = 1) -> dict:
    """The expert team on these keys, `attempts` seeds each (an `aoi eval` run directory WORK/FOLDER, resumable)."""
    from aoi.config import load_config
    from aoi.data.generate import generate

    if not keys:  # e.g. no train-side no-fault problem under another split seed
        return {"episodes": 0}
    # the same step budget as GRPO's rollouts (their replay of a recorded prefix must see the same prompts), and the
    # compact decision format every local Observer is prompted in (the expert writes it when prompted so)
    config = load_config(overrides={"model": "expert", "env.max_steps": size.episode_steps,
                                    "agent.decision_format": "compact"}, environ={})
    generate(pairs(keys), work / folder, config, k=attempts, workers=size.workers)
    _check_complete(work / folder, len(keys) * attempts)  # an interrupted `generate` returns without raising
    return {"episodes": len(keys) * attempts}


def export(work: Path, sources: list[str], out: str) -> dict:
    """The trajectories of the WORK/SOURCES as datasets in WORK/OUT (rewritten whole: it takes seconds)."""
    from aoi.data.export import export as write

    return {"counts": write([work / source for source in sources if (work / source).is_dir()], work / out,
                            overwrite=True)}


def _fresh_unless_checkpoint(out: Path, keep: tuple[str, ...] = ()) -> bool:
    """Return whether `out` has a complete checkpoint to resume from; otherwise empty it (a killed first stretch)
    but for the files named in `keep`."""
    done = [p for p in (out / "checkpoints").glob("checkpoint-*") if (p / "trainer_state.json").is_file()]
    if not done and out.exists():
        for path in out.iterdir():
            if path.is_dir():
                shutil.rmtree(path)
            elif path.name not in keep:
                path.unlink()
    return bool(done)


def checkpoint_share(curve: tuple[float, ...]) -> float:
    """Return the share of a run's steps between its checkpoints: the curve's first point before the end, else a
    quarter (a run still resumes from a checkpoint; a share of 1.0 would read as "every step").

    Example:
        >>> checkpoint_share((0.25, 0.5, 1.0)), checkpoint_share((1.0,))
        (0.25, 0.25)
    """
    return min((share for share in curve if share < 1), default=0.25)


def sft(work: Path, size: Size, seed: int, device: str = "cpu") -> dict:
    """SFT from the base on `device`, checkpoints at the curve's shares; resumes from the newest checkpoint."""
    from aoi.train.sft import SftOptions, train_sft

    out = work / "sft"
    resume = _fresh_unless_checkpoint(out)
    every = checkpoint_share(size.sft_curve)
    manifest = train_sft(SftOptions(data=work / "data", out=out, base=size.base, epochs=size.sft_epochs,
                                    learning_rate=size.sft_lr, max_length=size.sft_max_length, seed=seed,
                                    save_steps=every, eval_every=every, resume=resume, device=device))
    return {"resumed": resume, "steps": manifest["metrics"]["steps"], "device": device,
            "precision": manifest["precision"]}


def grpo(work: Path, size: Size, seed: int, engine: str, device: str = "cpu") -> dict:
    """GRPO from the SFT adapter on `device`, on the states of WORK/grpo-data (keys SFT never saw), checkpoints at the
    curve's shares; resumes from the newest checkpoint (and, with `size.varied_states`, from the states drawn).

    With the vLLM engine the groups are drawn on a managed vLLM server (`--sampler-url vllm`: each new adapter is
    loaded there before the next group); the trainer stays on torch."""
    from aoi.train.grpo import GrpoOptions, train_grpo

    out, config = work / "grpo", work / "grpo.json"
    resume = _fresh_unless_checkpoint(out, keep=("states.jsonl",))  # the state choice's draws (~30 min) are kept
    curve = max(1, round(min(size.grpo_curve) * size.grpo_steps))
    every = math.gcd(curve, 5)  # a checkpoint at every curve point, and at most 5 steps lost when a run is killed
    # aoi.train.grpo's defaults take one sequence per forward and a group per optimizer step (grpo_settings)
    settings = {"grpo": {"num_generations": size.group, "learning_rate": size.grpo_lr,
                         "max_completion_length": size.max_new_tokens, "save_steps": every,
                         "save_total_limit": None},
                "rollout": {"episode_steps": size.episode_steps, "varied_states": size.varied_states}}
    config.write_text(json.dumps(settings, indent=1) + "\n")
    manifest = train_grpo(GrpoOptions(data=work / "grpo-data", out=out, init=work / "sft", max_steps=size.grpo_steps,
                                      seed=seed, config=config, resume=resume,
                                      sampler_url="vllm" if engine == "vllm" else None, device=device))
    return {"resumed": resume, "steps": manifest["metrics"]["steps"], "sampling": engine, "device": device}


def checkpoint_at(run: Path, share: float) -> tuple[Path, int]:
    """Return (adapter folder, step) nearest to `share` of a finished run's steps (1.0: the final adapter)."""
    steps = json.loads((run / "manifest.json").read_text())["metrics"]["steps"]
    if share >= 1.0:
        return run, steps
    found = {int(p.name.rpartition("-")[2]): p for p in (run / "checkpoints").glob("checkpoint-*")}
    if not found:
        raise SystemExit(f"{run}/checkpoints holds no checkpoint; delete {run} and its phase marker, then rerun")
    step = min(found, key=lambda s: abs(s - share * steps))
    return found[step], step


def observer_spec(size: Size, adapter: Path | None, engine: str, device: str = "cpu") -> str:
    """Return the Observer's model spec: the base, an adapter, the decision cap, and vLLM or the device.

    Example:
        >>> from learning_plan import SIZES
        >>> observer_spec(SIZES["quick"], None, "transformers", "cuda")
        'local:smollm2+max_new_tokens=192+threads=1+device=cuda'
    """
    spec = f"local:{size.base}" + (f"+adapter={adapter}" if adapter else "")
    spec += f"+max_new_tokens={size.max_new_tokens}"
    if engine == "vllm":  # the server chooses its own device
        return spec + "+engine=vllm"
    return spec + "+threads=1" + (f"+device={device}" if device != "cpu" else "")


def evaluate(work: Path, variant: str, observer: str, keys: dict, size: Size, seed: int,
             sets: tuple[str, ...]) -> dict:
    """Evaluate one variant on held-out sets with `aoi eval` (same keys, same seeds); return its run folders."""
    folder = work / "eval" / variant
    folder.mkdir(parents=True, exist_ok=True)
    config = folder / "config.yaml"
    models = {} if observer == "expert" else {"observer": {"spec": observer}}
    config.write_text(yaml.safe_dump({"model": "expert", "models": models, "env": {"max_steps": size.episode_steps},
                                      "agent": {"max_iterations": size.max_iterations}}))
    runs = {}
    for name in sets:
        out = folder / SETS[name]
        _aoi_eval(work, f"{variant}-{SETS[name]}", ["--keys", ",".join(keys[name]), "--out", str(out),
                  "--config", str(config), "-k", str(size.seeds), "--seed", str(seed), "--workers", str(size.workers)])
        _check_complete(out, len(keys[name]) * size.seeds)
        runs[name] = str(out)
    return {"observer": observer, "runs": runs}


def _check_complete(run: Path, expected: int) -> None:
    """Stop the benchmark when an evaluation recorded fewer episodes than it planned (its log says why)."""
    path = run / "results.jsonl"
    got = sum(1 for line in path.read_text().splitlines() if line.strip()) if path.is_file() else 0
    if got < expected:
        raise SystemExit(f"{run} holds {got} of its {expected} episodes (see WORK/logs); rerun the benchmark to "
                         "retry the missing ones")


def _aoi_eval(work: Path, label: str, args: list[str]) -> None:
    """Run `aoi eval` with its output in WORK/logs/LABEL.log; stop the benchmark when it fails.

    The eval runs in its own session, so an interrupt reaches it once, from here: interrupted (Ctrl-C, or SIGTERM
    to the benchmark), the benchmark stops the eval, which keeps its finished episodes, and waits for it to end."""
    log = work / "logs" / f"{label}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("a") as handle:
        child = subprocess.Popen([sys.executable, "-m", "aoi", "eval", *args], stdout=handle,
                                 stderr=subprocess.STDOUT, env={**os.environ, "COLUMNS": "160"},
                                 start_new_session=True)
        try:
            code = child.wait()
        except KeyboardInterrupt:
            child.terminate()
            child.wait()
            raise
    if code != 0:
        tail = "\n".join(log.read_text().splitlines()[-5:])
        raise SystemExit(f"`aoi eval {' '.join(args)}` exited {code}; see {log}:\n{tail}")
