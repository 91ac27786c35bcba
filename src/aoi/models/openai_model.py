"""A chat model behind any OpenAI-compatible endpoint: OpenAI, OpenRouter, vLLM, Ollama, llama.cpp server."""

from __future__ import annotations

import email.utils
import importlib
import os
import re
import threading
import time
from typing import Any

import openai

from aoi.models.base import Completion, Message, ModelError, TransientModelError
from aoi.models.reply import NoChoices, Reply, parse_body
from aoi.models.tokens import count_messages, count_tokens

OPENROUTER_URL = "https://openrouter.ai/api/v1"
TRANSIENT_STATUS = {408, 409, 429}  # plus every 5xx; the same set the SDK itself retries
DEADLINE_GRACE = 0.5  # seconds past the timeout before a call still in flight is abandoned (its own check is first)


def _transports() -> list[Any]:
    """Return the HTTP libraries the SDK may read through: httpx2 (openai 3.x) and httpx (before, or a client
    passed in); their errors are not openai's, and a body cut short raises them from the stream itself."""
    found = []
    for name in ("httpx2", "httpx"):
        try:
            found.append(importlib.import_module(name))
        except ImportError:
            pass
    return found


_TRANSPORTS = _transports()
# A broken transfer (reset, truncated body, protocol error, timeout) or a stream read after its client was closed.
TRANSPORT_ERRORS = tuple(cls for lib in _TRANSPORTS for cls in (lib.HTTPError, lib.StreamError))
TIMEOUT_ERRORS = (openai.APITimeoutError, *(lib.TimeoutException for lib in _TRANSPORTS))


