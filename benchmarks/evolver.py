"""Print what a short GRPO run of the scenario generator produces: each reward dimension's mean per step and the
number of valid new scenarios.

It writes a seed file (the first seed scenario of each of --apps apps, from aoi.problems.seeds), then runs
`aoi train grpo --role evolver` (the real command, in-process) on SmolLM2-135M by default: G candidates per seed per
step, sampled under the scenario decoding schema (`--free` for free decoding), each executed in a fresh twin and scored
by aoi.evolve.rewards. Per step it prints the mean of every dimension, the weighted reward, how many candidates parsed
and passed the format and scope checks ("valid"), how many injected a fault their own solution fixed ("executable"),
and the step's wall time. All candidates stay in OUT/candidates.jsonl.

Run (CPU, minutes per step):  nice -n 10 python benchmarks/evolver.py --base smollm2 --steps 3 --group 2 --apps 2 &
Smoke run:                    python benchmarks/evolver.py --base tiny --steps 1 --group 2 --apps 1 --max-tokens 32

The guidance part of issue 13 (avg@k and spread with and without `--guidance`) is benchmarks/guidance_ablation.py;
`--ablation ARGS` runs it after the GRPO run with those arguments, e.g. --ablation "--model expert -k 3 --limit 2".
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

import yaml

from aoi.evolve.rewards import DEFAULT_WEIGHTS
from aoi.problems.scenarios import dumps
from aoi.problems.seeds import seed_scenarios
from aoi.train.evolver import train_evolver
from aoi.train.grpo import GrpoOptions


def write_seeds(apps: int, path: Path) -> list[str]:
    """Write the first seed scenario of each of the first `apps` apps; return their ids."""
    chosen: dict[str, object] = {}
    for seed in seed_scenarios():
        chosen.setdefault(seed.app, seed)
    picked = list(chosen.values())[:apps]
    path.write_text("".join(dumps(s) + "\n" for s in picked))
    return [s.id for s in picked]


def write_config(args, path: Path) -> Path:
    """Write the GRPO config: one step sees every seed once, G candidates each."""
    grpo = {"num_generations": args.group, "per_device_train_batch_size": args.group * args.apps,
            "max_completion_length": args.max_tokens, "save_steps": args.steps, "learning_rate": args.lr}
    path.write_text(yaml.safe_dump({"grpo": grpo, "rollout": {"constrained": not args.free}}))
    return path


def report(out: Path, since: float) -> None:
    """Print per step: each dimension's mean, the reward, valid and executable counts, wall seconds (the first
    step's include the model load)."""
    lines = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines() if '"reward"' in x]
    candidates = [json.loads(x) for x in (out / "candidates.jsonl").read_text().splitlines()]
    names = list(DEFAULT_WEIGHTS)
    print("step  " + "  ".join(f"{n[:12]:>12}" for n in names) + "  reward  valid  executable  tokens  seconds")
    previous = since
    for line in lines:
        means = "  ".join(f"{line[f'rewards/{n}/mean']:12.3f}" for n in names)
        seconds = line["time"] - previous
        previous = line["time"]
        print(f"{line['step']:>4}  {means}  {line['reward']:6.3f}  {line['scenarios/valid']:>2}/"
              f"{line['scenarios/candidates']:<2}  {line['scenarios/executable']:>10}  "
              f"{line['completions/mean_length']:6.0f}  {seconds:7.0f}")
    valid = [c for c in candidates if c["valid"]]
    print(f"candidates {len(candidates)}: {len(valid)} valid (format and scope), "
          f"{sum(c['executable'] for c in candidates)} executable (a fault their solution fixes)")
    reasons = [c["errors"][0][:100] for c in candidates if c["errors"]]
    for reason in sorted(set(reasons), key=reasons.count, reverse=True)[:5]:
        print(f"  {reasons.count(reason)} x {reason}")
    if valid:
        print("median reward of the valid ones:", statistics.median(c["reward"] for c in valid))


def main() -> None:
    """Run the GRPO of the generator and print its figures; then the guidance ablation when asked."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default="smollm2", help="tiny, smollm2 or a model directory")
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--group", type=int, default=2, help="candidates per seed (GRPO's G)")
    parser.add_argument("--apps", type=int, default=2, help="seeds: the first seed scenario of this many apps")
    parser.add_argument("--max-tokens", type=int, default=512, help="max_completion_length")
    parser.add_argument("--lr", type=float, default=1e-5)
    parser.add_argument("--free", action="store_true", help="free decoding instead of the decoding schema")
    parser.add_argument("--out", type=Path, default=Path("runs/bench-evolver"))
    parser.add_argument("--ablation", default=None, help="arguments for benchmarks/guidance_ablation.py")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    ids = write_seeds(args.apps, args.out / "seeds.jsonl")
    print(f"seeds: {', '.join(ids)}; G={args.group}; base={args.base}; constrained={not args.free}", flush=True)
    started, since = time.perf_counter(), time.time()
    manifest = train_evolver(GrpoOptions(data=args.out / "seeds.jsonl", out=args.out / "adapter", role="evolver",
                                      base=args.base, max_steps=args.steps,
                                      config=write_config(args, args.out / "evolver.yaml")))
    print(f"wall {time.perf_counter() - started:.0f} s (model load included); adapter {manifest['version']}")
    report(args.out / "adapter", since)
    if args.ablation is not None:
        script = Path(__file__).with_name("guidance_ablation.py")
        subprocess.run([sys.executable, str(script), *shlex.split(args.ablation)], check=True, env=os.environ)


if __name__ == "__main__":
    main()
