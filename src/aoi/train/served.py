"""A sampler's policy copy on an OpenAI-compatible completions server (vLLM's, or aoi.echo.serve's loopback one).

The sampler keeps only the tokenizer: it renders the Observer's prompt with the chat template as aoi.models.local does,
sends the prompt's token ids to `/v1/completions` (JSON-schema constrained through `structured_outputs`, seeded by
`seed`) and reads the completion's token ids back (`return_tokens_as_token_ids`: "token_id:N"). The schema sent is
closed and its strings bounded by the cap (aoi.models.vllm_model.vllm_schema): against the real server (vLLM 0.32,
guidance backend) the Observer's open schema let 2 of 6 tiny-model replies run to the cap unparsed, the closed one 0.

Behaviour log-probs (Echo's samplers ask for them; GRPO's served rollout does not) come from a second, scoring request
over prompt + completion (`prompt_logprobs`: one row per prompt token, the first null, each keyed by the token id's
string), not from the sampled tokens' `logprobs`: under a schema vLLM computes those after the grammar mask (measured:
up to 11 nats above the unmasked log-prob), while the trainer's pi_old is of the unmasked logits
(aoi.echo.policy.completion_logprobs). The server runs with `--logprobs-mode raw_logprobs`: prompt log-probs are of
the raw logits whatever the request's temperature (the same at 0, 0.5 and 2), so samples record `logprobs_temperature`
1.0 and the trainer compares them with pi_old at temperature 1.0 (the loss itself stays at the sampling temperature).
On an fp32 server they match the trainer's fp32 log-probs within 1e-6 (tests/echo/test_vllm.py). A server that scores
for several samplers at once runs one sequence per engine step (aoi.models.vllm_launch.SCORING_FLAGS: batched beside
another request under an adapter, a scoring request kills vLLM 0.32's CPU engine).

Weight sync: each new adapter version is written into a folder the server reads and loaded with
`/v1/load_lora_adapter` as `<prefix>-s<sampler>-v<N>` (vLLM needs --enable-lora and
VLLM_ALLOW_RUNTIME_LORA_UPDATING=True); requests then name it as their model and the previous version is unloaded.
`close()` unloads the last one. `sampler_server` starts a managed vLLM server when the URL given is `vllm`.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import time
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from aoi.models.base import Completion, Message
from aoi.models.bases import load_tokenizer
from aoi.models.compact import reply_schema
from aoi.models.local import render, token_ids
from aoi.models.vllm_client import LORA_HINT, Server, ServerError, check_server, completion_ids, prompt_logprobs
from aoi.models.vllm_model import vllm_schema
from aoi.train.sampling import Draw

__all__ = ["AUTO", "LORA_HINT", "RAW_TEMPERATURE", "ServedObserver", "ServedPolicy", "ServerError", "check_server",
           "release_adapters", "sampler_server"]

RAW_TEMPERATURE = 1.0  # the temperature of the log-probs the server returns (vLLM's raw_logprobs: none applied)
AUTO = "vllm"  # --sampler-url vllm: start a managed vLLM server on the base for the run


class ServedPolicy:
    """One sampler's view of the server: its tokenizer, the adapter version loaded, and the two requests it makes."""

    def __init__(self, url: str, *, base: str, model: str | None = None, index: int = 0,
                 adapter_dir: str | None = None, prefix: str = "aoi"):
        self.server, self.index, self.prefix = Server(url), index, prefix
        self.model = self.base_model = check_server(self.server, model)
        self.tokenizer = load_tokenizer(base)
        self.folder = Path(adapter_dir or tempfile.mkdtemp(prefix="aoi-adapters-"))
        if adapter_dir is None:  # ours alone: gone with the sampler (best effort: a killed actor leaves it)
            weakref.finalize(self, shutil.rmtree, str(self.folder), True)
        self.loaded: str | None = None  # the adapter name requests use (None: the base model)

    def swap(self, version: int, files: dict[str, bytes]) -> None:
        """Make an adapter version the server's model for our requests: write, load, then unload the previous one."""
        name = f"{self.prefix}-s{self.index}-v{version}"
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
            self._unload(previous)

    def _unload(self, name: str) -> None:
        """Unload an adapter of ours and delete its folder."""
        self.server.request("POST", "/v1/unload_lora_adapter", {"lora_name": name})
        shutil.rmtree(self.folder / name, ignore_errors=True)

    def close(self) -> None:
        """Unload our adapter (the server keeps only the base for us) and close the connection."""
        if self.loaded:
            with contextlib.suppress(ServerError):
                self._unload(self.loaded)
            self.loaded, self.model = None, self.base_model
        self.server.close()

    def encode(self, messages: list[Message]) -> list[int]:
        """Return the prompt's token ids, rendered exactly as aoi.models.local renders them."""
        return token_ids(self.tokenizer, render(self.tokenizer, messages))

    def generate(self, prompt_ids: list[int], *, max_tokens: int, temperature: float, seed: int,
                 schema: dict | None, n: int = 1) -> list[list[int]]:
        """Draw `n` completions in one request (the i-th seeded `seed + i`); return their token ids."""
        return [ids for ids, _ in completion_ids(self.server, self.model, prompt_ids, max_tokens=max_tokens,
                                                 temperature=temperature, seed=seed, schema=schema, n=n)]

    def score(self, prompt_ids: list[int], completion_ids: list[int]) -> list[float]:
        """Return log pi(token) of each completion token at temperature 1, unmasked (the server's prompt_logprobs)."""
        return prompt_logprobs(self.server, self.model, prompt_ids, completion_ids)


