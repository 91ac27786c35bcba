"""Build a model from a spec string such as `openai:gpt-4o-mini` or `local:smollm2+adapter=runs/lora`."""

from __future__ import annotations

import contextlib
import re
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from aoi.models.base import Model, ModelError
from aoi.models.retry import with_retries

DTYPES = {"fp32": "float32", "bf16": "bfloat16"}  # +dtype= -> the name vLLM and torch use
OLLAMA_URL = "http://127.0.0.1:11434/v1"
FORMS = ("openai:<model>", "openrouter:<model>", "vllm:<model>@<url>", "ollama:<model>",
         "local:<tiny|smollm2|dir>[+adapter=<dir>][+device=<cpu|cuda|auto>][+engine=vllm|+server=<url>]",
         "replay:<file>", "expert")
LOCAL_PARTS = re.compile(r"\+(?=\w+=)")  # `+name=` starts a part; other `+` stay in the path
# Options every spec accepts (the run config passes them all); a backend drops those it has no use for.
COMMON = frozenset({"base_url", "api_key", "timeout", "temperature", "max_tokens", "max_retry_wait"})


def load_model(spec: str, *, attempts: int = 4, sleep: Callable[[float], Any] = time.sleep, **options: Any) -> Model:
    """Build the model a spec names; endpoint and local models come wrapped with retries.

    Args:
        spec: One of FORMS, e.g. "ollama:qwen2.5:0.5b" or "vllm:Qwen/Qwen2.5-7B@http://gpu:8000".
        attempts: Tries per call for retried models (replay and expert are never retried).
        sleep: How retries wait; tests inject a recorder.
        **options: Passed to the model's constructor (e.g. temperature=0.2, timeout=30), except max_retry_wait,
            which goes to the retries. The COMMON options are accepted by every spec and dropped where meaningless
            (a replay script has no temperature).

    Example:
        >>> load_model("ollama:qwen2.5:0.5b").name
        'openai:qwen2.5:0.5b'
    """
    kind, _, rest = spec.partition(":")
    if kind in ("replay", "expert"):
        return _BUILDERS[kind](rest, options)
    if kind not in _BUILDERS or not rest:
        raise ValueError(f"unknown model spec {spec!r}; use one of: {', '.join(FORMS)}")
    wait = {"max_retry_wait": options.pop("max_retry_wait")} if "max_retry_wait" in options else {}
    return with_retries(_BUILDERS[kind](rest, options), attempts=attempts, sleep=sleep, **wait)


def _openai(model: str, options: dict) -> Model:
    """Build an OpenAI-compatible model; base URL and key from options or the environment."""
    from aoi.models.openai_model import OpenAIModel

    return OpenAIModel(model, **options)


def _openrouter(model: str, options: dict) -> Model:
    """Build a model served by OpenRouter."""
    from aoi.models.openai_model import OPENROUTER_URL

    return _openai(model, {"base_url": OPENROUTER_URL} | options)


def _vllm(rest: str, options: dict) -> Model:
    """Build a model served by vLLM (or any server) at the URL after the last '@'; '/v1' is added when missing; a
    call's schema goes as `response_format` (vLLM, llama.cpp and LM Studio constrain decoding to it)."""
    model, _, url = rest.rpartition("@")
    if not model or not url.startswith(("http://", "https://")):
        raise ValueError(f"vllm spec needs vllm:<model>@<http(s)://host:port>, got vllm:{rest!r}")
    url = url.rstrip("/")
    return _openai(model, {"base_url": url if url.endswith("/v1") else url + "/v1", "structured": True} | options)


def _ollama(model: str, options: dict) -> Model:
    """Build a model served by a local Ollama."""
    return _openai(model, {"base_url": OLLAMA_URL} | options)


def _local(rest: str, options: dict) -> Model:
    """Build a local model: `<tiny|smollm2|dir>[+adapter=<dir>][+device=<cpu|cuda|auto>][+constrained=<on|off>]
    [+max_new_tokens=<n>][+threads=<n>][+dtype=<fp32|bf16>][+engine=<transformers|vllm>][+server=<url>]`; the run
    config's max_tokens (1024 by default) caps the local cap (256). `+engine=vllm` draws on a vLLM server this model
    starts (aoi.models.vllm_model), `+server=URL` on a running one (`aoi serve-model`)."""
    from aoi.models.local import DEFAULT_MAX_NEW_TOKENS

    base, parsed = local_parts(rest)
    cap, ceiling = parsed.pop("max_new_tokens", DEFAULT_MAX_NEW_TOKENS), options.get("max_tokens")
    parsed["max_new_tokens"] = min(cap, ceiling or cap)
    if parsed.pop("engine", "transformers") == "vllm" or "server" in parsed:
        return _on_vllm(base, parsed, options, rest)
    from aoi.models.local import LocalModel

    return LocalModel(base, **(_without(options, {"base_url", "api_key", "timeout", "max_tokens"}) | parsed))


def _on_vllm(base: str, parsed: dict, options: dict, rest: str) -> Model:
    """Build a local model drawn on vLLM (the transformers engine's parts refused)."""
    from aoi.models.vllm_model import VllmModel

    if {"device", "threads"} & set(parsed):
        raise ValueError(f"local:{rest}: +device and +threads set the transformers engine; vLLM's server chooses "
                         "its own device and threads (drop them, or drop +engine=vllm and +server=)")
    dtype = DTYPES[parsed.pop("dtype", "bf16")]
    return VllmModel(base, **(_without(options, {"base_url", "api_key", "max_tokens"}) | parsed), dtype=dtype)


