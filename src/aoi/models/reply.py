"""Read a chat-completion body of any shape into text, usage and finish reason, noting what was malformed.

Servers and the proxies before them send content as a string, a list of parts, null, or worse; usage with strings
where numbers belong; choices that are not a list. Every shape becomes a `Reply` whose text is a string, or a
`NoChoices` error when there is no answer at all, so a misbehaving server is never a crash further down.
"""

from __future__ import annotations

import json
from dataclasses import dataclass


class NoChoices(ValueError):
    """A body that holds no answer (no choices, or a first choice without a message)."""


@dataclass(kw_only=True)
class Reply:
    """The readable part of one chat completion."""

    text: str
    prompt_tokens: int | None = None  # None: the server reported no usable count
    completion_tokens: int | None = None
    finish_reason: str | None = None
    model: str | None = None
    malformed: str | None = None  # what was wrong with the content, when it was not plain text


def parse_body(raw: bytes) -> Reply:
    """Parse a chat-completion body; ValueError when it is not JSON, NoChoices when it holds no answer.

    Example:
        >>> parse_body(b'{"choices": [{"message": {"content": [{"type": "text", "text": "hi"}]}}]}').text
        'hi'
    """
    try:
        body = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ValueError(f"not JSON ({err}): {raw[:200]!r}") from None
    return parse_reply(body)


def parse_reply(body: object) -> Reply:
    """Read the first choice of a decoded body.

    Example:
        >>> parse_reply({"choices": [{"message": {"content": {"next": "probe"}}}]}).malformed
        'content was a dict, not text'
    """
    choices = body.get("choices") if isinstance(body, dict) else None
    choice = choices[0] if isinstance(choices, list) and choices else None
    message = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(message, dict):
        raise NoChoices(f"a response without choices: {json.dumps(body)[:200]}")
    text, malformed = content_text(message.get("content"), message.get("tool_calls"))
    usage = body.get("usage") if isinstance(body.get("usage"), dict) else {}
    finish, model = choice.get("finish_reason"), body.get("model")
    return Reply(text=text, prompt_tokens=_count(usage.get("prompt_tokens")),
                 completion_tokens=_count(usage.get("completion_tokens")),
                 finish_reason=finish if isinstance(finish, str) else None,
                 model=model if isinstance(model, str) else None, malformed=malformed)


def content_text(content: object, tool_calls: object = None) -> tuple[str, str | None]:
    """Return (text, what was malformed) for a message's content: text parts are joined, other shapes give "".

    Example:
        >>> content_text(None, [{"function": {"name": "submit"}}])
        ('', 'no text content, a tool call instead (answer in text, not with function calling)')
    """
    if isinstance(content, str):
        return content, None
    if isinstance(content, list):
        parts = [p if isinstance(p, str) else p.get("text") for p in content if isinstance(p, (str, dict))]
        texts = [p for p in parts if isinstance(p, str)]
        return ("".join(texts), None) if texts else ("", "content was a list without text parts")
    if content is None:
        if tool_calls:
            return "", "no text content, a tool call instead (answer in text, not with function calling)"
        return "", "content was null"
    return "", f"content was a {type(content).__name__}, not text"


def _count(value: object) -> int | None:
    """Return a token count when it is a non-negative integer (bools and strings are not counts)."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None
