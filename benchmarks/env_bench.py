"""Print medians for the environment: reset (clone + serve + inject + workload), a kubectl step, a get_metrics step,
and episodes per hour with the reference solutions over every twin problem.

Run: python benchmarks/env_bench.py [--repeat N] [--skip-all]
"""

from __future__ import annotations

import argparse
import statistics
import time

from aoi.env import make
from aoi.problems import list_problems, solutions

PROBLEMS = ("k8s_target_port-misconfig-detection-1", "revoke_auth_mongodb-mitigation-1",
            "astronomy_shop_payment_service_failure-localization-1")


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def per_problem(problem_id: str, repeat: int) -> tuple[float, float, float]:
    """Return median seconds of reset, one kubectl step and one get_metrics step for a problem."""
    resets, kubectl, metrics = [], [], []
    for _ in range(repeat):
        env = make(problem_id)
        resets.append(timed(env.reset))
        ns = env.problem.namespace
        kubectl.append(timed(lambda: env.step(solutions.shell(f"kubectl get pods -n {ns}"))))
        metrics.append(timed(lambda: env.step(solutions.action("get_metrics", ns, 5))))
        env.close()
    return statistics.median(resets), statistics.median(kubectl), statistics.median(metrics)


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
        return {"mongod.conf": kube.config_map(p.namespace, p.fault.expect["configmap"])["data"][p.fault.expect["key"]]}
    if p.fault.mechanism == "flagd_flag":
        return {"flags": kube.config_map(p.namespace, "flagd-config")["data"]["demo.flagd.json"]}
    return {}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--skip-all", action="store_true", help="skip the all-problems throughput run")
    args = parser.parse_args()
    for problem_id in PROBLEMS:  # build each app's base twin once (process cache), as a long eval does
        make(problem_id).reset()
    for problem_id in PROBLEMS:
        reset, kubectl, metrics = per_problem(problem_id, args.repeat)
        print(f"{problem_id}: reset median {reset * 1000:.0f} ms (target <= 100 ms); kubectl step "
              f"{kubectl * 1000:.0f} ms (target <= 200 ms); get_metrics step {metrics * 1000:.0f} ms")
    if not args.skip_all:
        n, seconds, ok = solve_all()
        print(f"reference solutions over {n} twin problems: {seconds:.0f} s, {n / seconds * 3600:.0f} episodes/hour, "
              f"{ok}/{n} strict successes")


if __name__ == "__main__":
    main()
