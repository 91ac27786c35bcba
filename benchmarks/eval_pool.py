"""Print eval throughput (episodes per hour) with process workers and with thread workers, same problems and model.

Run: python benchmarks/eval_pool.py [--workers N] [--problems N] [--model expert]
"""

from __future__ import annotations

import argparse
import tempfile
import time

from rich.console import Console

from aoi.config import load_config
from aoi.evaluate.runner import run_eval
from aoi.evaluate.select import select


def measure(executor: str, pairs: list, workers: int, model: str) -> float:
    """Return episodes per hour for one executor kind (fresh run directory, k=1)."""
    config = load_config(overrides={"model": model}, environ={})
    out = tempfile.mkdtemp(prefix=f"aoi-bench-{executor}-")
    started = time.monotonic()
    summary = run_eval(pairs, 1, workers, config, out, executor=executor, console=Console(quiet=True))
    wall = time.monotonic() - started
    print(f"{executor:8s} workers={workers} episodes={summary.overall['episodes']} wall={wall:.1f}s "
          f"-> {summary.overall['episodes'] * 3600 / wall:.0f} episodes/h")
    return wall


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--problems", type=int, default=12)
    parser.add_argument("--model", default="expert")
    args = parser.parse_args()
    pairs, _ = select("all")
    step = max(1, len(pairs) // args.problems)
    chosen = pairs[::step][:args.problems]  # spread over task types and apps
    for executor in ("process", "thread"):
        measure(executor, chosen, args.workers, args.model)


if __name__ == "__main__":
    main()
