"""Print expert episodes per hour over every twin problem (k=1) with 1 and with 2 process workers, the way
`aoi eval --problems all -k 1 --model expert --workers N` runs them, plus the CPU seconds per episode (all processes:
the eval, its workers and the kubectl runs) and the load average around each run.

Each run starts fresh worker processes, so the figure includes worker start-up and each worker's base twin builds.
Run: python benchmarks/episodes.py [--workers 1,2] [--repeat N] [--problems N]
Before/after: PYTHONPATH=<other tree>/src python benchmarks/episodes.py

Measured 2026-12-02 (2 shared cores, load 0.1-3.0, `--workers 2 --repeat 1` four times, before = e5c532a and after
alternating): before 6349, 5921, 5437, 6019 episodes/h at 0.96, 1.07, 1.09, 1.03 CPU s/episode; after 7161, 6642,
7274, 8018 episodes/h at 0.85, 0.90, 0.84, 0.77 CPU s/episode (medians 5970 -> 7218/h, 1.05 -> 0.85 CPU s: about
8,500/h on 2 idle cores; the 10,000/h target needs <= 0.72). One worker: 3390 -> 3933/h, 1.02 -> 0.82 CPU s.
Per episode after: ~8.8 kubectl processes at ~55-65 ms CPU each (Go start-up; ~0.5 s), ~0.2 s in the worker (first
reset ~45 ms, traffic ticks ~35 ms, API server ~35 ms, expert ~20 ms, get_metrics ~15 ms), ~0.08 s of worker
start-up (imports 1.5 s and three base twins 2.1 s per worker).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

from rich.console import Console

from aoi.config import load_config
from aoi.evaluate.runner import run_eval
from aoi.evaluate.select import select


def cpu_seconds() -> float:
    """Return the CPU time of this process and its reaped children (workers, and the kubectl runs they reaped)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def episodes_per_hour(pairs: list, workers: int) -> tuple[float, float, float, float]:
    """Run the expert once over `pairs` in a fresh directory; return (episodes/hour, strict success, wall seconds,
    CPU seconds per episode, all processes together)."""
    config = load_config(overrides={"model": "expert"}, environ={})
    out = tempfile.mkdtemp(prefix=f"aoi-episodes-w{workers}-")
    started, cpu = time.monotonic(), cpu_seconds()
    summary = run_eval(pairs, 1, workers, config, out, executor="process", console=Console(quiet=True))
    wall, cpu = time.monotonic() - started, cpu_seconds() - cpu  # the pool has joined its workers: all reaped
    episodes = summary.overall["episodes"]
    return episodes * 3600 / wall, summary.overall["strict_avg_at_k"], wall, cpu / episodes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--workers", default="1,2", help="comma-separated worker counts")
    parser.add_argument("--repeat", type=int, default=3, help="runs per worker count (the median is printed)")
    parser.add_argument("--problems", type=int, default=0, help="use every Nth problem's share (0: all)")
    args = parser.parse_args()
    pairs, _ = select("all")
    if args.problems:
        pairs = pairs[::max(1, len(pairs) // args.problems)][:args.problems]
    for workers in (int(w) for w in args.workers.split(",")):
        rates, cpus, loads = [], [], []
        for _ in range(args.repeat):
            before = os.getloadavg()[0]
            rate, strict, wall, cpu = episodes_per_hour(pairs, workers)
            rates.append(rate)
            cpus.append(cpu)
            loads.append(f"{before:.1f}->{os.getloadavg()[0]:.1f}")
            print(f"  workers={workers} {len(pairs)} episodes in {wall:.1f} s: {rate:.0f} episodes/h, "
                  f"{cpu:.2f} CPU s/episode, strict {strict:.0%} [load {loads[-1]}]", flush=True)
        # CPU per episode hardly depends on others' load; it bounds what N idle cores could do
        bound = min(workers, os.cpu_count() or 1) * 3600 / statistics.median(cpus)
        print(f"workers={workers}: median {statistics.median(rates):.0f} episodes/h over {len(rates)} runs "
              f"(target >= 10,000/h with 2 workers); {statistics.median(cpus):.2f} CPU s/episode, so at most "
              f"{bound:.0f} episodes/h on {min(workers, os.cpu_count() or 1)} idle core(s)")


if __name__ == "__main__":
    main()
