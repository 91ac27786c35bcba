"""Print the Observer's largest prompt and the Compressor's calls over a long scripted episode.

Each iteration the Observer sends the Probe one of three large `kubectl get -o yaml` commands (so outputs repeat)
and the Probe reports about 500 tokens; the Compressor is a model that answers with the output's first lines.

    .venv/bin/python benchmarks/observer_context.py [--iterations 40] [--budget 4000]
"""

from __future__ import annotations

import argparse
import json

from aoi.agents.runtime import run_episode
from aoi.config import load_config
from aoi.env import make
from aoi.models.base import Completion
from aoi.models.replay import ReplayModel
from aoi.models.tokens import count_messages

COMMANDS = [f"kubectl get {kind} -n test-hotel-reservation -o yaml" for kind in ("deployments", "services", "pods")]


class Head:
    """A Compressor model that answers with the first five lines of its output and counts what it was asked."""

    name = "head"

    def __init__(self):
        self.outputs: list[str] = []

    def complete(self, messages, *, role, max_tokens=None, temperature=None):
        """Answer with the output's first lines."""
        self.outputs.append(messages[-1]["content"].split("Output:\n", 1)[1])
        return Completion("\n".join(self.outputs[-1].splitlines()[:5]))


def script(iterations: int) -> list[tuple[str, str]]:
    """Return the Observer's and Probe's steps: probe, run one command, report; submit at the end."""
    steps = []
    for i in range(1, iterations):
        report = "; ".join(f"pod frontend-{i}-{n} Running with 0 restarts" for n in range(40))
        steps += [("observer", json.dumps({"phase": "survey", "next": "probe", "instruction": f"check {i}"})),
                  ("probe", json.dumps({"tool": "exec_shell", "args": {"command": COMMANDS[i % 3]}})),
                  ("probe", json.dumps({"tool": "finish", "args": {"findings": report}}))]
    return steps + [("observer", json.dumps({"phase": "submit", "next": "submit", "answer": "No"}))]


def main() -> None:
    """Run the episode and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=40)
    parser.add_argument("--budget", type=int, default=4000, help="agent.observer_context_tokens")
    args = parser.parse_args()
    team, head = ReplayModel(script(args.iterations)), Head()
    config = load_config(overrides={"model": "expert", "agent.max_iterations": args.iterations,
                                    "agent.observer_context_tokens": args.budget}, environ={})
    env = make("noop_detection_hotel_reservation-1", max_steps=3 * args.iterations)
    try:
        run_episode(env, config, {"observer": team, "probe": team, "executor": team, "compressor": head})
    finally:
        env.close()
    sizes = [count_messages(messages) for role, messages in team.requests if role == "observer"]
    print(f"observer prompts: {len(sizes)}, largest {max(sizes)} tokens (budget {args.budget}), "
          f"median {sorted(sizes)[len(sizes) // 2]}")
    print(f"compressor calls: {len(head.outputs)} for {len(set(head.outputs))} distinct outputs "
          f"({args.iterations - 1} probe tool calls)")


if __name__ == "__main__":
    main()
