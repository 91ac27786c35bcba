"""A sampler's policy copy on an OpenAI-compatible completions server (vLLM's, or aoi.echo.serve's loopback one).

The sampler keeps only the tokenizer: it renders the Observer's prompt with the chat template as aoi.models.local does,
sends the prompt's token ids to `/v1/completions` (JSON-schema constrained through `structured_outputs`, seeded by
`seed`) and reads the completion's token ids back (`return_tokens_as_token_ids`: "token_id:N").

Behaviour log-probs come from a second, scoring request over prompt + completion (`prompt_logprobs`), not from the
sampled tokens' `logprobs`: vLLM computes those after the schema mask, while the trainer's pi_old is of the unmasked
logits (aoi.echo.policy.completion_logprobs), so they would not be comparable. vLLM's default
`--logprobs-mode raw_logprobs` gives log-probs before temperature, so samples record `logprobs_temperature` 1.0 and
the trainer's importance weight compares them with pi_old at temperature 1.0 (the loss itself stays at the sampling
temperature): one convention on both sides of the ratio, whatever the temperature.

Weight sync: each new adapter version is written into a folder the server reads and loaded with
`/v1/load_lora_adapter` as `aoi-s<sampler>-v<N>` (vLLM needs --enable-lora and VLLM_ALLOW_RUNTIME_LORA_UPDATING=True);
requests then name it as their model and the previous version is unloaded.
"""

from __future__ import annotations

import shutil
import tempfile
import time
import weakref
from pathlib import Path
from typing import Any

from aoi.models.base import Completion, Message, ModelError
from aoi.models.bases import load_tokenizer
from aoi.models.compact import reply_schema
from aoi.models.local import render, token_ids

LORA_HINT = ("start vLLM with --enable-lora (and --max-lora-rank at least the adapter's r) under "
             "VLLM_ALLOW_RUNTIME_LORA_UPDATING=True, or use `python -m aoi.echo.serve --base BASE`")
RAW_TEMPERATURE = 1.0  # the temperature of the log-probs the server returns (vLLM's raw_logprobs: none applied)


class ServerError(ModelError):
    """The completions server is unreachable or refused a request; the message says what to fix."""


class Server:
    """JSON over HTTP to one OpenAI-compatible server; errors become ServerError saying what to fix."""

    def __init__(self, url: str, timeout: float = 600.0):
        import httpx

        if not url.startswith(("http://", "https://")):
            raise ServerError(f"--sampler-url {url!r} is not an http(s) URL; give e.g. http://127.0.0.1:8000/v1")
        self.url = url.rstrip("/").removesuffix("/v1")
        self.client = httpx.Client(base_url=self.url, timeout=timeout)

    def request(self, method: str, path: str, body: dict | None = None) -> Any:
        """Send a request; return the JSON answer (or the text when it is not JSON)."""
        import httpx

        try:
            response = self.client.request(method, path, json=body)
        except httpx.TransportError as err:
            raise ServerError(f"no completions server answers at {self.url} ({type(err).__name__}: {err}); start "
                              "it (vLLM or `python -m aoi.echo.serve`) or fix --sampler-url") from err
        if response.status_code >= 400:
            raise ServerError(f"{method} {self.url}{path} answered {response.status_code} "
                              f"({_message(response)}); {_hint(path, response.status_code)}")
        try:
            return response.json()
        except ValueError:
            return response.text

    def models(self) -> list[str]:
        """Return the ids of the models the server serves."""
        return [m["id"] for m in self.request("GET", "/v1/models").get("data", [])]


def _message(response: Any) -> str:
    """Return the error text of an answer (vLLM's {"error": {...}}, {"message"}, FastAPI's {"detail"}, or text)."""
    try:
        data = response.json()
    except ValueError:
        return response.text[:300]
    inner = data.get("error", data) if isinstance(data, dict) else data
    if isinstance(inner, dict):
        return str(inner.get("message") or inner.get("detail") or inner)[:300]
    return str(inner)[:300]


def _hint(path: str, status: int) -> str:
    """Return what to do about a refused request."""
    if "lora_adapter" in path and status in (404, 405):
        return f"the server cannot load adapters at run time: {LORA_HINT}"
    if status == 404:
        return "the model (adapter) is not loaded on the server: was it restarted? rerun with --resume"
    if status < 500:
        return "the server refused Echo's request; check that it is vLLM's OpenAI server or aoi.echo.serve"
    return "the server failed; see its log"


