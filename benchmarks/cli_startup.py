"""Print how long `aoi --help` and `aoi problems list` take to start: the median of N runs, and the modules that
cost most to import (python -X importtime).

    .venv/bin/python benchmarks/cli_startup.py [--runs 10]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

COMMANDS = (["--help"], ["problems", "list"])


def wall(args: list[str], runs: int) -> float:
    """Return the median wall time of `python -m aoi ARGS` over `runs` runs."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "aoi", *args], check=True, capture_output=True)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def heaviest_imports(args: list[str], top: int = 8) -> list[tuple[float, str]]:
    """Return the `top` top-level packages by cumulative import time (seconds) for one run."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "aoi", *args], check=True, capture_output=True,
                          text=True)
    costs: dict[str, float] = {}
    for line in done.stderr.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            name = parts[2].rstrip()
            if not name.startswith("  "):  # top level in the import tree: its cumulative time counts once
                costs[name.strip()] = costs.get(name.strip(), 0) + int(parts[1]) / 1e6
    return sorted(((t, n) for n, t in costs.items()), reverse=True)[:top]


def main() -> None:
    """Measure every command and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=10)
    runs = parser.parse_args().runs
    bare = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        bare.append(time.perf_counter() - started)
    print(f"python -c pass: median {statistics.median(bare):.3f}s (the interpreter's own start)")
    for args in COMMANDS:
        print(f"aoi {' '.join(args)}: median {wall(args, runs):.3f}s over {runs} runs")
        for seconds, name in heaviest_imports(args):
            print(f"    {seconds:6.3f}s  import {name}")


if __name__ == "__main__":
    main()
