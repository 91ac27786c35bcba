"""Print what SFT and GRPO teach a local Observer (expert Probe/Executor/Compressor) on held-out problems.

Teacher data: the expert team on problems that are on the train side of both by_target and by_family; then SFT
(`aoi.train.sft`), then GRPO from the SFT adapter (`aoi.train.grpo`, per-decision rollouts). For base / SFT /
SFT+GRPO it prints, on held-out targets (by_target test) and held-out families (by_family test): the format-valid
rate of the Observer's decisions, avg@1 success and strict success, tokens per decision, and wall time.

The real run (SmolLM2-135M, dozens of problems, hundreds of steps) takes hours on 2 CPU cores; the flags size it.
Run:        python benchmarks/learning.py --base smollm2 --train-problems 40 --eval-problems 20 --sft-steps 300 \
                --grpo-steps 100 --max-new-tokens 256
Smoke run:  python benchmarks/learning.py --base tiny --train-problems 1 --eval-problems 1 --sft-steps 2 \
                --grpo-steps 1 --max-new-tokens 16
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from pathlib import Path

from aoi.config import load_config
from aoi.data.export import export
from aoi.data.generate import generate
from aoi.data.splits import SplitRules, catalogue_keys, make_splits
from aoi.train.episodes import GenerativeObserver
from aoi.train.grpo import GrpoOptions, train_grpo
from aoi.train.rollouts import State, play, valid_decision
from aoi.train.sft import SftOptions, train_sft


def choose(args) -> tuple[list, dict[str, list]]:
    """Return (train pairs, {"held-out targets": pairs, "held-out families": pairs}), seeded."""
    keys = catalogue_keys()
    splits = make_splits(keys, SplitRules(seed=args.seed))
    pair = {f"{k.problem_id}@{k.target or ''}": (k.problem_id, k.target) for k in keys}
    train = sorted(set(splits["by_target"]["train"]) & set(splits["by_family"]["train"]))
    rng = random.Random(args.seed)
    picked = rng.sample(train, min(args.train_problems, len(train)))
    held = {"held-out targets": splits["by_target"]["test"], "held-out families": splits["by_family"]["test"]}
    held = {name: rng.sample(sorted(ks), min(args.eval_problems, len(ks))) for name, ks in held.items()}
    return [pair[k] for k in picked], {name: [pair[k] for k in ks] for name, ks in held.items()}


def teacher_data(pairs: list, work: Path) -> Path:
    """Run the expert on the train pairs and export the dataset; return its folder."""
    config = load_config(overrides={"model": "expert"}, environ={})
    generate(pairs, work / "teacher", config)
    export([work / "teacher"], work / "data", overwrite=True)
    return work / "data"


def train(args, data: Path, work: Path) -> dict[str, Path | None]:
    """Train SFT then GRPO from it; return the adapter folder of each variant (None: the base)."""
    train_sft(SftOptions(data=data, out=work / "sft", base=args.base, max_steps=args.sft_steps, seed=args.seed,
                         learning_rate=args.sft_lr))
    config = work / "grpo.json"
    config.write_text(json.dumps({"grpo": {"num_generations": args.group, "per_device_train_batch_size": args.group,
                                           "max_completion_length": args.max_new_tokens,
                                           "save_steps": max(1, args.grpo_steps)}}))
    train_grpo(GrpoOptions(data=data, out=work / "grpo", init=work / "sft", max_steps=args.grpo_steps,
                           seed=args.seed, config=config))
    return {"base": None, "SFT": work / "sft", "SFT+GRPO": work / "grpo"}


def observer(base: str, adapter: Path | None, max_new_tokens: int) -> GenerativeObserver:
    """Load the base (+ adapter) as a greedy Observer."""
    from peft import PeftModel

    from aoi.models.bases import load_base

    model, tokenizer = load_base(base)
    if adapter is not None:
        model = PeftModel.from_pretrained(model, str(adapter)).eval()
    return GenerativeObserver(model, tokenizer, max_new_tokens=max_new_tokens, temperature=0.0)


def evaluate(policy: GenerativeObserver, pairs: list, episode_steps: int) -> dict:
    """Play one episode per pair (avg@1); return format-valid rate, success, strict, tokens/decision, wall."""
    started, outcomes, first = time.perf_counter(), [], len(policy.calls)
    for problem_id, target in pairs:
        outcomes.append(play(State(problem_id=problem_id, target=target), policy, max_steps=episode_steps))
    calls = policy.calls[first:]
    return {"format_valid": _mean([valid_decision(c["text"]) for c in calls]),
            "success": _mean([o.success for o in outcomes]), "strict": _mean([o.strict for o in outcomes]),
            "tokens_per_decision": _mean([len(c["completion_ids"]) for c in calls]),
            "episodes": len(outcomes), "wall_s": round(time.perf_counter() - started, 1)}


def _mean(values: list) -> float:
    """Return the mean of numbers or flags (0 for none)."""
    return round(statistics.fmean(float(v) for v in values), 3) if values else 0.0


def main() -> None:
    """Parse the flags, run teacher data, SFT, GRPO and the evaluations; print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base", default="smollm2", help="tiny, smollm2 or a model directory")
    parser.add_argument("--train-problems", type=int, default=40, help="teacher episodes (problem@target keys)")
    parser.add_argument("--eval-problems", type=int, default=20, help="episodes per held-out set")
    parser.add_argument("--sft-steps", type=int, default=300)
    parser.add_argument("--sft-lr", type=float, default=2e-4)
    parser.add_argument("--grpo-steps", type=int, default=100)
    parser.add_argument("--group", type=int, default=4, help="GRPO samples per state (num_generations)")
    parser.add_argument("--max-new-tokens", type=int, default=256, help="tokens per Observer decision")
    parser.add_argument("--episode-steps", type=int, default=30, help="environment steps per episode")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--work", type=Path, default=None, help="folder for data and adapters (default: a temp one)")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="aoi-learning-"))
    timings, started = {}, time.perf_counter()
    pairs, held = choose(args)
    data = teacher_data(pairs, work)
    timings["teacher"] = time.perf_counter() - started
    adapters = train(args, data, work)
    timings["train"] = time.perf_counter() - started - timings["teacher"]
    print(f"work {work}; {len(pairs)} teacher episodes; teacher {timings['teacher']:.0f} s, SFT+GRPO "
          f"{timings['train']:.0f} s; base {args.base}")
    print(f"{'variant':10} {'set':18} {'format':>7} {'success':>8} {'strict':>7} {'tok/dec':>8} {'n':>3} {'wall s':>7}")
    for variant, adapter in adapters.items():
        policy = observer(args.base, adapter, args.max_new_tokens)
        for name, pairs_held in held.items():
            row = evaluate(policy, pairs_held, args.episode_steps)
            print(f"{variant:10} {name:18} {row['format_valid']:7.3f} {row['success']:8.3f} {row['strict']:7.3f} "
                  f"{row['tokens_per_decision']:8.1f} {row['episodes']:3d} {row['wall_s']:7.1f}")


if __name__ == "__main__":
    main()
