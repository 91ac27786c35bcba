"""Local Observers side by side: transformers fp32 and bf16 against vLLM, base and with an adapter, 1 and 4 at once.

Each decision answers the Observer's real first prompt (system + user rendered from prompts.yaml, the task text the
runtime gives it) for a few problems, constrained to its schema, sampled at a temperature with one seed per decision.
"N at once" is N episodes deciding concurrently: N threads, each with its own transformers model (one torch thread
each), or N clients of one vLLM server (which batches them). Per row: seconds per decision (median), decisions per
second (all decisions over the row's wall time), prefill and decode tokens/s per decision, and valid decisions (the
Observer would accept them). Prefill is the prompt's forward pass (transformers: the first forward of generate; vLLM:
its /metrics request_prefill_time, where prompt tokens found in its prefix cache are not computed again); decode is
the rest of the decision's time over its new tokens (on CUDA the prefill's end waits for the GPU: with N at once,
for every thread's work queued by then). One uncounted decision opens each row (the schema's token
index is built once per process; vLLM's prefix cache then holds that prompt, as an episode's later decisions find
their prompt's beginning there). The adapter is a rank-8 LoRA on every projection with random
weights (`--adapter DIR` takes a trained one): its speed, not its answers, is measured.

    nice -n 5 .venv/bin/python benchmarks/local_model.py --model smollm2 --decisions 4
    nice -n 5 .venv/bin/python benchmarks/local_model.py --engines vllm --server http://127.0.0.1:8000/v1
    python3 benchmarks/local_model.py --engines fp32,bf16 --device cuda     # transformers on a GPU (gpu/README.md)
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from aoi.agents.actions import FormatError, extract_json
from aoi.agents.loop import render
from aoi.agents.observer import ANSWER_FORMATS, NEXT_STEPS
from aoi.agents.tools import render_team
from aoi.env import make

PROBLEMS = ("k8s_target_port-misconfig-detection-1", "revoke_auth_mongodb-localization-1")
ENGINES = ("fp32", "bf16", "vllm")  # transformers fp32, transformers bf16, vLLM (bf16)


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


def random_adapter(base: str, folder: Path) -> Path:
    """Write a rank-8 LoRA with random weights on the base, with a manifest naming it; return the folder."""
    import torch
    from peft import get_peft_model

    from aoi.models.bases import base_identity, load_base
    from aoi.train.common import Lora
    from aoi.train.manifest import write_manifest

    model = get_peft_model(load_base(base)[0], Lora().peft())
    with torch.no_grad():
        for name, weight in model.named_parameters():
            if "lora_B" in name:
                weight.normal_(0.0, 0.02, generator=torch.Generator().manual_seed(0))
    model.save_pretrained(folder)
    write_manifest(folder, base=base_identity(base), data_sha256="-", split="-", role="observer",
                   hyper_parameters={"note": "random weights for benchmarks/local_model.py"}, metrics={}, kind="sft")
    return folder


class PrefillTimer:
    """Forward hooks on a transformers model: the seconds of each generate's first forward (the prompt's)."""

    def __init__(self, model):
        self.first: float | None = None
        self.started = 0.0
        self.cuda = model.device.type == "cuda"  # kernels run behind the forward's return: wait for them
        model.register_forward_pre_hook(self._before)
        model.register_forward_hook(self._after)

    def _before(self, module, args):
        self.started = time.perf_counter()

    def _after(self, module, args, output):
        if self.first is None:
            if self.cuda:
                import torch

                torch.cuda.synchronize()
            self.first = time.perf_counter() - self.started


def transformers_decide(args, dtype: str, adapter: Path | None, copies: int):
    """Return `copies` deciders on their own transformers models, each taking (messages, seed) to a row."""
    from aoi.models.local import LocalModel

    def decider():
        model = LocalModel(args.model, adapter=adapter, dtype=dtype, temperature=args.temperature,
                           max_new_tokens=args.max_tokens, progress=False, threads=1, device=args.device)
        inner = model.model.get_base_model() if adapter else model.model
        timer = PrefillTimer(inner)

        def decide(messages, seed):
            timer.first, model.seed, model.calls = None, seed, 0
            done = model.complete(messages, role="observer")
            return row(done, timer.first)

        return decide

    return [decider() for _ in range(copies)]


def vllm_decide(args, url: str, adapter: Path | None, copies: int):
    """Return `copies` deciders drawing on the vLLM server at `url` (their prefill comes from its /metrics)."""
    from aoi.models.vllm_model import VllmModel

    def decider():
        model = VllmModel(args.model, adapter=adapter, server=url, temperature=args.temperature,
                          max_new_tokens=args.max_tokens)

        def decide(messages, seed):
            model.seed, model.calls = seed, 0
            return row(model.complete(messages, role="observer"), None)

        return decide

    return [decider() for _ in range(copies)]


def row(done, prefill: float | None) -> dict:
    """Return one decision's figures."""
    return {"seconds": done.latency, "tokens": done.output_tokens, "prompt": done.input_tokens, "prefill": prefill,
            "valid": valid(done.text)}


