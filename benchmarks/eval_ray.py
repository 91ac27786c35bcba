"""Print `aoi eval` wall time and episodes per hour with the local pool and with the Ray pool, same eval, interleaved.

The Ray figure includes starting (and stopping) a local Ray instance, as `aoi eval --engine ray` without
--ray-address does; with --ray-address the pool joins that cluster instead. Each round runs the engines one after the
other in fresh run directories; the medians over rounds are printed last, with whether every episode's outcome
(success, strict success, failure, env steps, model calls, TTx) came out the same on both engines. (Token counts may
differ: an exported telemetry folder's random name is part of what the agents read.)

Run: python benchmarks/eval_ray.py [--workers 2] [--problems N] [-k 1] [--rounds 3] [--ray-address ADDR]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from rich.console import Console

from aoi.config import load_config
from aoi.evaluate.runner import run_eval
from aoi.evaluate.select import select

OUTCOME = ("success", "strict_success", "failure", "steps", "model_steps", "ttx")


def measure(engine: str, pairs: list, k: int, workers: int, address: str | None) -> tuple[float, int, dict]:
    """Run the eval once on one engine; return (wall seconds, episodes, each episode's outcome by key)."""
    config = load_config(overrides={"model": "expert"}, environ={})
    out = Path(tempfile.mkdtemp(prefix=f"aoi-bench-{engine}-"))
    executor = "ray" if engine == "ray" else "process"
    started = time.monotonic()
    summary = run_eval(pairs, k, workers, config, out, executor=executor, console=Console(quiet=True),
                       ray_address=address)
    wall = time.monotonic() - started
    rows = {(r["problem_id"], r["attempt"]): [r[field] for field in OUTCOME]
            for r in map(json.loads, (out / "results.jsonl").read_text().splitlines())}
    episodes = summary.overall["episodes"]
    print(f"{engine:5s} workers={workers} episodes={episodes} wall={wall:.1f}s -> {episodes * 3600 / wall:.0f} "
          f"episodes/h", flush=True)
    return wall, episodes, rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--problems", type=int, default=8)
    parser.add_argument("-k", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--app", default="hotel-reservation")
    parser.add_argument("--ray-address", default=None)
    args = parser.parse_args()
    pairs, _ = select("all", app=args.app)
    step = max(1, len(pairs) // args.problems)
    chosen = pairs[::step][:args.problems]  # spread over task types
    walls, same = {"local": [], "ray": []}, True
    for _ in range(args.rounds):
        results = {engine: measure(engine, chosen, args.k, args.workers, args.ray_address) for engine in walls}
        for engine, (wall, episodes, _) in results.items():
            walls[engine].append((wall, episodes))
        same = same and results["local"][2] == results["ray"][2]
    for engine, runs in walls.items():
        wall = statistics.median(w for w, _ in runs)
        print(f"median {engine:5s}: wall {wall:.1f}s, {runs[0][1] * 3600 / wall:.0f} episodes/h over {len(runs)} "
              f"round(s)")
    print(f"every episode's outcome identical on both engines: {same}")


if __name__ == "__main__":
    main()
