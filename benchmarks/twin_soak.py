"""Soak the twin for a while and print operations per second and the failures found (the long run of
tests/twin/test_soak.py: the same steps and invariants, drawn from a seeded random.Random instead of Hypothesis).

    nice -n 10 .venv/bin/python benchmarks/twin_soak.py --minutes 20 --seed 1 > /tmp/twin_soak.txt

A sequence runs on a fresh clone of an all-apps twin for --sequence steps (or until something breaks); each distinct
failure is printed once with the steps that led to it. The last lines are the figures.
"""

from __future__ import annotations

import argparse
import logging
import random
import re
import time
from collections import Counter

from aoi.problems.app_health import AppHealth
from aoi.twin import build_twin
from aoi.twin.soak import Soak
from aoi.twin.soak_ops import RandomDraw


def signature(failure: str) -> str:
    """Return a failure without the names and numbers that differ between occurrences of one bug."""
    return re.sub(r"'[^']*'|\"[^\"]*\"|\d+", "_", failure)[:160]


def main() -> None:
    """Run the soak for --minutes and print the figures."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--minutes", type=float, default=20.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--sequence", type=int, default=200, help="steps on one clone before a fresh one")
    args = parser.parse_args()
    logging.getLogger("aoi.twin").setLevel(logging.CRITICAL)  # faults are reported below, once each
    soak = Soak(build_twin(seed=0), checks=[AppHealth()])
    draw, outcomes, seen, history = RandomDraw(random.Random(args.seed)), Counter(), {}, []
    steps, start = 0, time.perf_counter()
    end = start + args.minutes * 60
    while time.perf_counter() < end:
        if len(history) >= args.sequence:
            soak.begin()
            history = []
        label = soak.step(draw)
        history.append(label)
        steps += 1
        outcomes[label.rsplit("-> ", 1)[-1] if "-> " in label else label.split()[0]] += 1
        found = soak.check()
        for failure in found:
            if signature(failure) not in seen:
                seen[signature(failure)] = failure
                print(f"FAILURE at step {steps}:\n  " + "\n  ".join(h[:300] for h in history[-6:]) +
                      f"\n  => {failure[:800]}", flush=True)
        if found:
            soak.begin()
            history = []
        if steps % 1000 == 0:
            print(f"... {steps} steps, {steps / (time.perf_counter() - start):.1f}/s, {len(seen)} distinct failures",
                  flush=True)
    elapsed = time.perf_counter() - start
    soak.close()
    requests = sum(n for k, n in outcomes.items() if k.isdigit() or k in ("dropped", "hang"))
    print(f"seed={args.seed} minutes={elapsed / 60:.1f} steps={steps} ops_per_s={steps / elapsed:.1f} "
          f"api_requests={requests} sequences={soak.sequence} distinct_failures={len(seen)}")
    print(f"outcomes={dict(sorted(outcomes.items()))}")


if __name__ == "__main__":
    main()