@contextlib.contextmanager
def shared_servers(specs: Iterable[str]) -> Iterator[dict[str, str]]:
    """Yield {spec: the spec a run's workers use}: each `local:...+engine=vllm` spec without a server gets
    `+server=URL` of a server started here (stopped on leaving), so every worker and every role on it batches on one
    server: one per base and dtype, and one per adapter, which it serves merged into the base's weights under the
    adapter's name (a runtime LoRA takes vLLM's CPU engine 1.9x the base's time per request: benchmarks/
    vllm_lora.py; aoi.models.vllm_model uses a server that lists the adapter's name as it is); other specs map to
    themselves.

    Example:
        >>> with shared_servers(["expert", "local:smollm2+server=http://127.0.0.1:8000/v1"]) as specs:
        ...     sorted(specs.values())
        ['expert', 'local:smollm2+server=http://127.0.0.1:8000/v1']
    """
    with contextlib.ExitStack() as stack:
        urls, mapped = {}, {}
        for spec in specs:
            parts = vllm_parts(spec)
            if parts is None or parts.get("server"):
                mapped[spec] = spec
                continue
            key = (parts["base"], DTYPES[parts.get("dtype", "bf16")], parts.get("adapter"))
            if key not in urls:
                urls[key] = stack.enter_context(_server(*key, stack)).url
            mapped[spec] = f"{spec}+server={urls[key]}"
        yield mapped


def _server(base: str, dtype: str, adapter: str | None, stack: contextlib.ExitStack) -> Any:
    """Return the managed server for a base and dtype, with an adapter merged into the base (written into a
    temporary folder that the stack removes)."""
    from aoi.models.vllm_model import adapter_name
    from aoi.models.vllm_server import ManagedServer, merge_adapter

    if adapter is None:
        return ManagedServer(base=base, dtype=dtype)
    folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="aoi-merged-")))
    name = adapter_name(Path(adapter))
    return ManagedServer(base=str(merge_adapter(base, adapter, folder / name, dtype)), dtype=dtype, name=name)


def vllm_parts(spec: str) -> dict | None:
    """Return a `local:` spec's parts with "base" when it draws on vLLM, else None.

    Example:
        >>> vllm_parts("local:smollm2+engine=vllm"), vllm_parts("local:tiny"), vllm_parts("expert")
        ({'engine': 'vllm', 'base': 'smollm2'}, None, None)
    """
    kind, _, rest = spec.partition(":")
    if kind != "local" or not rest:
        return None
    base, parsed = local_parts(rest)
    return parsed | {"base": base} if parsed.get("engine") == "vllm" or "server" in parsed else None


def local_parts(rest: str) -> tuple[str, dict]:
    """Return a local spec's base and its `+name=value` parts (ValueError naming an unknown part).

    Example:
        >>> local_parts("smollm2+adapter=runs/lora+threads=2")
        ('smollm2', {'adapter': 'runs/lora', 'threads': 2})
    """
    base, *extras = LOCAL_PARTS.split(rest)
    return base, _local_extras(extras, rest)


def _local_extras(extras: list[str], rest: str) -> dict:
    """Parse the `+name=value` parts of a local spec."""
    parsed: dict = {}
    for extra in extras:
        name, _, value = extra.partition("=")
        kind = LOCAL_OPTIONS.get(name)
        if kind is None or not value or (kind is int and not value.isdigit()) or (
                isinstance(kind, tuple) and value not in kind):
            raise ValueError(f"unknown part {extra!r} in local:{rest}; use local:<tiny|smollm2|dir>[+adapter=<dir>]"
                             "[+device=<cpu|cuda|auto>][+constrained=<on|off>][+max_new_tokens=<n>][+threads=<n>]"
                             "[+dtype=<fp32|bf16>][+engine=<transformers|vllm>][+server=<url>]")
        parsed[name] = value if isinstance(kind, tuple) else kind(value)
    return parsed


LOCAL_OPTIONS = {"adapter": str, "device": str, "max_new_tokens": int, "threads": int, "server": str,
                 "constrained": lambda value: value not in ("off", "0", "false", "no"),
                 "dtype": ("fp32", "bf16"), "engine": ("transformers", "vllm")}


def _replay(path: str, options: dict) -> Model:
    """Load a replay script."""
    from aoi.models.replay import ReplayModel

    if not path:
        raise ValueError("replay spec needs a file: replay:<steps.yaml|steps.json>")
    return ReplayModel.from_file(path, **_without(options, COMMON))


def _expert(rest: str, options: dict) -> Model:
    """Build the analyzer-based expert model (written separately in aoi.models.expert)."""
    if rest:
        raise ValueError(f"the expert spec takes no argument, got expert:{rest!r}; write just 'expert'")
    try:
        from aoi.models.expert import ExpertModel
    except ImportError as err:
        raise ModelError(f"the expert model is not available ({err}); aoi.models.expert.ExpertModel must exist "
                         "- use another spec meanwhile, e.g. replay:<file> or ollama:<model>") from err
    return ExpertModel(**_without(options, COMMON))


def _without(options: dict, names: set | frozenset) -> dict:
    """Return the options minus the given names."""
    return {k: v for k, v in options.items() if k not in names}


_BUILDERS: dict[str, Callable[[str, dict], Model]] = {
    "openai": _openai, "openrouter": _openrouter, "vllm": _vllm, "ollama": _ollama,
    "local": _local, "replay": _replay, "expert": _expert,
}
