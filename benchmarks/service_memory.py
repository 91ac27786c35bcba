"""Print what a Service over many pods costs: peak RSS, watch-history bytes and entries, slices, bring-up time.

Per size, a fresh subprocess builds a bare twin, creates Deployment `web` (N replicas) behind Service `web`, lets it
settle and run 60 simulated seconds, then prints one line. The watch history is bounded by bytes (64 MiB default),
so RSS should grow with the pods themselves, not with how often the Endpoints/EndpointSlices were rewritten.

Run: python benchmarks/service_memory.py [--sizes 250,1000] [--history-mib 64]
"""

from __future__ import annotations

import argparse
import subprocess
import sys

CHILD = """
import resource, sys, time
from aoi.twin import build_twin
from aoi.twin.core import operations
n, budget = int(sys.argv[1]), int(float(sys.argv[2]) * 2**20)
twin = build_twin([], seed=0)
twin.store.log.budget = budget
template = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [
    {"name": "web", "image": "nginx:1.25", "ports": [{"containerPort": 80, "name": "http"}]}]}}
start = time.process_time()
with twin.lock:
    operations.create(twin, twin.resource("services"), "default", {"apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "web"},
        "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": "http"}]}})
    operations.create(twin, twin.resource("deployments"), "default", {"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web"}, "spec": {"replicas": n, "selector": {"matchLabels": {"app": "web"}},
                                             "template": template}})
    twin.settle()
    twin.advance(60)
cpu = time.process_time() - start
slices = [len(s.get("endpoints") or []) for s in twin.list("endpointslices", "default")
          if s["metadata"]["labels"].get("kubernetes.io/service-name") == "web"]
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(f"pods={n:>6}  cpu_s={cpu:7.1f}  peak_rss_mb={rss:6.0f}  history_mb={twin.store.log.bytes / 2**20:5.1f}  "
      f"history_entries={len(twin.store.log):>6}  slices={len(slices)} (largest {max(slices, default=0)})")
"""


def main() -> None:
    """Measure each size in its own process and print one line per size."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="250,1000", help="comma-separated replica counts")
    parser.add_argument("--history-mib", type=float, default=64.0, help="watch history budget in MiB")
    args = parser.parse_args()
    for size in args.sizes.split(","):
        done = subprocess.run([sys.executable, "-c", CHILD, size, str(args.history_mib)], capture_output=True,
                              text=True)
        print(done.stdout.strip() or f"pods={size}: failed: {done.stderr.strip().splitlines()[-1:]}")


if __name__ == "__main__":
    main()