class ServedPolicy:
    """One sampler's view of the server: its tokenizer, the adapter version loaded, and the two requests it makes."""

    def __init__(self, url: str, *, base: str, model: str | None = None, index: int = 0,
                 adapter_dir: str | None = None):
        self.server, self.index = Server(url), index
        self.model = self.base_model = check_server(self.server, model)
        self.tokenizer = load_tokenizer(base)
        self.folder = Path(adapter_dir or tempfile.mkdtemp(prefix="aoi-adapters-"))
        if adapter_dir is None:  # ours alone: gone with the sampler (best effort: a killed actor leaves it)
            weakref.finalize(self, shutil.rmtree, str(self.folder), True)
        self.loaded: str | None = None  # the adapter name requests use (None: the base model)

    def swap(self, version: int, files: dict[str, bytes]) -> None:
        """Make an adapter version the server's model for our requests: write, load, then unload the previous one."""
        name = f"aoi-s{self.index}-v{version}"
        folder = self.folder / name
        folder.mkdir(parents=True, exist_ok=True)
        for file, data in files.items():
            (folder / file).write_bytes(data)
        body = {"lora_name": name, "lora_path": str(folder)}
        try:
            self.server.request("POST", "/v1/load_lora_adapter", body)
        except ServerError as err:  # loaded before this sampler restarted: the folder was rewritten, load it afresh
            if "already" not in str(err):
                raise
            self.server.request("POST", "/v1/unload_lora_adapter", {"lora_name": name})
            self.server.request("POST", "/v1/load_lora_adapter", body)
        previous, self.loaded, self.model = self.loaded, name, name
        if previous and previous != name:
            self.server.request("POST", "/v1/unload_lora_adapter", {"lora_name": previous})
            shutil.rmtree(self.folder / previous, ignore_errors=True)

    def encode(self, messages: list[Message]) -> list[int]:
        """Return the prompt's token ids, rendered exactly as aoi.models.local renders them."""
        return token_ids(self.tokenizer, render(self.tokenizer, messages))

    def generate(self, prompt_ids: list[int], *, max_tokens: int, temperature: float, seed: int,
                 schema: dict | None) -> list[int]:
        """Draw a completion; return its token ids."""
        # Every sampling setting is explicit: vLLM would otherwise take the model's generation_config defaults, and
        # the trainer's log-probs assume plain sampling at `temperature` (no top-k/top-p/min-p cut, no penalty).
        body = {"model": self.model, "prompt": prompt_ids, "max_tokens": max_tokens, "temperature": temperature,
                "top_p": 1.0, "top_k": -1, "min_p": 0.0, "repetition_penalty": 1.0, "seed": seed, "logprobs": 0,
                "return_tokens_as_token_ids": True}
        if schema is not None:
            body["structured_outputs"] = {"json": schema}
        choice = self.server.request("POST", "/v1/completions", body)["choices"][0]
        tokens = (choice.get("logprobs") or {}).get("tokens")
        if tokens is None or not all(str(t).startswith("token_id:") for t in tokens):
            raise ServerError(f"the server at {self.server.url} returned no token ids; it must honour "
                              "return_tokens_as_token_ids (vLLM's OpenAI server does)")
        return [int(str(t).split(":", 1)[1]) for t in tokens]

    def score(self, prompt_ids: list[int], completion_ids: list[int]) -> list[float]:
        """Return log pi(token) of each completion token at temperature 1, unmasked (the server's prompt_logprobs)."""
        if not completion_ids:
            return []
        body = {"model": self.model, "prompt": prompt_ids + completion_ids, "max_tokens": 1, "temperature": 0.0,
                "prompt_logprobs": 0}
        rows = self.server.request("POST", "/v1/completions", body)["choices"][0].get("prompt_logprobs")
        if not rows or len(rows) != len(prompt_ids) + len(completion_ids):
            raise ServerError(f"the server at {self.server.url} returned no prompt_logprobs for the scoring request; "
                              "Echo needs vLLM's prompt_logprobs extension")
        return [float(row[str(token)]["logprob"]) for row, token in zip(rows[len(prompt_ids):], completion_ids)]


class ServedObserver:
    """GenerativeObserver's counterpart on a server: it keeps every call's tokens and behaviour log-probs."""

    name = "policy"

    def __init__(self, policy: ServedPolicy, *, max_new_tokens: int = 256, temperature: float = 1.0,
                 constrained: bool = True, seed: int = 0):
        self.policy, self.max_new_tokens, self.temperature = policy, max_new_tokens, temperature
        self.constrained, self.seed, self.calls = constrained, seed, []

    def complete(self, messages: list[Message], *, role: str, max_tokens: int | None = None,
                 temperature: float | None = None) -> Completion:
        """Draw one decision on the server (seed + call index, as LocalModel seeds); keep its ids and log-probs."""
        started = time.perf_counter()
        prompt_ids = self.policy.encode(messages)
        schema = reply_schema(role, messages) if self.constrained else None
        ids = self.policy.generate(prompt_ids, max_tokens=self.max_new_tokens, temperature=self.temperature,
                                   seed=self.seed + len(self.calls), schema=schema)
        logprobs = self.policy.score(prompt_ids, ids)
        text = self.policy.tokenizer.decode(ids, skip_special_tokens=True).strip()
        self.calls.append({"prompt_ids": prompt_ids, "completion_ids": ids, "logprobs": logprobs, "text": text,
                           "logprobs_temperature": RAW_TEMPERATURE})
        return Completion(text, input_tokens=len(prompt_ids), output_tokens=len(ids), logprobs=logprobs,
                          latency=time.perf_counter() - started, meta={"model": self.policy.model, "token_ids": ids})


def check_server(server: Server | str, model: str | None = None) -> str:
    """Return the base's model name on the server; refuse a server that does not answer or lacks `model`.

    Example:
        >>> check_server("http://127.0.0.1:9/v1")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        aoi.echo.served.ServerError: no completions server answers at http://127.0.0.1:9 ...
    """
    server = Server(server) if isinstance(server, str) else server
    served = server.models()
    if not served or (model is not None and model not in served):
        raise ServerError(f"the server at {server.url} serves {served}, not {model!r}; pass --sampler-model with "
                          "one of them (the base the trainer's --base names)")
    return model or served[0]

