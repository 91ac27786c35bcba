"""Time a LoRA training step of SmolLM2-135M on the CPU in fp32 and under bf16 autocast, side by side.

The step is what `aoi train sft` runs per example (batch 1): forward, loss on the decision tokens, backward into the
LoRA matrices, an AdamW step. The rows are token sequences of the given lengths (the teacher's decisions run
~1,500 tokens of prompt and decision); the precisions alternate round by round so that a slow spell of the machine
falls on both. Also printed: the loss each precision computes on the same row with the same weights (bf16's rounding
against fp32's), so that the speed is read beside what it costs.

    python benchmarks/train_precision.py --lengths 1500 --rounds 5

With `--data DIR` (a dataset `aoi data export` wrote) it trains instead: `aoi train sft` for `--steps` steps in each
precision from the same seed on the same rows with the same schedule, and prints
each run's wall time, its mean loss over the last ten steps and its per-position losses at the end (the first
decision apart; train and held-out rows): whether bf16 learns what fp32 learns.

    python benchmarks/train_precision.py --data runs/learning-quick/data --steps 40
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import tempfile
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[1500], help="tokens per row")
    parser.add_argument("--rounds", type=int, default=5, help="timed steps per precision and length")
    parser.add_argument("--completion", type=int, default=250, help="decision tokens per row (where the loss is)")
    parser.add_argument("--data", type=Path, help="a dataset folder: train on it in both precisions instead")
    parser.add_argument("--steps", type=int, default=40, help="--data: SFT steps per precision")
    args = parser.parse_args()
    if args.data:
        return learn(args.data, args.steps)

    import torch
    from peft import get_peft_model

    from aoi.models.bases import load_base
    from aoi.models.local import cpu_has_bf16
    from aoi.train.common import Lora

    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, native bf16: {cpu_has_bf16()}")
    model, _ = load_base("smollm2")
    model = get_peft_model(model.train(), Lora().peft())
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-5)
    generator = torch.Generator().manual_seed(0)
    precisions = {"fp32": contextlib.nullcontext, "bf16": lambda: torch.autocast("cpu", dtype=torch.bfloat16)}
    for length in args.lengths:
        ids = torch.randint(0, model.config.vocab_size, (1, length), generator=generator)
        labels = ids.clone()
        labels[:, : length - args.completion] = -100
        with torch.no_grad():
            losses = {name: _loss(model, ids, labels, autocast) for name, autocast in precisions.items()}
        times: dict[str, list[float]] = {name: [] for name in precisions}
        for round_ in range(args.rounds + 1):  # round 0 warms each path up and is not counted
            for name, autocast in precisions.items():
                started = time.perf_counter()
                with autocast():
                    loss = model(input_ids=ids, labels=labels).loss
                loss.backward()
                optimizer.step()
                optimizer.zero_grad()
                if round_:
                    times[name].append(time.perf_counter() - started)
        fp32, bf16 = (statistics.median(times[name]) for name in ("fp32", "bf16"))
        print(f"{length} tokens: fp32 {fp32:.2f} s/step (spread {min(times['fp32']):.2f}-{max(times['fp32']):.2f}), "
              f"bf16 autocast {bf16:.2f} s/step (spread {min(times['bf16']):.2f}-{max(times['bf16']):.2f}), "
              f"ratio fp32/bf16 {fp32 / bf16:.2f}; loss fp32 {losses['fp32']:.4f} bf16 {losses['bf16']:.4f}")


def learn(data: Path, steps: int) -> None:
    """Train SmolLM2 on the dataset for `steps` steps in fp32 and in bf16; print what each learned and in how long."""
    from aoi.train.common import read_jsonl
    from aoi.train.sft import SftOptions, train_sft

    folder = Path(tempfile.mkdtemp(prefix="aoi-precision-"))
    for precision in ("fp32", "bf16"):
        out = folder / precision
        started = time.perf_counter()
        train_sft(SftOptions(data=data, out=out, base="smollm2", max_steps=steps, precision=precision,
                             max_length=2048, eval_every=steps, eval_rows=16, learning_rate=2e-4))
        wall = time.perf_counter() - started
        lines = read_jsonl(out / "metrics.jsonl")
        losses = [line["loss"] for line in lines if "loss" in line]
        end = [line for line in lines if "train/loss_first" in line][-1]
        positions = ", ".join(f"{k} {v:.3f}" for k, v in end.items() if "/loss_" in k)
        print(f"{precision}: {steps} steps in {wall:.0f} s (measurements at step 0 and the end included); mean loss "
              f"of the last 10 steps {statistics.mean(losses[-10:]):.3f}; at the end: {positions}")


def _loss(model, ids, labels, autocast) -> float:
    """Return the loss of one row under a precision."""
    with autocast():
        return float(model(input_ids=ids, labels=labels).loss)


if __name__ == "__main__":
    main()
