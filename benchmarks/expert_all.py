"""Run the expert model (every role) over every twin problem id, optionally over every valid target of each, and
print per task type: success (AIOpsLab's verdict), strict success, mean environment steps, seconds per episode,
the Observer's mean context tokens per iteration, and episodes per hour.

Run: python benchmarks/expert_all.py [--targets] [--workers N] [--only SUBSTRING] [--failures]
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor

from aoi.problems.registry import make as make_problem
from aoi.problems.registry import problem_ids
from aoi.tasks import TASK_TYPES, TaskType, succeeded

ROLES = ("observer", "probe", "executor", "compressor")


def cases(with_targets: bool, only: str | None, skip: list[str] = ()) -> list[tuple[str, str | None]]:
    """Return (problem id, target) pairs: the defaults, plus every other valid target when asked (minus `skip`)."""
    out = []
    for pid in problem_ids():
        problem = make_problem(pid)
        if problem.backend != "twin" or (only and only not in pid):
            continue
        out.append((pid, None))
        if with_targets:
            out += [(pid, t) for t in problem.valid_targets
                    if t != problem.target and not any(text in f"{pid}@{t}" for text in skip)]
    return out


def run_case(case: tuple[str, str | None, int]) -> dict:
    """Run one episode with the expert playing every role; return its verdict."""
    from aoi.agents.runtime import run_episode
    from aoi.config import load_config
    from aoi.env import make
    from aoi.models.expert import ExpertModel

    pid, target, seed = case
    env = make(pid, target=target, seed=seed)
    started = time.perf_counter()
    try:
        model = ExpertModel()
        config = load_config(overrides={"model": "expert", "env": {"seed": seed}})
        traj = run_episode(env, config, dict.fromkeys(ROLES, model))
        results, error = traj.results, traj.error
    except Exception as exc:  # noqa: BLE001 - one broken episode (e.g. a reset that times out) is counted, not fatal
        results, error, traj = {}, f"{type(exc).__name__}: {exc}", None
    finally:
        env.close()
    success = succeeded(results)
    contexts = [s.input_tokens for s in (traj.steps if traj else []) if s.role == "observer" and s.input_tokens]
    return {"id": pid, "target": target, "task": env.problem.task_type, "success": success,
            "observer_tokens": sum(contexts) / len(contexts) if contexts else 0.0,
            "strict": bool(results.get("strict_success")), "steps": results.get("steps", 0), "error": error,
            "answer": traj.submission if traj else None, "seconds": time.perf_counter() - started}


def summary(rows: list[dict], wall: float, label: str) -> None:
    """Print the figures per task type and overall."""
    by_task = defaultdict(list)
    for row in rows:
        by_task[row["task"]].append(row)
    print(f"\n{label}: {len(rows)} episodes in {wall:.0f} s wall "
          f"({3600 * len(rows) / max(wall, 1e-9):.0f} episodes/hour)")
    print(f"{'task type':<14}{'episodes':>9}{'success':>10}{'strict':>10}{'steps':>8}{'s/episode':>11}"
          f"{'observer ctx':>14}")
    for task in TASK_TYPES:
        group = by_task.get(task, [])
        if group:
            _line(task, group)
    _line("all", rows)


def _line(name: str, group: list[dict]) -> None:
    n = len(group)
    print(f"{name:<14}{n:>9}{100 * sum(r['success'] for r in group) / n:>9.1f}%"
          f"{100 * sum(r['strict'] for r in group) / n:>9.1f}%{sum(r['steps'] for r in group) / n:>8.1f}"
          f"{sum(r['seconds'] for r in group) / n:>11.2f}{sum(r['observer_tokens'] for r in group) / n:>14.0f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", action="store_true", help="also run every other valid target of each id")
    parser.add_argument("--workers", type=int, default=1, help="episodes run in parallel processes")
    parser.add_argument("--only", help="run only ids containing this text")
    parser.add_argument("--failures", action="store_true", help="list every failed episode")
    parser.add_argument("--progress", action="store_true", help="print each episode as it ends")
    parser.add_argument("--seed", type=int, default=0, help="seed of the twin (same seed, same observations)")
    parser.add_argument("--skip", action="append", default=[], metavar="TEXT",
                        help="leave out target variants whose ID@TARGET contains TEXT (e.g. ones whose reset fails)")
    args = parser.parse_args()
    todo = [(pid, target, args.seed) for pid, target in cases(args.targets, args.only, args.skip)]
    started = time.perf_counter()
    rows = []
    with ProcessPoolExecutor(max(args.workers, 1)) as pool:
        for row in pool.map(run_case, todo):
            rows.append(row)
            if args.progress:
                print(f"{'ok  ' if row['success'] else 'FAIL'} {row['seconds']:6.1f}s {row['id']} {row['target']}",
                      flush=True)
    wall = time.perf_counter() - started
    defaults = [r for r in rows if r["target"] is None]
    summary(defaults, wall * len(defaults) / len(rows), "default targets (AIOpsLab's ids)")
    if args.targets:
        summary([r for r in rows if r["target"] is not None], wall * (len(rows) - len(defaults)) / len(rows),
                "other valid targets")
    if args.failures:
        for r in rows:
            if not r["success"] or (r["task"] == TaskType.MITIGATION and not r["strict"]):
                print(f"  FAIL {r['id']} target={r['target']} answer={r['answer']} strict={r['strict']} "
                      f"{r['error'] or ''}")


if __name__ == "__main__":
    main()