class OpenAIModel:
    """Chat completions from an OpenAI-compatible server; SDK errors become ModelError or TransientModelError."""

    def __init__(self, model: str | None = None, base_url: str | None = None, api_key: str | None = None,
                 timeout: float = 60.0, temperature: float = 0.0, max_tokens: int = 1024,
                 extra_body: dict | None = None, structured: bool = False):
        """Configure from arguments, else from AOI_MODEL, AOI_BASE_URL and AOI_API_KEY.

        Args:
            model: The model name the server knows (env AOI_MODEL).
            base_url: The server's `/v1` URL (env AOI_BASE_URL, else OPENAI_BASE_URL); None means api.openai.com.
            api_key: The key (env AOI_API_KEY, else OPENAI_API_KEY, or OPENROUTER_API_KEY for OpenRouter). Local
                servers (any other base URL) need none.
            timeout: Seconds a whole request may take (connecting, waiting, reading the body) before it counts as
                a transient timeout.
            temperature: Default sampling temperature.
            max_tokens: Default cap on generated tokens.
            extra_body: Extra JSON fields sent with every request (e.g. vLLM's `top_k`).
            structured: Send a call's schema as `response_format` (json_schema, not strict), for servers that
                constrain decoding to it (vLLM: the `vllm:` spec sets it); off, the schema is ignored.

        Example:
            >>> m = OpenAIModel("qwen2.5:0.5b", base_url="http://127.0.0.1:11434/v1")
            >>> m.name
            'openai:qwen2.5:0.5b'
        """
        # AOI_MODEL holds a spec (openai:gpt-4o-mini) as everywhere in AOI; the provider prefix is not the name
        self.model = model or os.environ.get("AOI_MODEL", "").split(":", 1)[-1]
        if not self.model:
            raise ModelError("no model name given: pass model=... or set AOI_MODEL (e.g. AOI_MODEL=openai:gpt-4o-mini)")
        url = base_url or os.environ.get("AOI_BASE_URL") or os.environ.get("OPENAI_BASE_URL") or ""
        self.base_url = url.rstrip("/") or None
        self.api_key = api_key or _key_from_env(self.base_url)
        self.timeout, self.temperature, self.max_tokens = timeout, temperature, max_tokens
        self.extra_body, self.structured = extra_body, structured
        self.name = f"openai:{self.model}"
        self.client = self._new_client()

    def complete(self, messages: list[Message], *, role: str, max_tokens: int | None = None,
                 temperature: float | None = None, schema: dict | None = None, context: Any = None) -> Completion:
        """Answer the conversation with one chat completion; raise ModelError/TransientModelError on failure.

        The whole call (connect, headers, body) meets one deadline: it runs in a worker thread, and a server still
        answering after `timeout` seconds is abandoned (its client closed, a fresh one made for the next call).
        """
        started, box = time.monotonic(), {}
        request = {"max_tokens": max_tokens or self.max_tokens,
                   "temperature": self.temperature if temperature is None else temperature}
        worker = threading.Thread(target=self._call, args=(box, messages, request | self._format(schema, role)),
                                  daemon=True, name="aoi-model-call")
        worker.start()
        worker.join(self.timeout + DEADLINE_GRACE)
        if worker.is_alive():
            self._abandon()
            raise self._timed_out(" (still answering)")
        if "reply" not in box:  # the worker hands back every Exception; only a BaseException leaves neither
            raise box.get("error") or ModelError(f"{self._where()}: the call ended without an answer or an error")
        return self._completion(box["reply"], messages, time.monotonic() - started)

    def _format(self, schema: dict | None, role: str) -> dict:
        """Return the request's response_format for a call's schema: none unless the server constrains to one."""
        if schema is None or not self.structured:
            return {}
        name = f"{getattr(role, 'value', role)}_reply"
        return {"response_format": {"type": "json_schema", "json_schema": {"name": name, "schema": schema}}}

    def _call(self, box: dict, messages: list[Message], request: dict) -> None:
        """Make the request and read the body, leaving the reply or the translated error in `box`."""
        started = time.monotonic()
        try:
            # Streamed reading: the body is read here, chunk by chunk, so a trickled body meets the deadline too.
            with self.client.chat.completions.with_streaming_response.create(
                    model=self.model, messages=messages, extra_body=self.extra_body, **request) as response:
                raw = self._read(response, started + self.timeout)
            box["reply"] = self._parse(raw, response.headers)
        except ModelError as err:
            box["error"] = err
        except (openai.OpenAIError, *TRANSPORT_ERRORS, ValueError) as err:
            box["error"] = self._translate(err)
        except Exception as err:  # noqa: BLE001 - a worker thread's exception would only be printed, and lost
            box["error"] = ModelError(f"{self._where()} failed unexpectedly ({type(err).__name__}: {err}); "
                                      "this is a bug in AOI's OpenAI backend: report it with the model and server")

    def _abandon(self) -> None:
        """Give up on a call still in flight: close its client (best effort) and make a fresh one for later calls."""
        stale, self.client = self.client, self._new_client()
        try:
            stale.close()
        except Exception:  # noqa: BLE001 - the abandoned call's thread may be using it; closing is only a courtesy
            pass

    def _new_client(self) -> openai.OpenAI:
        """Return an SDK client (max_retries=0: with_retries owns the retry policy, so attempts are counted)."""
        return openai.OpenAI(api_key=self.api_key, base_url=self.base_url, timeout=self.timeout, max_retries=0)

    def _read(self, response: Any, deadline: float) -> bytes:
        """Read the body as it arrives; raise a timeout once the request's deadline has passed."""
        chunks = []
        for chunk in response.iter_bytes():
            chunks.append(chunk)
            if time.monotonic() > deadline:  # a server that trickles its body: httpx times single reads only
                raise self._timed_out(" (the body was still arriving)")
        return b"".join(chunks)

    def _parse(self, raw: bytes, headers: Any) -> Reply:
        """Read a 200's body; an empty one or an HTML page (a web UI or login page, not the API) is an error."""
        if not raw:
            raise TransientModelError(f"{self._where()} answered 200 with an empty body; check the server's logs, "
                                      "or a proxy between us")
        if "text/html" in headers.get("content-type", ""):
            raise ModelError(f"{self._where()} answered 200 with an HTML page, not JSON ({_page_text(raw)}); check "
                             "AOI_BASE_URL points at an OpenAI-compatible /v1 endpoint")
        return parse_body(raw)

    def _timed_out(self, note: str = "") -> TransientModelError:
        """Return the error of a request that ran past model.timeout."""
        return TransientModelError(f"{self._where()} timed out after {self.timeout}s{note}; raise model.timeout "
                                   "(AOI_TIMEOUT) if it is slow")

    def _completion(self, reply: Reply, messages: list[Message], latency: float) -> Completion:
        """Build the Completion from a reply, counting tokens locally when the server reports no usage."""
        if reply.prompt_tokens is not None:
            tokens, source = (reply.prompt_tokens, reply.completion_tokens or 0), "server"
        else:
            tokens, source = (count_messages(messages), count_tokens(reply.text)), "cl100k"
        meta = {"model": reply.model or self.model, "finish_reason": reply.finish_reason, "usage": source}
        if reply.malformed:
            meta["malformed"] = reply.malformed
        return Completion(reply.text, input_tokens=tokens[0], output_tokens=tokens[1], latency=latency, meta=meta)

    def _where(self) -> str:
        """Name the endpoint for error messages."""
        return f"model {self.model!r} at {self.base_url or 'https://api.openai.com/v1'}"

    def _translate(self, err: Exception) -> ModelError:
        """Map an SDK error to a ModelError that says what to fix, transient where a retry may help."""
        where = self._where()
        if isinstance(err, TIMEOUT_ERRORS):
            return self._timed_out()
        if isinstance(err, openai.APIConnectionError):
            return TransientModelError(f"cannot reach {where} ({err.__cause__ or err}); check the server is up "
                                       "and AOI_BASE_URL is right")
        if isinstance(err, openai.APIStatusError):
            return self._status_error(err, where)
        if isinstance(err, NoChoices):
            return TransientModelError(f"{where} returned {err}")
        if isinstance(err, TRANSPORT_ERRORS):  # the connection broke (reset, closed early) while the body was arriving
            return TransientModelError(f"{where} broke off its answer ({type(err).__name__}: {err}); check the "
                                       "server's logs, or a proxy between us")
        # A 200 whose body is not the JSON the SDK expects: a truncated or proxied answer, usually passing.
        return TransientModelError(f"{where} sent a malformed response ({type(err).__name__}: {err}); "
                                   "check AOI_BASE_URL points at an OpenAI-compatible /v1 endpoint")

    def _status_error(self, err: openai.APIStatusError, where: str) -> ModelError:
        """Map an HTTP error status to an error naming the setting to fix."""
        code, detail = err.status_code, _detail(err)
        if code in TRANSIENT_STATUS or code >= 500:
            return TransientModelError(f"{where} answered HTTP {code}: {detail}",
                                       retry_after=retry_after(err.response.headers))
        fixes = {401: "the API key was rejected: set AOI_API_KEY (or OPENAI_API_KEY / OPENROUTER_API_KEY) to a "
                      "valid key",
                 403: "the API key may not use this model: check the key's permissions or choose another AOI_MODEL",
                 404: "the model or endpoint was not found: check AOI_MODEL and that AOI_BASE_URL ends in /v1",
                 400: "the request was rejected: check the model name, max_tokens and the messages"}
        return ModelError(f"{where} answered HTTP {code} ({detail}); {fixes.get(code, 'see the server message')}")


