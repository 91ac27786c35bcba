"""A local causal LM (`tiny`, `smollm2` or a model directory, see bases.py) with an optional PEFT LoRA adapter.

Replies of the JSON roles (Observer, Probe, Executor) stop as soon as their JSON object closes and, by default, are
constrained to the schema the call sends (aoi.models.schemas; without one, an Observer's read from its prompt by
aoi.models.compact.reply_schema) with constrained.py's sampler, so a small model's decision always parses. torch,
transformers, peft and lm-format-enforcer come with the `local` extra and are imported only when a model is built.
Nothing is downloaded.
"""

from __future__ import annotations

import json
import sys
import time
import warnings
from pathlib import Path
from typing import Any

from aoi.models.base import Completion, Message, ModelError
from aoi.models.bases import base_identity, check_base, load_base, smollm2_path  # noqa: F401  (smollm2_path: old path)
from aoi.models.compact import COMPACT, reply_schema
from aoi.models.constrained import JsonScanner, schema_processor

DEFAULT_MAX_NEW_TOKENS = 256


class LocalModel:
    """Generate with a local causal LM: greedy at temperature 0, seeded sampling otherwise."""

    decision_format = COMPACT  # as the Observer, a small model decides in the compact format (aoi.models.compact)

    def __init__(self, base: str | Path = "smollm2", adapter: str | Path | None = None, device: str = "cpu",
                 max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS, temperature: float = 0.0, seed: int = 0,
                 logprobs: bool = False, constrained: bool = True, progress: bool | None = None,
                 threads: int | None = None, dtype: str = "auto"):
        """Load the base model, then the adapter if one is given.

        Args:
            base: "tiny", "smollm2", a model directory (save_pretrained) or a `.gguf` file.
            adapter: A PEFT LoRA adapter directory; its manifest.json (written by `aoi train`) must name this base.
            device: "cpu" (default), "cuda", or "auto" (CUDA when present).
            max_new_tokens: Default cap on generated tokens.
            temperature: Default temperature; 0 means greedy.
            seed: Seed of sampling; call n samples with seed + n, so a run replays exactly.
            logprobs: Return the log-probability of each generated token under the model (for GRPO).
            constrained: Constrain the JSON roles' replies to the schema a call sends (constrained.py).
            progress: Show "<role> thinking… N tok/s" on stderr; None: only when stderr is a terminal.
            threads: torch's CPU threads for the whole process (None: torch's default). On a machine other jobs
                share, 1 can be several times faster than threads that wait on each other.
            dtype: "fp32", "bf16", or "auto": bf16 on CUDA, and on a CPU with native bf16 (AVX512-BF16 or AMX:
                1.2x faster than fp32 on SmolLM2 here), except for `tiny`, the tests' model, which stays fp32.

        Example:
            >>> m = LocalModel("smollm2")  # doctest: +SKIP
            >>> ask = [{"role": "user", "content": "Capital of France?"}]
            >>> m.complete(ask, role="compressor").text  # doctest: +SKIP
            'The capital of France is Paris.'
        """
        self.base, self.adapter = str(base), Path(adapter) if adapter else None
        self.adapter_version: str | None = None  # the adapter manifest's version (trajectories record it)
        self.device = _device(device)
        check_base(self.base)  # the commoner mistakes first, before the heavy load
        if threads:
            _set_threads(threads)
        if self.adapter is not None:
            self.adapter_version = check_adapter(self.adapter, self.base).get("version")
        model, self.tokenizer = load_base(self.base, self.device, dtype=_dtype(dtype, self.base, self.device))
        self.model = _with_adapter(model, self.adapter)
        self.name = f"local:{_short(self.base)}" + (f"+{self.adapter.name}" if self.adapter else "")
        self._options(max_new_tokens, temperature, seed, logprobs, constrained, progress)

    @classmethod
    def from_loaded(cls, model: Any, tokenizer: Any, *, name: str = "local:loaded", **options: Any) -> LocalModel:
        """Wrap a model already in memory (a policy being trained, say); options as for the constructor.

        Example:
            >>> policy = LocalModel.from_loaded(*load_base("tiny"), name="local:tiny", seed=3)  # doctest: +SKIP
        """
        self = cls.__new__(cls)
        self.base, self.adapter, self.device = name, None, str(model.device)
        self.model, self.tokenizer, self.name = model, tokenizer, name
        self._options(**options)
        return self

    def _options(self, max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS, temperature: float = 0.0, seed: int = 0,
                 logprobs: bool = False, constrained: bool = True, progress: bool | None = None) -> None:
        """Set the generation options (see __init__)."""
        self.max_new_tokens, self.temperature, self.seed, self.calls = max_new_tokens, temperature, seed, 0
        self.want_logprobs, self.constrained, self.progress = logprobs, constrained, progress

    def prompt(self, messages: list[Message]) -> str:
        """Render the conversation with the tokenizer's chat template, else as role-prefixed lines."""
        return render(self.tokenizer, messages)

    def complete(self, messages: list[Message], *, role: str, max_tokens: int | None = None,
                 temperature: float | None = None, schema: dict | None = None, context: Any = None) -> Completion:
        """Generate an answer; count tokens with the model's own tokenizer."""
        import torch

        started = time.perf_counter()
        temperature = self.temperature if temperature is None else temperature
        budget = max_tokens or self.max_new_tokens
        ids = self.encode(self.prompt(messages))
        options = self._sampling(budget, temperature) | self._steering(role, ids.shape[1], budget, messages, schema)
        with torch.random.fork_rng(devices=[]), torch.no_grad():  # seed locally: leave the global RNG alone
            torch.manual_seed(self.seed + self.calls)
            out = self.model.generate(ids, attention_mask=torch.ones_like(ids), **options)
        self.calls += 1
        new = out.sequences[0, ids.shape[1]:]
        text = self.tokenizer.decode(new, skip_special_tokens=True).strip()
        # Log-probabilities come from the raw logits: the policy's own, before any constraint (what GRPO needs).
        logprobs = token_logprobs(out.logits, new, temperature) if self.want_logprobs else None
        return Completion(text, input_tokens=int(ids.shape[1]), output_tokens=int(new.shape[0]),
                          latency=time.perf_counter() - started, logprobs=logprobs,
                          meta={"model": self.name, "token_ids": new.tolist(),
                                "constrained": options.get("logits_processor") is not None})

    def encode(self, text: str) -> Any:
        """Return the prompt's token ids as a (1, n) tensor on the model's device."""
        import torch

        return torch.tensor([token_ids(self.tokenizer, text)], device=self.device)

    def _sampling(self, max_new_tokens: int, temperature: float) -> dict:
        """Return generate() options: greedy at temperature 0, sampling otherwise; raw logits kept."""
        pad = self.tokenizer.pad_token_id
        opts = {"max_new_tokens": max_new_tokens, "return_dict_in_generate": True, "output_logits": self.want_logprobs,
                "pad_token_id": self.tokenizer.eos_token_id if pad is None else pad}
        if temperature > 0:
            return opts | {"do_sample": True, "temperature": temperature, "top_k": 0, "top_p": 1.0}
        return opts | {"do_sample": False, "temperature": None, "top_k": None, "top_p": None}

    def _steering(self, role: str, prompt_length: int, budget: int, messages: list[Message] = (),
                  schema: dict | None = None) -> dict:
        """Return the stop-at-JSON-close criterion, the schema constraint and the progress line for this role."""
        from transformers import LogitsProcessorList, StoppingCriteriaList

        schema, options = schema or reply_schema(role, messages), {}
        if schema is not None:
            options["stopping_criteria"] = StoppingCriteriaList([JsonStop(self.tokenizer, prompt_length)])
        if schema is not None and self.constrained:
            options["logits_processor"] = LogitsProcessorList([schema_processor(self.tokenizer, schema,
                                                                                prompt_length, budget)])
        show = sys.stderr.isatty() if self.progress is None else self.progress
        return options | ({"streamer": Progress(str(getattr(role, "value", role)))} if show else {})


