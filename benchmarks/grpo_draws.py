"""GRPO's group draws on vLLM, three ways side by side at the same states on one server: G requests each followed by
its scoring request (prompt_logprobs, how v3 drew its training groups), G requests without scoring, and one request
with n=G (how aoi.train.served_rollout draws a group now).

The states are the GRPO dataset's rows (the Observer's prompts at recorded decisions); the policy is an adapter
(`--adapter`, e.g. the SFT one GRPO starts from) loaded on a managed fp32 server without the scoring flags, as the
GRPO phase starts it. Each state's prompt is first drawn once uncounted (vLLM's prefix cache then holds it for every
way, as at a training step, where the state choice drew it before), and the three ways take turns going first.
Per way: median and total seconds per group over the states, and the ratio to v3's way; then how many of the n=G
draws are token for token the G one-by-one requests' draws (vLLM seeds the i-th child `seed + i`; batching can change
fp32 rounding, so a few may differ).

    nice -n 5 .venv/bin/python benchmarks/grpo_draws.py --data runs/learning-v3/grpo-data \
        --adapter runs/learning-v3/sft --states 8
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

WAYS = ("scored", "one by one", "n at once")


def adapter_files(folder: Path) -> dict[str, bytes]:
    """Return an adapter folder's files as ServedPolicy.swap takes them."""
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file() and p.name.startswith("adapter_")}


def draw(policy, prompt: list[dict], way: str, *, group: int, seed: int, max_new_tokens: int) -> list[list[int]]:
    """Draw one group at a prompt in the given way; return the completions' token ids."""
    from aoi.train.served import ServedObserver

    observer = ServedObserver(policy, max_new_tokens=max_new_tokens, seed=seed, score=way == "scored")
    if way == "n at once":
        observer.draw(prompt, role="observer", n=group)
    else:
        for _ in range(group):
            observer.complete(prompt, role="observer")
    return [call.completion_ids for call in observer.calls]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="a GRPO dataset folder (aoi data export)")
    parser.add_argument("--adapter", type=Path, required=True, help="the policy's LoRA adapter folder")
    parser.add_argument("--base", default="smollm2")
    parser.add_argument("--states", type=int, default=8)
    parser.add_argument("--group", type=int, default=4)
    parser.add_argument("--max-new-tokens", type=int, default=256)
    args = parser.parse_args()

    from aoi.models.vllm_server import ManagedServer
    from aoi.train.dataset import load_view
    from aoi.train.served import ServedObserver, ServedPolicy

    rows = load_view(args.data, "rl", "by_target", "train")
    picks = [rows[i * len(rows) // args.states] for i in range(args.states)]  # spread over the rows
    seconds: dict[str, list[float]] = {way: [] for way in WAYS}
    same = total = 0
    with ManagedServer(base=args.base, dtype="float32") as server:
        policy = ServedPolicy(server.url, base=args.base, prefix="aoi-bench")
        policy.swap(0, adapter_files(args.adapter))
        for index, row in enumerate(picks):
            ServedObserver(policy, max_new_tokens=1, seed=0, score=False).complete(row["prompt"], role="observer")
            drawn = {}
            for way in WAYS[index % 3:] + WAYS[:index % 3]:
                started = time.perf_counter()
                drawn[way] = draw(policy, row["prompt"], way, group=args.group, seed=1000 + index,
                                  max_new_tokens=args.max_new_tokens)
                seconds[way].append(time.perf_counter() - started)
            same += sum(a == b for a, b in zip(drawn["one by one"], drawn["n at once"]))
            total += args.group
            print(f"state {index}: " + ", ".join(f"{way} {seconds[way][-1]:.1f} s" for way in WAYS), flush=True)
        policy.close()
    old = statistics.median(seconds["scored"])
    print(f"\n{args.states} states, groups of {args.group}, {args.base} + {args.adapter} on vLLM (fp32, CPU)")
    print(f"{'way':<12} {'median s/group':>15} {'total s':>9} {'ratio to scored':>16}")
    for way in WAYS:
        median = statistics.median(seconds[way])
        print(f"{way:<12} {median:>15.1f} {sum(seconds[way]):>9.1f} {median / old:>16.2f}")
    print(f"n at once drew {same} of {total} completions token for token as the one-by-one requests did")


if __name__ == "__main__":
    main()
