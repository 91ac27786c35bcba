"""Fuzz a served twin's API and print the tally: requests, 5xx (505, an HTTP version refused, aside), dropped
connections, hangs; then its health (kubectl, and the reconcile faults /readyz reports).

    .venv/bin/python benchmarks/api_fuzz.py [--count 2500] [--seed 0]
    PYTHONPATH=/tmp/aoi-team/base/src .venv/bin/python benchmarks/api_fuzz.py   # an older tree's server

The fuzzer is loaded by file path from this tree, so the same requests reach whichever server PYTHONPATH picks.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
import time
from pathlib import Path

from aoi.twin import build_twin
from aoi.twin.core.resources import RESOURCES
from aoi.twin.testing import Served

FUZZ = Path(__file__).resolve().parents[1] / "src" / "aoi" / "twin" / "api" / "fuzz.py"
NS = "test-hotel-reservation"


def load_fuzzer():
    """Import the fuzzer of this tree, whatever `aoi` resolves to."""
    spec = importlib.util.spec_from_file_location("api_fuzz_tree", FUZZ)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


def main() -> None:
    """Serve a HotelReservation twin, fuzz it, and print the figures."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=2500)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=3.0, help="client seconds before a request is a hang")
    args = parser.parse_args()
    fuzz = load_fuzzer()
    with tempfile.TemporaryDirectory() as folder:
        served = Served(build_twin(["hotel-reservation"]), Path(folder))
        served.server.read_timeout = 1.0  # a server that has it drops truncated bodies quickly
        pods = served.ok(f"get pods -n {NS} -o name").split()[:2]
        names = ["frontend", "nope", pods[0].split("/")[1], "kind-worker"]
        resources = [(r.group, r.version, r.plural, r.namespaced, r.subresources) for r in RESOURCES]
        paths = fuzz.served_paths(resources, [NS, "default", "missing"], names)
        tokens = list(served.twin.credentials.values())
        start = time.perf_counter()
        tally = fuzz.run(served.server.url, tokens, paths, args.count, args.seed, args.timeout)
        print(f"{tally.summary()} seconds={time.perf_counter() - start:.1f}")
        for outcome, line in tally.failures[:10]:
            print(f"  {outcome}: {line}")
        health = served.kubectl("get pods -A")
        print(f"after: kubectl get pods -A exit={health.returncode} lines={len(health.stdout.splitlines())} "
              f"reconcile_faults={served.twin.faults.total} readyz={served.kubectl('get --raw /readyz').stdout!r}")
        served.close()


if __name__ == "__main__":
    main()
