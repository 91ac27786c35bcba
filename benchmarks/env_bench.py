"""Print medians for the environment: warm reset in wall and CPU time, a kubectl step, a get_metrics step, and
episodes per hour with the reference solutions over every twin problem.

Two resets are measured per problem. "First": each app's base twin is already built (a long eval builds it once per
worker), and the reset clones it, serves it, injects the fault and runs the first 36 simulated seconds: the
per-episode cost of a run that plays each problem once. "Warm": the same (problem, seed) was reset twice before, so
the reset clones the state kept then (aoi.env.twin_backend.Snapshots): the cost of training or repeated attempts
at one seed. The load average is printed with the figures: on shared cores wall times follow it.
Run: python benchmarks/env_bench.py [--repeat N] [--skip-all] [--problems ID,ID]
Before/after: PYTHONPATH=<other tree>/src python benchmarks/env_bench.py --skip-all

Measured 2026-12-02 (2 shared cores, load 1.3-1.8, n=11, two alternating rounds of before = e5c532a and after), CPU
medians for k8s_target_port / revoke_auth_mongodb / astronomy payment: before, the only reset there was,
53.1|49.5, 55.5|58.4, 50.1|37.8 ms; after, warm 7.7|7.6, 8.5|9.0, 11.6|10.9 ms and first 42.0|45.4, 42.9|55.7,
45.2|38.0 ms. A first reset still injects over HTTPS (10-17 ms) and simulates 36 s of traffic (5-23 ms).
Second session (`--skip-all`, 9a373ab then after, load 1.4-1.5), CPU: warm 11.6|10.1, 10.6|10.7, 13.6|11.9 ms; first
56.0|52.3, 74.6|71.0, 51.8|41.5 ms; get_metrics step (wall) 131|44, 98|35, 121|44 ms.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from aoi.env import make, twin_backend
from aoi.problems import list_problems, solutions

PROBLEMS = ("k8s_target_port-misconfig-detection-1", "revoke_auth_mongodb-mitigation-1",
            "astronomy_shop_payment_service_failure-localization-1")


def timed(fn) -> tuple[float, float]:
    """Return (wall seconds, CPU seconds of this process) of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def forget_snapshots() -> None:
    """Drop the kept reset states, so the next reset injects (a tree from before Snapshots has none)."""
    kept = getattr(twin_backend, "SNAPSHOTS_KEPT", None)
    if kept is not None:
        kept.clear()


def first_resets(problem_id: str, repeat: int) -> tuple[float, float]:
    """Return median (wall, CPU) seconds of a reset that injects the fault itself (no kept state)."""
    walls, cpus = [], []
    for _ in range(repeat):
        forget_snapshots()
        env = make(problem_id)
        wall, cpu = timed(env.reset)
        walls.append(wall)
        cpus.append(cpu)
        env.close()
    return statistics.median(walls), statistics.median(cpus)


def per_problem(problem_id: str, repeat: int) -> dict[str, float]:
    """Return median seconds of warm reset (wall, CPU), one kubectl step and one get_metrics step for a problem."""
    runs: dict[str, list[float]] = {"reset": [], "reset_cpu": [], "kubectl": [], "metrics": []}
    for _ in range(2):  # a key's second reset keeps its state: from the third on, resets clone it
        make(problem_id).reset()
    for _ in range(repeat):
        env = make(problem_id)
        wall, cpu = timed(env.reset)
        runs["reset"].append(wall)
        runs["reset_cpu"].append(cpu)
        ns = env.problem.namespace
        # defaults bind this iteration's env and ns (timed calls the lambda at once, but say so explicitly)
        runs["kubectl"].append(timed(lambda env=env, ns=ns: env.step(solutions.shell(f"kubectl get pods -n {ns}")))[0])
        runs["metrics"].append(timed(lambda env=env, ns=ns: env.step(solutions.action("get_metrics", ns, 5)))[0])
        env.close()
    return {name: statistics.median(values) for name, values in runs.items()}


def solve_all() -> tuple[int, float, int]:
    """Run every twin problem with its reference solution; return (episodes, seconds, successes)."""
    ok, start = 0, time.perf_counter()
    problems = [p for p in list_problems() if p.backend == "twin"]
    for p in problems:
        env = make(p.id)
        env.reset()
        steps = [solutions.shell(f"kubectl get pods -n {p.namespace}")]
        if p.task_type == "mitigation":
            steps += solutions.mitigation(p, _texts(env))
        for text in steps + [solutions.answer(p)]:
            *_, info = env.step(text)
        ok += bool(info["results"].get("strict_success"))
        env.close()
    return len(problems), time.perf_counter() - start, ok


def _texts(env) -> dict:
    p, kube = env.problem, env.backend.kube
    if p.fault.mechanism == "mongo_tls":
        cm = kube.get("configmaps", p.namespace, p.fault.expect["configmap"])
        return {"mongod.conf": cm["data"][p.fault.expect["key"]]}
    if p.fault.mechanism == "flagd_flag":
        return {"flags": kube.get("configmaps", p.namespace, "flagd-config")["data"]["demo.flagd.json"]}
    return {}


def load() -> str:
    """Return the 1-minute load average (others' work on the shared cores)."""
    return f"{os.getloadavg()[0]:.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=11)
    parser.add_argument("--skip-all", action="store_true", help="skip the all-problems throughput run")
    parser.add_argument("--problems", default=",".join(PROBLEMS), help="comma-separated problem ids")
    args = parser.parse_args()
    problems = args.problems.split(",")
    for problem_id in problems:  # build each app's base twin once (process cache), as a long eval does
        make(problem_id).reset()
    for problem_id in problems:
        before = load()
        first_wall, first_cpu = first_resets(problem_id, args.repeat)
        m = per_problem(problem_id, args.repeat)
        print(f"{problem_id}: warm reset median {m['reset'] * 1000:.0f} ms wall, {m['reset_cpu'] * 1000:.1f} ms CPU "
              f"(target <= 15 ms); first reset {first_wall * 1000:.0f} ms wall, {first_cpu * 1000:.1f} ms CPU; "
              f"kubectl step {m['kubectl'] * 1000:.0f} ms; get_metrics step {m['metrics'] * 1000:.0f} ms  "
              f"[n={args.repeat}, load {before}->{load()}]")
    if not args.skip_all:
        n, seconds, ok = solve_all()
        print(f"reference solutions over {n} twin problems: {seconds:.0f} s, {n / seconds * 3600:.0f} episodes/hour, "
              f"{ok}/{n} strict successes")


if __name__ == "__main__":
    main()
