"""Requests to a vLLM-shaped OpenAI-compatible completions server (vLLM's own, or aoi.echo.serve's loopback one).

One client for every caller: the `local:...+engine=vllm` policy (vllm_model.py), the managed server (vllm_server.py)
and Echo's server samplers (aoi.train.served). A prompt travels as token ids rendered here with the chat template
(so the server sees exactly what aoi.models.local would feed the model), the reply comes back as token ids
(`return_tokens_as_token_ids`: "token_id:N"), a JSON schema goes in `structured_outputs`, and behaviour log-probs
come from a scoring request's `prompt_logprobs` (rows keyed by the token id's string, first row null).
"""

from __future__ import annotations

from typing import Any

from aoi.models.base import ModelError

LORA_HINT = ("start vLLM with --enable-lora (and --max-lora-rank at least the adapter's r) under "
             "VLLM_ALLOW_RUNTIME_LORA_UPDATING=True (`aoi serve-model` does), or use `python -m aoi.echo.serve "
             "--base BASE`")


class ServerError(ModelError):
    """The completions server is unreachable or refused a request; the message says what to fix."""


class Server:
    """JSON over HTTP to one OpenAI-compatible server; errors become ServerError saying what to fix.

    `flag` names the option that gave the URL, for the messages (Echo's --sampler-url, a spec's +server=).
    """

    def __init__(self, url: str, timeout: float = 600.0, flag: str = "--sampler-url"):
        import httpx

        if not url.startswith(("http://", "https://")):
            raise ServerError(f"{flag} {url!r} is not an http(s) URL; give e.g. http://127.0.0.1:8000/v1")
        self.url, self.flag = url.rstrip("/").removesuffix("/v1"), flag
        self.client = httpx.Client(base_url=self.url, timeout=timeout)

    def request(self, method: str, path: str, body: dict | None = None) -> Any:
        """Send a request; return the JSON answer (or the text when it is not JSON)."""
        import httpx

        try:
            response = self.client.request(method, path, json=body)
        except httpx.ReadTimeout as err:
            raise ServerError(f"the server at {self.url} gave no answer to {path} within {self.client.timeout.read:g} "
                              "s; it is busy (a local model on a loaded CPU can take minutes) or stuck: raise the "
                              "timeout (model.timeout, or models.<role>.timeout, in the config) or give it less "
                              "work at once") from err
        except httpx.TransportError as err:
            raise ServerError(f"no completions server answers at {self.url} ({type(err).__name__}: {err}); start "
                              f"it (`aoi serve-model`, vLLM or `python -m aoi.echo.serve`) or fix {self.flag}") from err
        if response.status_code >= 400:
            raise ServerError(f"{method} {self.url}{path} answered {response.status_code} "
                              f"({_message(response)}); {_hint(path, response.status_code)}")
        try:
            return response.json()
        except ValueError:
            return response.text

    def models(self) -> list[str]:
        """Return the ids of the models the server serves (the base and every adapter loaded)."""
        return [m["id"] for m in self.request("GET", "/v1/models").get("data", [])]

    def close(self) -> None:
        """Close the connection pool."""
        self.client.close()


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
        return "the server refused the request; check that it is vLLM's OpenAI server or aoi.echo.serve"
    return "the server failed; see its log"


def check_server(server: Server | str, model: str | None = None, flag: str = "--sampler-model") -> str:
    """Return the base's model name on the server; refuse a server that does not answer or lacks `model`.

    Example:
        >>> check_server("http://127.0.0.1:9/v1")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        aoi.models.vllm_client.ServerError: no completions server answers at http://127.0.0.1:9 ...
    """
    server = Server(server) if isinstance(server, str) else server
    served = server.models()
    if not served or (model is not None and model not in served):
        raise ServerError(f"the server at {server.url} serves {served}, not {model!r}; pass {flag} with "
                          "one of them (the base the trainer's --base names)")
    return model or served[0]


def completion_ids(server: Server, model: str, prompt_ids: list[int], *, max_tokens: int, temperature: float,
                   seed: int, schema: dict | None, n: int = 1) -> list[tuple[list[int], str]]:
    """Draw `n` completions of the prompt's ids in one request; return each one's token ids and finish reason ("stop"
    or "length"), in order. vLLM seeds the i-th with `seed + i`, so they are the draws of n requests seeded so."""
    # Every sampling setting is explicit: vLLM would otherwise take the model's generation_config defaults, and
    # the trainer's log-probs assume plain sampling at `temperature` (no top-k/top-p/min-p cut, no penalty).
    body = {"model": model, "prompt": prompt_ids, "max_tokens": max_tokens, "temperature": temperature,
            "top_p": 1.0, "top_k": -1, "min_p": 0.0, "repetition_penalty": 1.0, "seed": seed, "logprobs": 0,
            "return_tokens_as_token_ids": True}
    if n != 1:
        body["n"] = n
    if schema is not None:
        body["structured_outputs"] = {"json": schema}
    choices = sorted(server.request("POST", "/v1/completions", body)["choices"], key=lambda c: c.get("index", 0))
    drawn = []
    for choice in choices:
        tokens = (choice.get("logprobs") or {}).get("tokens")
        if tokens is None or not all(str(t).startswith("token_id:") for t in tokens):
            raise ServerError(f"the server at {server.url} returned no token ids; it must honour "
                              "return_tokens_as_token_ids (vLLM's OpenAI server does)")
        drawn.append(([int(str(t).split(":", 1)[1]) for t in tokens], str(choice.get("finish_reason"))))
    if len(drawn) != n:
        raise ServerError(f"the server at {server.url} returned {len(drawn)} completions for n={n}; it must honour n "
                          "(vLLM's OpenAI server does)")
    return drawn


def prompt_logprobs(server: Server, model: str, prompt_ids: list[int], completion: list[int]) -> list[float]:
    """Return log pi(token) of each completion token at temperature 1, unmasked (the server's prompt_logprobs)."""
    if not completion:
        return []
    body = {"model": model, "prompt": prompt_ids + completion, "max_tokens": 1, "temperature": 0.0,
            "prompt_logprobs": 0}
    rows = server.request("POST", "/v1/completions", body)["choices"][0].get("prompt_logprobs")
    if not rows or len(rows) != len(prompt_ids) + len(completion):
        raise ServerError(f"the server at {server.url} returned no prompt_logprobs for the scoring request; "
                          "it needs vLLM's prompt_logprobs extension")
    return [float(row[str(token)]["logprob"]) for row, token in zip(rows[len(prompt_ids):], completion)]