class ServedObserver:
    """GenerativeObserver's counterpart on a server: it keeps every call as a Draw (tokens, behaviour log-probs)."""

    name = "policy"

    def __init__(self, policy: ServedPolicy, *, max_new_tokens: int = 256, temperature: float = 1.0,
                 constrained: bool = True, seed: int = 0, score: bool = True):
        self.policy, self.max_new_tokens, self.temperature = policy, max_new_tokens, temperature
        self.constrained, self.seed, self.score = constrained, seed, score  # score False: no log-probs (texts only)
        self.calls: list[Draw] = []

    def complete(self, messages: list[Message], *, role: str, max_tokens: int | None = None,
                 temperature: float | None = None, schema: dict | None = None, context: Any = None) -> Completion:
        """Draw one decision on the server (seed + call index, as LocalModel seeds); keep its ids and log-probs."""
        return self.draw(messages, role=role, schema=schema)[0]

    def draw(self, messages: list[Message], *, role: str, n: int = 1, schema: dict | None = None) -> list[Completion]:
        """Draw `n` decisions at one prompt in one request, which the server batches; keep each as a call.

        The i-th is seeded `seed + call index + i`, so they are the decisions n calls of `complete` would draw.
        """
        started = time.perf_counter()
        prompt_ids = self.policy.encode(messages)
        schema = (schema or reply_schema(role, messages)) if self.constrained else None
        drawn = self.policy.generate(prompt_ids, max_tokens=self.max_new_tokens, temperature=self.temperature,
                                     seed=self.seed + len(self.calls), n=n,
                                     schema=vllm_schema(schema, self.max_new_tokens) if schema else None)
        completions = []
        for ids in drawn:
            logprobs = self.policy.score(prompt_ids, ids) if self.score else None
            text = self.policy.tokenizer.decode(ids, skip_special_tokens=True).strip()
            self.calls.append(Draw(prompt_ids=prompt_ids, completion_ids=ids, logprobs=logprobs, text=text,
                                   logprobs_temperature=RAW_TEMPERATURE))
            completions.append(Completion(text, input_tokens=len(prompt_ids), output_tokens=len(ids),
                                          logprobs=logprobs, latency=time.perf_counter() - started,
                                          meta={"model": self.policy.model, "token_ids": ids}))
        return completions


def release_adapters(url: str, prefix: str, rounds: int = 3) -> list[str]:
    """Unload every adapter a run's samplers left on the server (names `<prefix>-s...`); return their names.

    It looks again after half a second: a sampler stopped mid-swap may have had a load under way.
    """
    server, released = Server(url), []
    try:
        for _ in range(rounds):
            names = [name for name in server.models() if name.startswith(f"{prefix}-s")]
            for name in names:
                with contextlib.suppress(ServerError):  # gone meanwhile
                    server.request("POST", "/v1/unload_lora_adapter", {"lora_name": name})
            released += names
            time.sleep(0.5)
        return released
    finally:
        server.close()


@contextlib.contextmanager
def sampler_server(url: str | None, base: str, precision: str = "fp32", *, scoring: bool = True
                   ) -> Iterator[str | None]:
    """Yield the URL samplers draw on: `url` as given, or with `vllm` a managed vLLM server on `base`, started here
    and stopped on leaving. It serves the trainer's precision ("fp32" or "bf16"), so the behaviour log-probs and the
    trainer's agree to rounding; for samplers that score, one sequence per step (SCORING_FLAGS), else it batches (a
    group's n draws in one request); a server given by URL that several scoring samplers share needs that too
    (`aoi serve-model --for-samplers`)."""
    if url != AUTO:
        yield url
        return
    from aoi.models.registry import DTYPES  # the precision's name in vLLM and torch
    from aoi.models.vllm_launch import SCORING_FLAGS
    from aoi.models.vllm_server import ManagedServer

    with ManagedServer(base=base, dtype=DTYPES[precision], extra=list(SCORING_FLAGS) if scoring else []) as managed:
        yield managed.url
