"""Echo's figures: colocated vs sequential vs async (S = 1, 2, 4) on this machine, and a model of the speed-up.

For each mode it runs `--steps` GRPO steps of the Observer (per-decision rollouts in the twin, `--groups` groups of
`--generations` samples a step) and prints rollouts/s, train steps/s, trainer and sampler idle shares, staleness,
dropped groups, and the reward against wall-clock. Then it models the speed-up of async over colocated with N
samplers from the measured costs (a group's generation + episodes, an update, a weight sync) and checks the model
against the runs made here (1 sampler each, and `--max-samplers`).

    nice -n 10 .venv/bin/python benchmarks/echo.py --base tiny --steps 6
    nice -n 10 .venv/bin/python benchmarks/echo.py --base smollm2 --steps 3
    nice -n 10 .venv/bin/python benchmarks/echo.py --base tiny --steps 4 --serve   # samplers on a loopback server

`--sampler-url URL` draws on an OpenAI-compatible server (vLLM) holding the base, `--sampler-url vllm` starts one
managed vLLM server on the base (fp32, as the trainer) for every mode; `--serve` starts aoi.echo.serve's loopback
server on the base in this process and uses it.

    nice -n 5 .venv/bin/python benchmarks/echo.py --base smollm2 --steps 2 --sampler-url vllm

On the learning benchmark's GRPO workload (its SFT adapter as the start, its GRPO states as the data; one group of 4
per step as its GRPO phase), colocated against async with 2 samplers, figures kept in a JSON file:

    nice -n -5 .venv/bin/python benchmarks/echo.py --init runs/learning/sft --data runs/learning/grpo-data \
        --groups 1 --generations 4 --max-tokens 256 --steps 10 --sampler-url vllm \
        --modes colocated,"async S=1 N=2" --results benchmarks/results/echo-learning.json

Figures of a run go to OUT/<label>/metrics.jsonl as well (Ray and the models load once per run, before the clock
starts: the rates are over the training loop only).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

from aoi.echo.engine import train_echo
from aoi.echo.run import EchoOptions
from aoi.train.common import read_jsonl
from aoi.train.grpo import GrpoOptions

TRAIN_PAIRS = [("scale_pod_zero_social_net-mitigation-1", None)]  # a mitigation problem of every split's train part


def teacher_data(work: Path) -> Path:
    """Run the expert on the train problems and export the dataset (the `rl` view GRPO trains on)."""
    from aoi.config import load_config
    from aoi.data.export import export
    from aoi.data.generate import generate

    generate(TRAIN_PAIRS, work / "teacher", load_config(overrides={"model": "expert"}, environ={}))
    export([work / "teacher"], work / "data", overwrite=True)
    return work / "data"


def run(args, data: Path, work: Path, label: str, mode: str, samplers: int = 1, staleness: int = 1) -> list[dict]:
    """Train --steps steps in one mode; return its metrics lines."""
    config = work / "grpo.yaml"
    config.write_text(yaml.safe_dump({"grpo": {"num_generations": args.generations, "max_completion_length":
                                               args.max_tokens, "per_device_train_batch_size":
                                               args.generations * args.groups, "learning_rate": args.learning_rate}}))
    grpo = GrpoOptions(data=data, out=work / label, base=None if args.init else args.base, init=args.init,
                       max_steps=args.steps, config=config, seed=args.seed)
    options = EchoOptions(grpo=grpo, mode=mode, samplers=samplers, staleness=staleness,
                          buffer_capacity=max(2, args.groups * (staleness + 1)), sampler_url=args.sampler_url)
    train_echo(options)
    return read_jsonl(work / label / "metrics.jsonl")


def figures(lines: list[dict]) -> dict:
    """Return a run's figures from its metrics lines."""
    last, wall = lines[-1], lines[-1]["wall"]
    tail = lines[len(lines) // 2:]  # the final reward: mean over the second half of the run
    return {"steps/s": len(lines) / wall, "rollouts/s": last["rollouts_per_s"], "tokens/s": last["tokens_per_s"],
            "trainer idle": last["trainer_idle"], "sampler idle": last["sampler_idle"],
            "staleness": statistics.mean(s for line in lines for s in line["staleness"]),
            "dropped": last["dropped_stale_total"], "reward": statistics.mean(line["reward"] for line in tail),
            "wall": wall}


def costs(colocated: list[dict], sequential: list[dict], groups: int) -> dict:
    """Return the measured unit costs: a group's generation + episodes, an update, a weight sync (seconds)."""
    per_group = [line["wall"] - prev - line["train_s"] for prev, line in
                 zip([0.0] + [x["wall"] for x in colocated], colocated)]
    syncs = [line["weight_sync_s"] for line in sequential if line["weight_sync_s"] > 0] or [0.0]
    return {"group": statistics.median(per_group) / groups, "update": statistics.median(x["train_s"] for x in
                                                                                         colocated),
            "sync": statistics.median(syncs)}


def modelled_speedup(cost: dict, samplers: int, groups: int, cores: float) -> float:
    """Return async steps/s over colocated steps/s with N samplers when `cores` cores run N samplers + a trainer."""
    colocated = 1 / (groups * cost["group"] + cost["update"])
    share = min(1.0, cores / (samplers + 1))  # each busy process's share of a core
    generate = samplers * share / (cost["group"] + cost["sync"])  # groups/s the samplers make
    train = share / cost["update"]  # steps/s the trainer could take
    return min(generate / groups, train) / colocated


def main() -> None:
    """Run the modes, print the table, the reward against wall-clock, and the speed-up model."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base", default="tiny")
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--groups", type=int, default=2, help="groups per step")
    parser.add_argument("--generations", type=int, default=2, help="samples per group (G)")
    parser.add_argument("--max-tokens", type=int, default=32)
    parser.add_argument("--max-samplers", type=int, default=2, help="async run with this many samplers (check)")
    parser.add_argument("--data", type=Path, default=None, help="dataset folder (default: the expert, made here)")
    parser.add_argument("--init", type=Path, default=None, help="start from this SFT adapter (its manifest names "
                        "the base; --base is then ignored)")
    parser.add_argument("--learning-rate", type=float, default=1e-4)
    parser.add_argument("--results", type=Path, default=None, help="also write the figures and curves here (JSON)")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sampler-url", default=None, help="samplers draw on this OpenAI-compatible server "
                        "(vllm: start one vLLM server on --base for every mode)")
    parser.add_argument("--serve", action="store_true", help="start the loopback server (aoi.echo.serve) on --base "
                        "here and draw on it")
    parser.add_argument("--modes", type=lambda text: text.split(","), help="comma list of colocated, sequential, "
                        "'async S=1', 'async S=2', 'async S=4' (the N-sampler check runs with 'async S=1'); "
                        "default: all", default=["colocated", "sequential", "async S=1", "async S=2", "async S=4"])
    args = parser.parse_args()
    work = args.out or Path(tempfile.mkdtemp(prefix="echo-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    if args.init:
        args.base = json.loads((args.init / "manifest.json").read_text())["base"]
    data = args.data or teacher_data(work)
    plan = {"colocated": ("colocated", 1, 1), "sequential": ("sequential", 1, 1),
            **{f"async S={s}": ("async", 1, s) for s in (1, 2, 4)},
            f"async S=1 N={args.max_samplers}": ("async", args.max_samplers, 1)}
    chosen = [label for label in plan if label.split(" N=")[0] in args.modes or label in args.modes]
    with contextlib.ExitStack() as stack:
        if args.serve:
            from aoi.echo.serve import PolicyServer, Running

            server = Running(PolicyServer(args.base))
            stack.callback(server.close)
            args.sampler_url = server.url
        else:  # `vllm`: one managed vLLM server for every mode, as `aoi train grpo --sampler-url vllm` starts it
            from aoi.train.served import sampler_server

            args.sampler_url = stack.enter_context(sampler_server(args.sampler_url, args.base))
        runs = {label: run(args, data, work, label.replace(" ", "-").replace("=", ""), plan[label][0],
                           samplers=plan[label][1], staleness=plan[label][2]) for label in chosen}
    report(args, runs)
    if args.results:
        keep(args, runs)


def keep(args, runs: dict) -> None:
    """Write the command, commit, machine load, each mode's figures and its reward per step and wall-clock."""
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    data = {"command": "python " + " ".join(sys.argv), "commit": commit, "cores": os.cpu_count(),
            "load_average_end": round(os.getloadavg()[0], 2), "base": args.base, "init": str(args.init or ""),
            "steps": args.steps, "groups": args.groups, "generations": args.generations,
            "figures": {label: figures(lines) for label, lines in runs.items()},
            "curves": {label: [{"step": i + 1, "wall": round(line["wall"], 1), "reward": line["reward"]}
                               for i, line in enumerate(lines)] for label, lines in runs.items()}}
    args.results.parent.mkdir(parents=True, exist_ok=True)
    args.results.write_text(json.dumps(data, indent=1) + "\n")
    print(f"figures kept in {args.results}")


def report(args, runs: dict) -> None:
    """Print the figures, the reward against wall-clock, and the model checked against the runs."""
    table = {label: figures(lines) for label, lines in runs.items()}
    print(f"samplers on {args.sampler_url or 'their own local policy'}")
    print(f"base {args.base}, {args.steps} steps of {args.groups} groups x {args.generations} samples, "
          f"load average {os.getloadavg()[0]:.1f} at the end, {os.cpu_count()} cores")
    print(f"{'mode':<16}" + "".join(f"{k:>13}" for k in next(iter(table.values()))))
    for label, row in table.items():
        print(f"{label:<16}" + "".join(f"{v:>13.3f}" for v in row.values()))
    print("\nreward against wall-clock (s:reward per step)")
    for label, lines in runs.items():
        print(f"{label:<16} " + " ".join(f"{line['wall']:.0f}:{line['reward']:.2f}" for line in lines))
    synced = runs.get("sequential") or runs.get("async S=1")  # a one-sampler run: the weight sync's cost
    if "colocated" not in runs or synced is None:
        return
    cost = costs(runs["colocated"], synced, args.groups)
    print(f"\nmeasured costs (median s): {json.dumps({k: round(v, 3) for k, v in cost.items()})}")
    base = table["colocated"]["steps/s"]
    for n in (1, 2, 4, 8):
        print(f"model N={n}: async/colocated {modelled_speedup(cost, n, args.groups, 2):.2f}x on 2 cores, "
              f"{modelled_speedup(cost, n, args.groups, math.inf):.2f}x with a core each")
    for label, n in (("async S=1", 1), (f"async S=1 N={args.max_samplers}", args.max_samplers)):
        if label in table:
            print(f"measured {label}: {table[label]['steps/s'] / base:.2f}x colocated "
                  f"(model on 2 cores: {modelled_speedup(cost, n, args.groups, 2):.2f}x)")


if __name__ == "__main__":
    main()
