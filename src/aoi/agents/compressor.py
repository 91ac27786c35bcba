"""The Compressor: fit raw tool output into a token budget, by model summary or by a deterministic fallback."""

from __future__ import annotations

import re
from collections import Counter
from typing import Callable

from aoi.models.tokens import count_tokens

SIGNAL = re.compile(r"error|warn|fail|fatal|panic|exception|denied|refused|forbidden|crash|backoff|pending|"
                    r"not ready|unhealthy|evicted|oomkilled|timeout|timed out|unavailable|killed|restart|0/\d|"
                    r"imagepull|errimage|notfound|invalid|unauthorized|not authorized|no such|unreachable|"
                    r"released|lost|true$", re.IGNORECASE)
STAMP = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?Z?|\[\d{4}-\w{3}-\d\d [\d:.]+\]|\d+(?:\.\d+)?(?:ms|s)\b")
CHARS_PER_TOKEN = 4


def tokens(text: str) -> int:
    """Count tokens as AIOpsLab does (cl100k)."""
    return count_tokens(text)


def fallback(text: str, budget: int) -> str:
    """Keep the header, every signal line (errors, warnings, anomalies) and counts of repeated lines; cut the rest.

    Example:
        >>> print(fallback("NAME STATUS\\na Running\\nb CrashLoopBackOff\\n" + "x ok\\n" * 50, 12))
        NAME STATUS
        b CrashLoopBackOff
        [... 51 other lines left out ...]
    """
    lines = text.splitlines()
    if tokens(text) <= budget:
        return text
    keep, seen, repeats = [lines[0]] if lines else [], Counter(), Counter()
    for line in lines[1:]:
        if not SIGNAL.search(line):
            continue
        shape = STAMP.sub("<t>", line)
        repeats[shape] += 1
        if repeats[shape] == 1:
            keep.append(line)
    out = [line + (f"   [x{repeats[STAMP.sub('<t>', line)]}]" if repeats[STAMP.sub("<t>", line)] > 1 else "")
           for line in keep]
    left = len(lines) - len(keep)
    return _cut("\n".join(out), budget) + (f"\n[... {left} other lines left out ...]" if left else "")


def _cut(text: str, budget: int) -> str:
    """Cut text to a token budget, keeping its head and tail."""
    if tokens(text) <= budget:
        return text
    room = budget * CHARS_PER_TOKEN
    head, tail = text[: room * 2 // 3], text[-room // 3:]
    return f"{head}\n[... cut ...]\n{tail}"


class Compressor:
    """Condense outputs to a budget; with a model, summarise first and fall back when the summary does not fit."""

    def __init__(self, budget: int = 1500, summarize: Callable[[str, int], str] | None = None):
        self.budget = budget
        self.summarize = summarize
        self.calls = 0
        self.fallbacks = 0

    def __call__(self, text: str, budget: int | None = None) -> str:
        """Return text within the budget (unchanged when it already fits)."""
        budget = budget or self.budget
        if tokens(text) <= budget:
            return text
        self.calls += 1
        if self.summarize is not None:
            try:
                summary = self.summarize(text, budget)
                if summary.strip() and tokens(summary) <= budget:
                    return summary
            except Exception:  # a model failure must never lose the output: fall back
                pass
        self.fallbacks += 1
        return fallback(text, budget)
