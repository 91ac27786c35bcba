"""Decoding aids for local models: schema-constrained sampling, and telling when a reply's JSON has closed.

The schemas themselves are declared in aoi.models.schemas (the agents send them with each call). When few tokens
are left the sampler prefers tokens that close the JSON, so a capped reply still parses.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

CLOSERS = set('"]}')
RESERVE = 32  # tokens kept for closing the JSON: close the open strings and lists, then the missing required keys


class JsonScanner:
    """Follow text as it streams and tell when its first JSON object has closed (braces inside strings ignored).

    `last` is the last character outside strings that is not a space (a string's closing quote counts).

    Example:
        >>> scan = JsonScanner()
        >>> scan.feed('Sure: {"a": "}",'), scan.last, scan.feed(' "b": {}}'), scan.feed(" more")
        (False, ',', True, True)
    """

    def __init__(self):
        self.depth, self.in_string, self.escaped, self.closed, self.last = 0, False, False, False, ""

    def feed(self, text: str) -> bool:
        """Scan more text; return True once the first object has closed."""
        for ch in text:
            if self.closed:
                break
            self._step(ch)
        return self.closed

    def _step(self, ch: str) -> None:
        """Advance over one character."""
        if self.in_string:
            self.in_string = not (ch == '"' and not self.escaped)
            self.escaped = ch == "\\" and not self.escaped
            self.last = '"' if not self.in_string else self.last
            return
        if ch == '"' and self.depth:
            self.in_string = True
        elif ch in "{}" and (self.depth or ch == "{"):
            self.depth += 1 if ch == "{" else -1
            self.closed = self.depth == 0
        self.last = ch if self.depth and not ch.isspace() or ch in "{}" else self.last


@lru_cache(maxsize=4)
def tokenizer_data(tokenizer: Any) -> Any:
    """Index a tokenizer's vocabulary for lm-format-enforcer (a few seconds; once per tokenizer)."""
    from lmformatenforcer import TokenEnforcerTokenizerData

    specials = set(tokenizer.all_special_ids)
    ids = [i for i in range(len(tokenizer)) if i not in specials]
    anchor = tokenizer.encode("0", add_special_tokens=False)[-1]
    # Decoding after an anchor token keeps a word-start token's leading space, which decoding alone may drop.
    after = tokenizer.batch_decode([[anchor, i] for i in ids])
    alone = tokenizer.batch_decode([[i] for i in ids])
    regular = [(i, text[1:], len(text) - 1 > len(single)) for i, text, single in zip(ids, after, alone)
               if _json_safe(text[1:])]
    eos = tokenizer.eos_token_id

    def decode(tokens: list[int]) -> str:
        return tokenizer.decode(tokens).rstrip("\ufffd")  # a cut multi-byte character is not text yet

    return TokenEnforcerTokenizerData(regular, decode, eos, False, len(tokenizer))


def _json_safe(text: str) -> bool:
    """Tell whether a token may be sampled: printable ASCII, or whitespace made of spaces and newlines."""
    # lm-format-enforcer lets a tab into free-text strings (json.loads rejects it) and loses track of the JSON on
    # some multi-byte characters split across tokens; the decisions need neither.
    return bool(text) and (set(text) <= set(" \n\r") or all(" " <= ch <= "~" for ch in text))


@dataclass(frozen=True)
class _Tokens:
    """Token sets the sampler steers with."""

    eos: int
    closers: frozenset[int]  # only closing characters (quote, bracket, brace) and spaces
    after_comma: frozenset[int]  # start with a closing bracket or brace: never right after a comma


@lru_cache(maxsize=4)
def token_sets(tokenizer: Any) -> _Tokens:
    """Return the token sets of a tokenizer (once per tokenizer)."""
    regular = tokenizer_data(tokenizer).regular_tokens
    closers = frozenset(i for i, text, _ in regular if text.strip() and set(text.strip()) <= CLOSERS)
    after_comma = frozenset(i for i, text, _ in regular if text.strip()[:1] in ("]", "}"))
    return _Tokens(tokenizer.eos_token_id, closers, after_comma)


def schema_processor(tokenizer: Any, schema: dict, prompt_length: int, budget: int) -> Any:
    """Return a transformers LogitsProcessor that allows only tokens keeping the reply valid under `schema`."""
    from lmformatenforcer import JsonSchemaParser, TokenEnforcer

    data = tokenizer_data(tokenizer)
    enforcer = TokenEnforcer(data, JsonSchemaParser(schema))
    enforcer.root_parser.config.max_consecutive_whitespaces = 1  # runs of spaces only spend the budget
    return _SchemaLogits(enforcer, token_sets(tokenizer), prompt_length, budget, tokenizer)


class _SchemaLogits:
    """Mask every token the schema forbids; near the cap, keep only closing tokens (or the end) when any is allowed."""

    def __init__(self, enforcer, tokens: _Tokens, prompt_length: int, budget: int, tokenizer: Any):
        self.enforcer, self.tokens, self.tokenizer = enforcer, tokens, tokenizer
        self.prompt_length, self.budget = prompt_length, budget
        self.index: dict[int, tuple[Any, Any]] = {}  # id(token list) -> (list, index tensor): lists are reused

    def __call__(self, input_ids, scores):
        """Return the scores with forbidden tokens at -inf."""
        import torch

        masked = torch.full_like(scores, float("-inf"))
        for row, ids in enumerate(input_ids.tolist()):
            allowed = self._indices(self._allowed(ids), scores.device)
            masked[row, allowed] = scores[row, allowed]
        return masked

    def _allowed(self, ids: list[int]) -> list[int]:
        """Return the allowed next tokens, narrowed to closing ones once the budget runs low."""
        closing = self.budget - (len(ids) - self.prompt_length) <= RESERVE
        if closing:  # a key written from now on must be the next missing required one: the shortest way out
            self.enforcer.root_parser.config.force_json_field_order = True
        allowed = self.enforcer.get_allowed_tokens(ids[self.prompt_length - 1:]).allowed_tokens
        scan = JsonScanner()
        scan.feed(self.tokenizer.decode(ids[self.prompt_length:]))
        if scan.last == ",":  # lm-format-enforcer would allow `,}` and `,]`: JSON forbids a trailing comma
            allowed = [t for t in allowed if t not in self.tokens.after_comma]
        if not closing:
            return allowed
        if self.tokens.eos in allowed:
            return [self.tokens.eos]
        return [t for t in allowed if t in self.tokens.closers] or allowed

    def _indices(self, allowed: list[int], device: Any) -> Any:
        """Return the allowed ids as a tensor, converting each distinct list once (free text reuses one list)."""
        import torch

        cached = self.index.get(id(allowed))
        if cached is None or cached[0] is not allowed:
            cached = self.index[id(allowed)] = (allowed, torch.tensor(allowed, dtype=torch.long, device=device))
        return cached[1]