def _detail(err: openai.APIStatusError) -> str:
    """Return the server's own error message, shortened; an error page's text when the SDK found no message."""
    message = str(getattr(err, "message", "") or err)
    if isinstance(err.body, str) and message == f"Error code: {err.status_code}":  # a proxy's page, not JSON
        message = f"{message}, {_page_text(err.body.encode())}"
    return message[:300]


def _page_text(raw: bytes) -> str:
    """Return the start of a page's text, its tags dropped.

    Example:
        >>> _page_text(b"<html><title>502 Bad Gateway</title><body>nginx</body></html>")
        "'502 Bad Gateway nginx'"
    """
    text = " ".join(re.sub(r"<[^>]*>", " ", raw.decode("utf-8", "replace")).split())
    return repr(text[:120])


def _key_from_env(base_url: str | None) -> str:
    """Find the API key in the environment; local servers get a placeholder, hosted ones must have a key."""
    key = os.environ.get("AOI_API_KEY")
    hosted_openrouter = bool(base_url) and "openrouter.ai" in base_url
    key = key or os.environ.get("OPENROUTER_API_KEY" if hosted_openrouter else "OPENAI_API_KEY")
    if key:
        return key
    if base_url is None or hosted_openrouter:
        var = "OPENROUTER_API_KEY" if hosted_openrouter else "OPENAI_API_KEY"
        raise ModelError(f"no API key for {base_url or 'https://api.openai.com/v1'}: set AOI_API_KEY or {var}, "
                         "or pass api_key=...")
    return "not-needed"  # vLLM, Ollama and llama.cpp accept any key unless started with one


def retry_after(headers: Any) -> float | None:
    """Read how long the server asks us to wait, in seconds, from retry-after-ms or Retry-After.

    Example:
        >>> retry_after({"retry-after": "2"}), retry_after({"retry-after-ms": "1500"}), retry_after({})
        (2.0, 1.5, None)
    """
    headers = {k.lower(): v for k, v in dict(headers or {}).items()}
    if "retry-after-ms" in headers:
        return _seconds(headers["retry-after-ms"], scale=1000)
    return _seconds(headers.get("retry-after"))


def _seconds(value: str | None, scale: float = 1) -> float | None:
    """Parse a delay given as a number (divided by scale) or an HTTP date; None when absent or unreadable."""
    if value is None:
        return None
    try:
        return max(0.0, float(value) / scale)
    except ValueError:
        pass
    try:
        return max(0.0, email.utils.parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None
