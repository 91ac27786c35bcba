"""Print how the twin scales with pods: a Deployment of N replicas brought up, with and without a Service.

Per size and Service flag, a fresh subprocess measures: CPU and wall seconds until every pod is Running (in-process,
simulated time stepped by hand), peak RSS and RSS per pod, `kubectl get pods -A` against the served twin as a ratio
to a bare `kubectl version --client`, and the longest `GET /api/v1/namespaces` wait while the same bring-up runs
served under the wall-clock ticker. The growth exponent is the log-log slope of CPU time against N.

Run: python benchmarks/scale.py [--sizes 1000,3000,10000] [--service-sizes 1000,3000] [--timeout 600]
Targets: exponent <= 1.2; 10k pods Running in < 60 s CPU; no API wait > 0.5 s; RSS <= 0.15 MB per pod (Service).
"""

from __future__ import annotations

import argparse
import http.client
import json
import math
import resource
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

NAMESPACE = "scale"
PODS_PER_NODE = 100
STEP_SECONDS = 1.0  # simulated time between checks for all-Running


def rss_mb() -> float:
    """Return this process's peak resident set size in MB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def prepare(twin, n: int, service: bool) -> None:
    """Add nodes for n pods and the namespace (and Service) the Deployment lives in, through the API layer."""
    from aoi.twin.bootstrap import node_object
    from aoi.twin.core import operations

    with twin.lock:
        for i in range(math.ceil(n / PODS_PER_NODE)):
            node = node_object(twin, f"scale-worker-{i}", f"172.19.{i // 250}.{i % 250 + 2}",
                               f"10.{100 + i // 256}.{i % 256}.0/24", False)
            operations.create(twin, twin.resource("nodes"), "", {**node, "apiVersion": "v1", "kind": "Node"})
        operations.create(twin, twin.resource("namespaces"), "", {"apiVersion": "v1", "kind": "Namespace",
                                                                     "metadata": {"name": NAMESPACE}})
        if service:
            operations.create(twin, twin.resource("services"), NAMESPACE, {
                "apiVersion": "v1", "kind": "Service", "metadata": {"name": "scale"},
                "spec": {"selector": {"app": "scale"}, "ports": [{"port": 80, "targetPort": 80}]}})
        twin.settle()


def deploy(twin, n: int) -> None:
    """Create the Deployment of n small pods."""
    from aoi.twin.core import operations

    container = {"name": "web", "image": "nginx:1.27", "ports": [{"containerPort": 80}]}
    with twin.lock:
        operations.create(twin, twin.resource("deployments"), NAMESPACE, {
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "scale"},
            "spec": {"replicas": n, "selector": {"matchLabels": {"app": "scale"}},
                     "template": {"metadata": {"labels": {"app": "scale"}}, "spec": {"containers": [container]}}}})


def running(twin, n: int) -> bool:
    """Tell whether n pods of the namespace are Running."""
    with twin.lock:
        pods = twin.list("pods", NAMESPACE)
        return len(pods) == n and all((p.get("status") or {}).get("phase") == "Running" for p in pods)


def fresh_twin():
    """Build a twin with the platform only, settled."""
    from aoi.twin import build_twin

    return build_twin([], warmup=30.0)


def bring_up(n: int, service: bool) -> dict:
    """Bring n pods up in-process; return CPU/wall seconds, simulated seconds and RSS figures."""
    twin = fresh_twin()
    prepare(twin, n, service)
    base_rss = rss_mb()
    cpu0, wall0, sim0 = time.process_time(), time.perf_counter(), twin.clock.now()
    deploy(twin, n)
    while not running(twin, n):
        twin.advance(STEP_SECONDS)
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    peak = rss_mb()
    return {"cpu_s": cpu, "wall_s": wall, "sim_s": twin.clock.now() - sim0, "rss_peak_mb": peak,
            "rss_per_pod_mb": (peak - base_rss) / n}


class Poller:
    """Poll GET /api/v1/namespaces on a served twin from a thread and keep the longest wait."""

    def __init__(self, port: int, token: str, cert: bytes):
        self.port, self.token = port, token
        self.ctx = ssl.create_default_context(cadata=cert.decode())
        self.ctx.check_hostname = False
        self.longest = 0.0
        self.requests = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> Poller:
        """Start polling."""
        self._thread.start()
        return self

    def _run(self) -> None:
        conn = http.client.HTTPSConnection("127.0.0.1", self.port, context=self.ctx, timeout=600)
        while not self._stop.wait(0.05):
            start = time.perf_counter()
            conn.request("GET", "/api/v1/namespaces", headers={"Authorization": f"Bearer {self.token}"})
            conn.getresponse().read()
            self.longest = max(self.longest, time.perf_counter() - start)
            self.requests += 1

    def stop(self) -> None:
        """Stop polling."""
        self._stop.set()
        self._thread.join(timeout=600)


def kubectl_ms(args: list[str], repeat: int = 3) -> float:
    """Return the median wall milliseconds of a kubectl command."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        done = subprocess.run(["kubectl", *args], capture_output=True, text=True)
        if done.returncode != 0:  # say why, and count it as no figure rather than losing the whole run
            print(f"kubectl {' '.join(args)} failed: {done.stderr.strip()[-2000:]}", file=sys.stderr)
            return math.nan
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def served_run(n: int, service: bool, timeout: float) -> dict:
    """Bring n pods up served under the wall-clock ticker; return the longest API wait and the kubectl ratio."""
    from aoi.twin.api import tls
    from aoi.twin.serving import Ticker
    from aoi.twin.testing import Served

    twin = fresh_twin()
    prepare(twin, n, service)
    served = Served(twin, Path(tempfile.mkdtemp()))
    ticker = Ticker(twin).start()
    poller = Poller(int(served.server.url.rsplit(":", 1)[1]), twin.credentials["admin"], tls.certificate()[0]).start()
    start = time.perf_counter()
    deploy(twin, n)
    while not running(twin, n) and time.perf_counter() - start < timeout:
        time.sleep(0.5)
    done, served_wall = running(twin, n), time.perf_counter() - start
    poller.stop()
    config = str(served.kubeconfigs["admin"])
    get_pods = kubectl_ms(["--kubeconfig", config, "get", "pods", "-A"])
    bare = kubectl_ms(["version", "--client"])
    ticker.stop()
    served.close()
    return {"served_wall_s": served_wall, "all_running": done,
            "api_wait_max_s": poller.longest, "api_requests": poller.requests,
            "get_pods_ms": get_pods, "kubectl_bare_ms": bare, "get_pods_ratio": get_pods / bare}