class JsonStop:
    """A stopping criterion: true once the reply's first JSON object has closed."""

    def __init__(self, tokenizer: Any, prompt_length: int):
        self.tokenizer, self.prompt_length = tokenizer, prompt_length

    def __call__(self, input_ids, scores, **kwargs):
        """Return one bool per sequence: has its JSON closed?"""
        import torch

        done = [JsonScanner().feed(self.tokenizer.decode(row[self.prompt_length:])) for row in input_ids.tolist()]
        return torch.tensor(done, dtype=torch.bool, device=input_ids.device)


class Progress:
    """A generate() streamer that keeps one live line on stderr: "<role> thinking… N tok, R tok/s"."""

    def __init__(self, role: str, stream: Any = None, every: float = 0.25):
        self.role, self.stream, self.every = role, stream or sys.stderr, every
        self.tokens, self.started, self.shown, self.prompt_seen = 0, time.perf_counter(), 0.0, False

    def put(self, value) -> None:
        """Count new tokens (the first call carries the prompt) and redraw at most every `every` seconds."""
        if not self.prompt_seen:
            self.prompt_seen, self.started = True, time.perf_counter()
            return
        self.tokens += int(value.numel())
        now = time.perf_counter()
        if now - self.shown >= self.every:
            self.shown = now
            self.stream.write(f"\r{self.line(now)}\x1b[K")
            self.stream.flush()

    def line(self, now: float) -> str:
        """Return the progress text."""
        rate = self.tokens / max(now - self.started, 1e-9)
        return f"{self.role} thinking… {self.tokens} tok, {rate:.1f} tok/s"

    def end(self) -> None:
        """Clear the line."""
        self.stream.write("\r\x1b[K")
        self.stream.flush()