def server_counters(url: str) -> dict:
    """Return vLLM's totals: prompt and generated tokens, prefill and decode seconds (summed over requests)."""
    names = {"vllm:prompt_tokens_total": "prompt", "vllm:generation_tokens_total": "tokens",
             "vllm:request_prefill_time_seconds_sum": "prefill_s", "vllm:request_decode_time_seconds_sum": "decode_s"}
    with urllib.request.urlopen(url.removesuffix("/v1") + "/metrics", timeout=30) as answer:
        lines = answer.read().decode().splitlines()
    found = dict.fromkeys(names.values(), 0.0)
    for line in lines:
        name = line.split("{", 1)[0].split(" ", 1)[0]
        if name in names:
            found[names[name]] += float(line.rsplit(" ", 1)[1])
    return found


def measure(deciders: list, prompts: list, decisions: int) -> tuple[list[dict], float]:
    """Make `decisions` decisions per prompt, len(deciders) at once; return the rows and the wall seconds.

    One decision first, not counted: the schema's token index is built once per process, vLLM warms up.
    """
    deciders[0](prompts[0], 99)
    jobs = [(messages, seed) for seed in range(decisions) for messages in prompts]
    started = time.perf_counter()
    with ThreadPoolExecutor(len(deciders)) as pool:
        shares = [jobs[i::len(deciders)] for i in range(len(deciders))]
        done = pool.map(lambda pair: [pair[0](m, s) for m, s in pair[1]], zip(deciders, shares))
        rows = [r for share in done for r in share]
    return rows, time.perf_counter() - started


def summary(name: str, rows: list[dict], wall: float, server: dict | None = None) -> str:
    """Return one table row: s/decision, decisions/s, prefill and decode tok/s, valid, tokens."""
    if server:  # vLLM's own split of each request's time
        prefill = server["prompt"] / server["prefill_s"] if server["prefill_s"] else float("nan")
        decode = server["tokens"] / server["decode_s"] if server["decode_s"] else float("nan")
    else:
        prefill = statistics.median(r["prompt"] / r["prefill"] for r in rows)
        decode = statistics.median(r["tokens"] / max(1e-9, r["seconds"] - r["prefill"]) for r in rows)
    seconds = statistics.median(r["seconds"] for r in rows)
    return (f"| {name} | {seconds:.2f} | {len(rows) / wall:.3f} | {prefill:.0f} | {decode:.1f} | "
            f"{sum(r['valid'] for r in rows)}/{len(rows)} | {statistics.median(r['tokens'] for r in rows):.0f} | "
            f"{statistics.median(r['prompt'] for r in rows):.0f} |")


def run(args, engine: str, adapter: Path | None, copies: int, prompts: list, url: str | None) -> str:
    """Measure one configuration; return its table row."""
    name = f"{'transformers ' + engine if engine != 'vllm' else 'vLLM bf16'}, {'adapter' if adapter else 'base'}, " \
           f"{copies} at once"
    if engine == "vllm":
        deciders = vllm_decide(args, url, adapter, copies)
        before = server_counters(url)
        rows, wall = measure(deciders, prompts, args.decisions)
        after = server_counters(url)
        return summary(name, rows, wall, {k: after[k] - before[k] for k in after})
    rows, wall = measure(transformers_decide(args, engine, adapter, copies), prompts, args.decisions)
    return summary(name, rows, wall)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2", help="base: smollm2 or a model directory")
    parser.add_argument("--problems", default=",".join(PROBLEMS))
    parser.add_argument("--decisions", type=int, default=4, help="sampled decisions per problem and row")
    parser.add_argument("--max-tokens", type=int, default=256)
    parser.add_argument("--temperature", type=float, default=0.7)
    parser.add_argument("--engines", default=",".join(ENGINES), help="comma list of fp32, bf16 (transformers), vllm")
    parser.add_argument("--concurrency", default="1,4", help="comma list: episodes deciding at once")
    parser.add_argument("--adapter", type=Path, default=None, help="a trained adapter (default: a random LoRA)")
    parser.add_argument("--server", default=None, help="a vLLM server on --model (default: one started here)")
    parser.add_argument("--device", default="cpu", help="transformers' device: cpu or cuda")
    args = parser.parse_args()
    prompts = [first_prompt(pid, pid.split("-")[-2]) for pid in args.problems.split(",")]
    adapter = args.adapter or random_adapter(args.model, Path(tempfile.mkdtemp(prefix="aoi-bench-lora-")))
    engines, levels = args.engines.split(","), [int(n) for n in args.concurrency.split(",")]
    print(f"load average before: {' '.join(f'{x:.1f}' for x in os.getloadavg())}; transformers on {args.device}",
          file=sys.stderr, flush=True)
    url, server = args.server, None
    if "vllm" in engines and url is None:
        from aoi.models.vllm_server import ManagedServer

        server = ManagedServer(base=args.model, dtype="bfloat16", memory=0.2).start()
        url = server.url
    print("| engine, policy, episodes at once | s/decision | decisions/s | prefill tok/s | decode tok/s | valid | "
          "tokens | prompt tokens |")
    print("|---|---|---|---|---|---|---|---|")
    try:
        for engine in engines:
            for policy in (None, adapter):
                for copies in levels:
                    print(run(args, engine, policy, copies, prompts, url), flush=True)
    finally:
        if server is not None:
            server.stop()
    print(f"load average after: {' '.join(f'{x:.1f}' for x in os.getloadavg())}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
