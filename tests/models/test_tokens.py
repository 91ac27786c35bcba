"""The cl100k counter's cache: the same counts as counting afresh (long texts counted by their lines too), and
bounded by characters."""

from __future__ import annotations

import random

from aoi.models import tokens
from aoi.models.tokens import _Counts, count_tokens


def fresh(text: str) -> int:
    return len(tokens._encoding().encode(text, disallowed_special=()))


def test_cached_counts_equal_fresh_counts():
    texts = ["hello world", "kubectl get pods -n test-hotel-reservation\n" * 40, "<|endoftext|> as text", ""]
    first = [count_tokens(t) for t in texts]
    again = [count_tokens(t) for t in texts]  # now from the cache
    assert first == again == [fresh(t) for t in texts]


def test_cache_keeps_recent_texts_within_its_character_budget():
    counts = _Counts(budget=10)
    counts.put("aaaa", 1)
    counts.put("bbbb", 2)
    assert counts.get("aaaa") == 1  # now the most recently used
    counts.put("cccc", 3)  # 12 characters: the least recently used ("bbbb") goes
    assert (counts.get("aaaa"), counts.get("bbbb"), counts.get("cccc")) == (1, None, 3)
    assert counts.chars <= 10
    counts.put("x" * 11, 9)  # longer than the whole budget: not kept
    assert counts.get("x" * 11) is None


PARTS = ["word", " word", "'s", "'ll", "123456", ".", "!?", "[x]", "{\"a\": 1}", " ", "  ", "\t", "\n", "\n\n",
         "\r\n", " \n", "\n ", "\u00a0", "\u3000", "é", "ü\u0301", "日本", "<|endoftext|>", "---", "- a", "x" * 30]


def test_long_texts_counted_by_their_lines_count_as_a_whole():
    # Joins of pieces that tempt the split: newlines after spaces, punctuation, contractions, digits, wide spaces.
    rng = random.Random(7)
    texts = ["".join(rng.choice(PARTS) for _ in range(rng.randint(300, 900))) for _ in range(60)]
    texts += ["NAME   READY\n" + "api-1  1/1\n" * 200 + "\n\n[2] probe on \"x\":\nfindings: ok\n" * 20]
    assert all(len(t) > tokens.CHUNKED for t in texts)
    assert [count_tokens(t) for t in texts] == [fresh(t) for t in texts]