def check_adapter(adapter: Path, base: str) -> dict:
    """Check an adapter directory and that its manifest names `base`; return the manifest ({} when there is none).

    Example:
        >>> check_adapter(Path("/nowhere"), "tiny")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        aoi.models.base.ModelError: /nowhere is not a PEFT adapter directory (no adapter_config.json); ...
    """
    if not (adapter / "adapter_config.json").is_file():
        raise ModelError(f"{adapter} is not a PEFT adapter directory (no adapter_config.json); train one with "
                         "`aoi train sft --out DIR` or save one with peft's model.save_pretrained(DIR)")
    path = adapter / "manifest.json"
    if not path.is_file():
        warnings.warn(f"{adapter} has no manifest.json: cannot check that it was trained on {base}", stacklevel=3)
        return {}
    manifest = json.loads(path.read_text())
    trained_on, ours = manifest.get("base_sha256"), base_identity(base)["sha256"]
    if trained_on != ours:
        raise ModelError(f"adapter {adapter} was trained on base {manifest.get('base')!r} (sha256 "
                         f"{str(trained_on)[:12]}), not on {base!r} (sha256 {ours[:12]}); use "
                         f"local:{manifest.get('base')}+adapter={adapter}")
    return manifest


def _with_adapter(model: Any, adapter: Path | None) -> Any:
    """Apply a LoRA adapter for inference."""
    if adapter is None:
        return model
    try:
        import peft
    except ImportError as err:
        raise ModelError(f"adapters need `peft` ({err}); install the extra: `pip install -e '.[local]'`") from err
    return peft.PeftModel.from_pretrained(model, str(adapter), is_trainable=False).eval()


def _device(device: str) -> str:
    """Resolve "auto" to CUDA when present; refuse CUDA when it is absent, saying what to use."""
    if device == "cpu":
        return device
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if str(device).startswith("cuda") and not torch.cuda.is_available():
        raise ModelError(f"device {device!r} asked but CUDA is not available here; use device=cpu (the default)")
    return device


def _dtype(dtype: str, base: str, device: str) -> str:
    """Resolve a dtype setting to torch's name: "auto" is bfloat16 on CUDA and on a CPU with native bf16 (not for
    tiny)."""
    if dtype in ("fp32", "bf16"):
        return {"fp32": "float32", "bf16": "bfloat16"}[dtype]
    if dtype != "auto":
        raise ModelError(f"unknown dtype {dtype!r}; use fp32, bf16 or auto (local:<base>+dtype=fp32)")
    if str(device).startswith("cuda"):
        return "bfloat16"
    return "bfloat16" if base != "tiny" and cpu_has_bf16() else "float32"


def cpu_has_bf16() -> bool:
    """Tell whether this CPU computes bfloat16 natively (AVX512-BF16 or AMX), where bf16 beats fp32."""
    import torch

    native = [getattr(torch.cpu, name, None) for name in ("_is_avx512_bf16_supported", "_is_amx_tile_supported")]
    return any(check() for check in native if check is not None)


def _set_threads(threads: int) -> None:
    """Set torch's intra-op CPU threads."""
    import torch

    torch.set_num_threads(threads)


def _short(base: str) -> str:
    """Name a base in the model's name: the word for tiny and smollm2, the folder or file name for a path."""
    return base if base in ("tiny", "smollm2") else Path(base).name


def render(tokenizer: Any, messages: list[Message]) -> str:
    """Return a conversation as the prompt text: the tokenizer's chat template, else role-prefixed lines.

    Example:
        >>> class Plain: chat_template = None
        >>> render(Plain(), [{"role": "user", "content": "hi"}])
        'user: hi\\nassistant:'
    """
    if getattr(tokenizer, "chat_template", None):
        return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    return "\n".join([f"{m['role']}: {m['content']}" for m in messages] + ["assistant:"])


def token_ids(tokenizer: Any, text: str) -> list[int]:
    """Return a rendered prompt's token ids (the chat template wrote any BOS it wants; plain text gets the specials)."""
    return tokenizer(text, add_special_tokens=not getattr(tokenizer, "chat_template", None))["input_ids"]


def token_logprobs(logits: tuple, tokens: Any, temperature: float) -> list[float]:
    """Return log p(token) per generated token, from raw logits scaled by temperature as TRL's GRPO does."""
    import torch

    scale = temperature if temperature > 0 else 1.0
    stacked = torch.stack([step[0] for step in logits]).float() / scale  # (new tokens, vocab)
    chosen = torch.log_softmax(stacked, dim=-1).gather(1, tokens.view(-1, 1).to(stacked.device))
    return chosen.view(-1).tolist()
