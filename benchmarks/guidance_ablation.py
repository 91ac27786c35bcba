"""Guidance ablation: the same eval (problems, seeds, k) without and with `--guidance FILE`; avg@k, best@k and the
spread over attempts per task type side by side.

Steps (each one the real CLI): `aoi eval --out OUT/base`, then (unless --guidance is given) `aoi evolve guidance
--from RUN... --out OUT/guidance.jsonl` mined from --mine-from runs (default: the base run itself, so the lessons come
from the very problems they are tested on: an optimistic bound), then `aoi eval --out OUT/guided --guidance FILE`
with the same seed and k, and `aoi report OUT/base --compare guided=OUT/guided` (the report's Comparison section:
avg@k, best@k, std and variance over attempts). A resumed OUT reuses finished episodes.

Offline models: the expert ignores its prompt (its decisions come from analyzers reading the findings), so guidance
cannot change its results; `local:smollm2` reads the prompt but is slow on CPU (~6.5 s per decision unloaded), so keep
the run tiny (--config with a small agent.max_iterations) and in the background with nice:

    nice -n 10 .venv/bin/python benchmarks/guidance_ablation.py --model local:smollm2+threads=1 \
        --task-type detection --app social-network --limit 2 -k 3 --config benchmarks/guidance_ablation.yaml \
        --out runs/ablation-smollm2 &

The same against an OpenAI-compatible endpoint (OpenAI, OpenRouter, vLLM, Ollama, llama.cpp server):

    OPENAI_API_KEY=sk-... .venv/bin/python benchmarks/guidance_ablation.py --model openai:gpt-4o-mini \
        --task-type localization -k 5 --workers 4 --out runs/ablation-gpt4o-mini
    .venv/bin/python benchmarks/guidance_ablation.py --model vllm:Qwen/Qwen2.5-7B-Instruct@http://127.0.0.1:8000/v1 \
        -k 5 --workers 8 --mine-from runs/train-split-run --out runs/ablation-qwen7b

With the learning benchmark's trained Observer (its eval config: expert Probe/Executor/Compressor, the adapter on
vLLM), on its held-out-target keys, guidance mined from the same Observer's runs on train-side keys:

    .venv/bin/python -m aoi eval --keys-file TRAIN_KEYS --config runs/learning/eval/grpo/config.yaml \
        --out runs/ablation-trained/mine --workers 2
    .venv/bin/python benchmarks/guidance_ablation.py --keys-file HELD_OUT_KEYS -k 3 --workers 2 \
        --config runs/learning/eval/grpo/config.yaml --mine-from runs/ablation-trained/mine --out runs/ablation-trained
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from aoi.evaluate.metrics import group_by, group_stats
from aoi.evaluate.select import select


def aoi(*args: str) -> float:
    """Run one `aoi` command (output shown), fail loudly on error; return its wall seconds."""
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "aoi", *args], check=False)
    if done.returncode != 0:
        sys.exit(f"`aoi {' '.join(args)}` exited {done.returncode}")
    return time.monotonic() - started


def rows(run: Path) -> list[dict]:
    """Return a run's result rows."""
    return [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines() if line.strip()]


def table(base: list[dict], guided: list[dict]) -> list[str]:
    """Return the side-by-side lines: per task type and overall, avg@k, best@k, std and variance over attempts."""
    head = f"{'task type':<13}{'eps':>5} | {'avg@k %':>8}{'best@k %':>9}{'std %':>7}{'var pp²':>9} | " \
           f"{'avg@k %':>8}{'best@k %':>9}{'std %':>7}{'var pp²':>9} | {'Δ avg@k':>8}{'Δ std':>7}"
    lines = [f"{'':<19}| {'without guidance':^33} | {'with guidance':^33} |", head, "-" * len(head)]
    groups = {**group_by(base, "task_type"), "overall": base}
    other = {**group_by(guided, "task_type"), "overall": guided}
    for name, rows_ in groups.items():
        a, b = group_stats(rows_), group_stats(other.get(name, []))
        cells = [f"{100 * s['avg_at_k']:8.1f}{100 * s['best_at_k']:9.1f}{100 * s['std']:7.1f}"
                 f"{(100 * s['std']) ** 2:9.1f}" for s in (a, b)]
        lines.append(f"{name:<13}{a['episodes']:>5} | {cells[0]} | {cells[1]} | "
                     f"{100 * (b['avg_at_k'] - a['avg_at_k']):+8.1f}{100 * (b['std'] - a['std']):+7.1f}")
    return lines


def problems(args) -> str:
    """Return the comma-separated problem ids the ablation runs (the selection, cut to --limit)."""
    pairs, _ = select(args.problems, args.task_type, args.app, None)
    ids = list(dict.fromkeys(pid for pid, _ in pairs))
    return ",".join(ids[:args.limit] if args.limit else ids)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="expert")
    parser.add_argument("--problems", default="all")
    parser.add_argument("--task-type")
    parser.add_argument("--app")
    parser.add_argument("--limit", type=int, default=0, help="Keep the first N problems of the selection.")
    parser.add_argument("--keys-file", help="Run these problem keys (problem_id@target, one per line) instead of "
                        "--problems/--task-type/--app.")
    parser.add_argument("-k", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--config", help="A config file for both arms (e.g. small agent budgets).")
    parser.add_argument("--guidance", help="Use this guidance file instead of mining one.")
    parser.add_argument("--mine-from", action="append", help="Runs to mine (repeatable; default: the base run).")
    parser.add_argument("--out", default="runs/guidance-ablation")
    args = parser.parse_args()
    if args.k < 3:
        parser.error("-k must be at least 3: the spread over attempts needs several attempts")
    out = Path(args.out)
    chosen = ["--keys-file", args.keys_file] if args.keys_file else ["--problems", problems(args)]
    common = [*chosen, "-k", str(args.k), "--seed", str(args.seed), "--model", args.model,
              "--workers", str(args.workers), *(["--config", args.config] if args.config else [])]
    wall = {"base": aoi("eval", "--out", str(out / "base"), *common)}
    guidance = args.guidance or str(out / "guidance.jsonl")
    if not args.guidance:
        mined = [x for run in (args.mine_from or [str(out / "base")]) for x in ("--from", run)]
        aoi("evolve", "guidance", *mined, "--out", guidance)
    wall["guided"] = aoi("eval", "--out", str(out / "guided"), *common, "--guidance", guidance)
    aoi("report", str(out / "base"), "--compare", f"guided={out / 'guided'}", "--out", str(out / "report"))
    entries = sum(1 for line in Path(guidance).read_text().splitlines() if line.strip())
    count = len({json.dumps([r["problem_id"], r.get("target")]) for r in rows(out / "base")})
    print(f"\nguidance ablation: {args.model}, {count} problem key(s), k={args.k}, seed {args.seed}, "
          f"{entries} guidance entries from {args.guidance or ', '.join(args.mine_from or ['the base run itself'])}")
    print("\n".join(table(rows(out / "base"), rows(out / "guided"))))
    print(f"wall: base {wall['base']:.0f}s, guided {wall['guided']:.0f}s; report {out / 'report.md'}")
    if args.model == "expert" and not args.config:  # a config may give the Observer another model
        print("note: the expert ignores its prompt, so guidance cannot change its results (identical by design)")


if __name__ == "__main__":
    main()
