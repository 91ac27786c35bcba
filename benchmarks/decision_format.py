"""Figures for the Observer's two decision formats: the expert's successes and its decisions' sizes in each.

The expert team plays every twin problem (or --problems) once per format at one seed; the figures are its AIOpsLab
and strict successes and the size of its Observer decisions and prompts in SmolLM2 tokens (what a local model
would have to write and read): median, p90, max, and how many fit the `local:` default cap.

    .venv/bin/python benchmarks/decision_format.py                      # all 87 twin problems, ~5 minutes
    .venv/bin/python benchmarks/decision_format.py --problems a,b --seed 1
"""

from __future__ import annotations

import argparse
import json
import statistics

from aoi.agents.runtime import run_episode
from aoi.config import load_config
from aoi.env import make
from aoi.models.bases import load_tokenizer
from aoi.models.expert import ExpertModel
from aoi.models.local import DEFAULT_MAX_NEW_TOKENS
from aoi.problems.registry import problem_ids
from aoi.tasks import succeeded
from aoi.train.rollouts import team


def episodes(problems: list[str], decision_format: str, seed: int) -> list:
    """Play each problem once with the expert team in the format; return the trajectories (twin problems only)."""
    config = load_config(overrides={"model": "expert", "agent.decision_format": decision_format,
                                    "env.seed": seed}, environ={})
    out = []
    for problem_id in problems:
        try:
            env = make(problem_id, seed=seed)
        except ValueError:  # a problem the twin does not run (Docker Compose apps)
            continue
        try:
            out.append(run_episode(env, config, team(ExpertModel())))
        finally:
            env.close()
    return out


def solved(traj) -> bool:
    """Return AIOpsLab's verdict of an episode."""
    return succeeded(traj.results)


def figures(trajs: list, tokenizer) -> dict:
    """Return successes and the token sizes of the Observer's decisions and prompts."""
    calls = [s for t in trajs for s in t.steps if s.role == "observer" and s.messages]
    sizes = sorted(len(tokenizer(s.text, add_special_tokens=False)["input_ids"]) for s in calls)
    prompts = [len(tokenizer(tokenizer.apply_chat_template(s.messages, tokenize=False, add_generation_prompt=True),
                             add_special_tokens=False)["input_ids"]) for s in calls]
    return {"episodes": len(trajs), "success": sum(map(solved, trajs)),
            "strict": sum(bool(t.strict_success) for t in trajs), "decisions": len(sizes),
            "median": statistics.median(sizes), "p90": sizes[int(0.9 * (len(sizes) - 1))], "max": sizes[-1],
            "within_cap": sum(n <= DEFAULT_MAX_NEW_TOKENS for n in sizes),
            "prompt_median": statistics.median(prompts), "prompt_max": max(prompts)}


def main() -> None:
    """Print the figures of both formats as a table, then as JSON lines."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", default="all", help="all, or comma-separated problem ids")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    problems = problem_ids() if args.problems == "all" else args.problems.split(",")
    tokenizer = load_tokenizer("smollm2")
    print(f"| format | solved | strict | decisions | median tok | p90 | max | <= {DEFAULT_MAX_NEW_TOKENS} "
          "| prompt median | prompt max |\n|---|---|---|---|---|---|---|---|---|---|")
    found = {name: figures(episodes(problems, name, args.seed), tokenizer) for name in ("standard", "compact")}
    for name, f in found.items():
        print(f"| {name} | {f['success']}/{f['episodes']} | {f['strict']}/{f['episodes']} | {f['decisions']} | "
              f"{f['median']} | {f['p90']} | {f['max']} | {f['within_cap']} | {f['prompt_median']} | "
              f"{f['prompt_max']} |")
    for name, f in found.items():
        print(json.dumps({"format": name, **f}))


if __name__ == "__main__":
    main()
