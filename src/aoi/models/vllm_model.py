"""A local policy (`local:<base>[+adapter=DIR]+engine=vllm` or `+server=URL`) drawn on a vLLM server, not in-process.

It keeps only the tokenizer: prompts are rendered and tokenized as aoi.models.local does and sent as token ids to
`/v1/completions` (vllm_client.py), so the server sees the same ids. As LocalModel: call n is seeded seed + n, replies
are capped at max_new_tokens (256), the JSON roles' replies are constrained to the schema the call sends (as
`structured_outputs`; without one, an Observer's read from its prompt by aoi.models.compact.reply_schema) and stop
when the JSON closes (the grammar ends there; unconstrained replies are cut there here), and the adapter's manifest
version is recorded.

What differs from LocalModel, and why sampled text differs: vLLM samples in bfloat16 with its own kernels and RNG,
its grammar engine (guidance) allows any Unicode in strings where ours allows printable ASCII, and it cannot steer a
reply towards closing as the cap nears. So the schema sent is closed (no keys beyond the schema's, at most
MAX_ARGS tool arguments with short names) and its free strings are bounded by the cap (STRING_RESERVE characters
under it): a reply closes before the cap, and format validity agrees with LocalModel's.
"""

from __future__ import annotations

import copy
import hashlib
import time
from pathlib import Path
from typing import Any

from aoi.models.base import Completion, Message
from aoi.models.bases import check_base, load_tokenizer
from aoi.models.compact import COMPACT, reply_schema
from aoi.models.constrained import JsonScanner
from aoi.models.local import DEFAULT_MAX_NEW_TOKENS, check_adapter, render, token_ids
from aoi.models.vllm_client import Server, check_server, completion_ids
from aoi.models.vllm_server import ManagedServer, load_adapter, served_name

MAX_ARGS = 3  # tool arguments in one call (open maps are bounded: a free map has no end)
ARG_NAME = "^[a-z_]{1,24}$"
STRING_RESERVE = 64  # characters kept under the cap for keys, quotes and closing brackets


class VllmModel:
    """Generate on a vLLM server (one this model starts and owns, or `server`'s): greedy at temperature 0."""

    decision_format = COMPACT  # as LocalModel: a small model decides in the compact format

    def __init__(self, base: str | Path = "smollm2", adapter: str | Path | None = None, server: str | None = None,
                 max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS, temperature: float = 0.0, seed: int = 0,
                 constrained: bool = True, dtype: str = "bfloat16", timeout: float = 600.0):
        """Check the base and adapter, start a managed server unless `server` (a URL) is given, load the adapter
        unless the server lists its name already (registry.shared_servers serves an evaluation's adapter merged).

        Example:
            >>> m = VllmModel("smollm2", server="http://127.0.0.1:8000/v1")  # doctest: +SKIP
            >>> m.complete([{"role": "user", "content": "hi"}], role="compressor").text  # doctest: +SKIP
        """
        self.base, self.adapter = str(base), Path(adapter).resolve() if adapter else None
        check_base(self.base)
        self.adapter_version = check_adapter(self.adapter, self.base).get("version") if self.adapter else None
        self.owned = None if server else ManagedServer(base=self.base, dtype=dtype).start()
        self.server = Server(server or self.owned.url, timeout=timeout, flag="+server=")
        if self.adapter is not None and adapter_name(self.adapter) in self.server.models():
            self.model = adapter_name(self.adapter)  # loaded already, or merged into the weights the server serves
        else:
            self.model = check_server(self.server, served_name(self.base), flag=f"+server= serving {self.base!r}")
            if self.adapter is not None:
                self.model = adapter_name(self.adapter)
                load_adapter(self.server, self.base, self.model, self.adapter)
        self.tokenizer = load_tokenizer(self.base)
        short = self.base if self.base in ("tiny", "smollm2") else Path(self.base).name
        self.name = f"local:{short}" + (f"+{self.adapter.name}" if self.adapter else "") + "+vllm"
        self.max_new_tokens, self.temperature, self.seed = max_new_tokens, temperature, seed
        self.constrained, self.calls = constrained, 0

    def complete(self, messages: list[Message], *, role: str, max_tokens: int | None = None,
                 temperature: float | None = None, schema: dict | None = None, context: Any = None) -> Completion:
        """Draw a reply on the server; count tokens with the base's tokenizer."""
        started = time.perf_counter()
        budget = max_tokens or self.max_new_tokens
        prompt = token_ids(self.tokenizer, render(self.tokenizer, messages))
        schema = schema or reply_schema(role, messages)
        sent = vllm_schema(schema, budget) if schema is not None and self.constrained else None
        [(ids, finish)] = completion_ids(self.server, self.model, prompt, max_tokens=budget,
                                         seed=self.seed + self.calls, schema=sent,
                                         temperature=self.temperature if temperature is None else temperature)
        self.calls += 1
        if schema is not None and sent is None:
            ids = until_json_closes(self.tokenizer, ids)
        text = self.tokenizer.decode(ids, skip_special_tokens=True).strip()
        return Completion(text, input_tokens=len(prompt), output_tokens=len(ids),
                          latency=time.perf_counter() - started,
                          meta={"model": self.name, "token_ids": ids, "constrained": sent is not None,
                                "finish_reason": finish})

    def close(self) -> None:
        """Stop the server this model started (a given server is left running)."""
        if self.owned is not None:
            self.owned.stop()


def adapter_name(folder: Path) -> str:
    """Return the name an adapter folder is loaded under: its folder name and a digest of its path (every worker of
    a run names it alike; two folders of one name differ)."""
    return f"{folder.name}-{hashlib.sha256(str(folder.resolve()).encode()).hexdigest()[:8]}"


def vllm_schema(schema: dict, budget: int) -> dict:
    """Return a reply schema as sent to vLLM: objects closed, open maps bounded, free strings within the cap.

    Example:
        >>> s = vllm_schema({"type": "object", "properties": {"a": {"type": "string", "maxLength": 900}}}, 256)
        >>> s["additionalProperties"], s["properties"]["a"]["maxLength"]
        (False, 192)
    """
    return _closed(copy.deepcopy(schema), max(8, budget - STRING_RESERVE))


def _closed(node: Any, chars: int) -> Any:
    """Close one schema node and its children (see vllm_schema)."""
    if isinstance(node, list):
        return [_closed(item, chars) for item in node]
    if not isinstance(node, dict):
        return node
    node = {key: _closed(value, chars) for key, value in node.items()}
    if node.get("type") == "string" and "enum" not in node:
        node["maxLength"] = min(node.get("maxLength", chars), chars)
    if node.get("type") == "object" and isinstance(node.get("additionalProperties"), dict):
        node["patternProperties"] = {ARG_NAME: node.pop("additionalProperties")}
        node |= {"additionalProperties": False, "maxProperties": MAX_ARGS}
    elif node.get("type") == "object" and "properties" in node:
        node.setdefault("additionalProperties", False)
    return node


def until_json_closes(tokenizer: Any, ids: list[int]) -> list[int]:
    """Return the ids up to the token that closes the reply's first JSON object (all of them if none does)."""
    scanner, seen = JsonScanner(), ""
    for n in range(1, len(ids) + 1):
        text = tokenizer.decode(ids[:n], skip_special_tokens=True)
        if scanner.feed(text[len(seen):]):
            return ids[:n]
        seen = text
    return ids
