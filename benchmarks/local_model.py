"""Figures for the local: backend: tokens/s, seconds per Observer decision and format-valid rate, constrained or not.

Each decision answers the Observer's real first prompt (system + user rendered from prompts.yaml, the task text the
runtime gives it) for a few problems, sampled at a temperature with one seed per decision. A decision is valid when the
Observer would accept it (one JSON object whose "next" is probe, execute or submit).

    .venv/bin/python benchmarks/local_model.py --model smollm2 --decisions 3
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import torch

from aoi.agents.actions import FormatError, extract_json
from aoi.agents.loop import render
from aoi.agents.observer import ANSWER_FORMATS, NEXT_STEPS
from aoi.agents.tools import render_team
from aoi.env import make
from aoi.models.local import LocalModel

PROBLEMS = ("k8s_target_port-misconfig-detection-1", "revoke_auth_mongodb-localization-1")


def first_prompt(problem_id: str, task_type: str) -> list[dict]:
    """Return the Observer's first messages for a problem."""
    env = make(problem_id)
    try:
        env.reset()
        description = env.description  # what the agents' runtime gives the Observer
    finally:
        env.close()
    answer = ANSWER_FORMATS[task_type]
    user = render("observer", "user", task_type=task_type, description=description, answer_format=answer,
                  iteration=1, max_iterations=10, steps_left=30, warning="", plan="(none yet)",
                  findings="(none yet)", decisions="(none yet)", feedback="")
    return [{"role": "system", "content": render("observer", "system", answer_format=answer, team=render_team())},
            {"role": "user", "content": user}]


def valid(text: str) -> bool:
    """Tell whether the Observer would accept the reply as a decision."""
    try:
        return extract_json(text).get("next") in NEXT_STEPS
    except FormatError:
        return False


def measure(model: LocalModel, prompts: list[list[dict]], decisions: int) -> list[dict]:
    """Sample `decisions` replies per prompt (seed i for the i-th); return one row per reply."""
    rows = []
    for messages in prompts:
        for seed in range(decisions):
            model.seed, model.calls = seed, 0
            started = time.perf_counter()
            done = model.complete(messages, role="observer")
            seconds = time.perf_counter() - started
            rows.append({"seconds": seconds, "tokens": done.output_tokens, "prompt": done.input_tokens,
                         "valid": valid(done.text), "text": done.text})
            print(f"  {done.output_tokens:4d} tok {seconds:6.1f} s valid={rows[-1]['valid']} "
                  f"{done.text[:100]!r}", file=sys.stderr, flush=True)
    return rows


def summary(name: str, rows: list[dict]) -> str:
    """Return one table row of medians."""
    med = lambda key: statistics.median(r[key] for r in rows)  # noqa: E731
    rate = statistics.median(r["tokens"] / r["seconds"] for r in rows)
    ok = sum(r["valid"] for r in rows)
    return (f"| {name} | {len(rows)} | {ok}/{len(rows)} | {med('seconds'):.1f} | {med('tokens'):.0f} | "
            f"{rate:.2f} | {med('prompt'):.0f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2", help="base: smollm2, tiny or a model directory")
    parser.add_argument("--problems", default=",".join(PROBLEMS))
    parser.add_argument("--decisions", type=int, default=5, help="sampled decisions per problem and mode")
    parser.add_argument("--max-tokens", type=int, default=256)
    parser.add_argument("--temperature", type=float, default=0.7)
    parser.add_argument("--modes", default="constrained,free")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch threads (0: torch's default); on a shared, busy machine 1 is much faster")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    prompts = [first_prompt(pid, pid.split("-")[-2]) for pid in args.problems.split(",")]
    print("| mode | decisions | valid | s/decision (median) | tokens (median) | tok/s (median) | prompt tokens |")
    print("|---|---|---|---|---|---|---|")
    for mode in args.modes.split(","):
        model = LocalModel(args.model, max_new_tokens=args.max_tokens, temperature=args.temperature,
                           constrained=mode == "constrained", progress=False)
        print(summary(mode, measure(model, prompts, args.decisions)), flush=True)


if __name__ == "__main__":
    main()