def one(n: int, service: bool, timeout: float) -> dict:
    """Measure one size in this process (the child side)."""
    out = {"n": n, "service": service, **bring_up(n, service)}
    out.update(served_run(n, service, timeout))
    return out


def slope(points: list[tuple[int, float]]) -> float | None:
    """Return the least-squares slope of log(cpu) against log(n)."""
    if len(points) < 2:
        return None
    xs, ys = [math.log(n) for n, _ in points], [math.log(max(c, 1e-6)) for _, c in points]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


def child(n: int, service: bool, timeout: float) -> dict:
    """Run one measurement in a fresh interpreter (so RSS peaks are its own)."""
    cmd = [sys.executable, __file__, "--one", str(n), "--timeout", str(timeout)] + (["--service"] if service else [])
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"measuring {n} pods failed:\n{done.stderr[-3000:]}")
    sys.stderr.write(done.stderr)
    return json.loads(done.stdout.strip().splitlines()[-1])


def report(rows: list[dict]) -> None:
    """Print the table and the growth exponents."""
    print(f"{'pods':>6} {'svc':>4} {'cpu s':>8} {'wall s':>8} {'sim s':>6} {'rss MB':>7} {'MB/pod':>7} "
          f"{'apiwait s':>9} {'get -A ms':>9} {'ratio':>6}")
    for r in rows:
        print(f"{r['n']:>6} {'yes' if r['service'] else 'no':>4} {r['cpu_s']:>8.2f} {r['wall_s']:>8.2f} "
              f"{r['sim_s']:>6.0f} {r['rss_peak_mb']:>7.0f} {r['rss_per_pod_mb']:>7.3f} "
              f"{r['api_wait_max_s']:>9.3f}{'' if r['all_running'] else '*'} {r['get_pods_ms']:>9.0f} "
              f"{r['get_pods_ratio']:>6.1f}")
    for service in (False, True):
        k = slope([(r["n"], r["cpu_s"]) for r in rows if r["service"] == service])
        label = "with" if service else "without"
        print(f"CPU growth exponent {label} Service: {k:.2f}" if k is not None else f"{label}: one size only")
    if any(not r["all_running"] for r in rows):
        print("* the served bring-up did not finish within --timeout; its API wait covers the time it ran")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,3000,10000", help="comma-separated pod counts")
    parser.add_argument("--service-sizes", help="pod counts measured with a Service (default: --sizes)")
    parser.add_argument("--timeout", type=float, default=600.0, help="wall seconds allowed to the served bring-up")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--service", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.one, args.service, args.timeout)))
        return
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    with_service = [int(s) for s in (args.service_sizes or args.sizes).split(",") if s.strip()]
    rows = [child(n, False, args.timeout) for n in sizes] + [child(n, True, args.timeout) for n in with_service]
    report(rows)


if __name__ == "__main__":
    main()
