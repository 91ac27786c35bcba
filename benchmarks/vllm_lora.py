"""What a LoRA adapter costs on vLLM's CPU engine: the same requests to the base, to the base under a runtime LoRA
adapter, and to the adapter merged into the base's weights (a plain model folder on a server of its own).

The adapter is SmolLM2-135M with a rank-8 LoRA on the attention projections (aoi train's default) whose weights are
random (not zero), so that the adapted and merged models really differ from the base. Each request is one Observer
decision's shape: a prompt of --prompt tokens and --tokens tokens drawn greedily to the length (no stop), sent
--concurrent at a time as the evaluation's workers do; the variants alternate round by round on one server.

    python benchmarks/vllm_lora.py --rounds 4
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=4, help="timed rounds per variant")
    parser.add_argument("--prompt", type=int, default=1500, help="prompt tokens per request")
    parser.add_argument("--tokens", type=int, default=200, help="tokens drawn per request")
    parser.add_argument("--concurrent", type=int, default=2, help="requests at once")
    args = parser.parse_args()

    from aoi.models.vllm_server import ManagedServer

    folder = Path(tempfile.mkdtemp(prefix="aoi-vllm-lora-"))
    adapter, merged = _adapter_and_merged(folder)
    prompts = [[(7 * i + 13 * j) % 40000 + 100 for j in range(args.prompt)] for i in range(args.concurrent)]
    times: dict[str, list[float]] = {"base": [], "base + runtime LoRA": [], "merged": []}
    with ManagedServer(base="smollm2") as server:
        server.load_adapter("adapter", adapter)
        for round_ in range(args.rounds + 1):  # round 0 warms up and is not counted
            for name, model in (("base", server.name), ("base + runtime LoRA", "adapter")):
                seconds = _round(server.url, model, prompts, args.tokens)
                if round_:
                    times[name].append(seconds)
    with ManagedServer(base=str(merged)) as server:
        for round_ in range(args.rounds + 1):
            seconds = _round(server.url, server.name, prompts, args.tokens)
            if round_:
                times["merged"].append(seconds)
    base = statistics.median(times["base"])
    for name, spell in times.items():
        median = statistics.median(spell)
        print(f"{name}: {median:.2f} s per round of {args.concurrent} x ({args.prompt} prompt + {args.tokens} drawn "
              f"tokens) (spread {min(spell):.2f}-{max(spell):.2f}, n={len(spell)}); {median / base:.2f}x the base")


def _adapter_and_merged(folder: Path) -> tuple[Path, Path]:
    """Write a random rank-8 adapter of SmolLM2 and the model with it merged; return both folders."""
    import torch
    from peft import get_peft_model

    from aoi.models.bases import load_base
    from aoi.train.common import Lora

    model, tokenizer = load_base("smollm2")
    config = Lora().peft()
    config.init_lora_weights = False  # B random too: the adapter changes the outputs
    torch.manual_seed(0)
    peft_model = get_peft_model(model, config)
    peft_model.save_pretrained(str(folder / "adapter"))
    merged = peft_model.merge_and_unload()
    merged.save_pretrained(str(folder / "merged"))
    tokenizer.save_pretrained(str(folder / "merged"))
    return folder / "adapter", folder / "merged"


def _round(url: str, model: str, prompts: list[list[int]], tokens: int) -> float:
    """Send the prompts at once (one thread each); return the seconds until the last answer."""
    from aoi.models.vllm_client import Server

    def one(prompt: list[int]) -> None:
        server = Server(url)
        try:
            server.request("POST", "/v1/completions", {"model": model, "prompt": prompt, "max_tokens": tokens,
                                                       "temperature": 0.0, "ignore_eos": True})
        finally:
            server.close()

    started = time.perf_counter()
    with ThreadPoolExecutor(len(prompts)) as pool:
        list(pool.map(one, prompts))
    return time.perf_counter() - started


if __name__ == "__main__":
    main()
