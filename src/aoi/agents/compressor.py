"""The Compressor: fit raw tool output into a token budget, by a grounded model summary or a deterministic fallback."""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Callable

from aoi.agents.grounding import ungrounded
from aoi.agents.loop import render
from aoi.models.base import Model
from aoi.models.expert.contract import CompressorContext
from aoi.models.tokens import count_tokens
from aoi.protocols import Role, Status

SIGNAL = re.compile(r"error|warn|fail|fatal|panic|exception|denied|refused|forbidden|crash|backoff|pending|"
                    r"not ready|unhealthy|evicted|oomkilled|timeout|timed out|unavailable|killed|restart|0/\d|"
                    r"imagepull|errimage|notfound|invalid|unauthorized|not authorized|no such|unreachable|"
                    r"released|lost|true$", re.IGNORECASE)
STAMP = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?Z?|\[\d{4}-\w{3}-\d\d [\d:.]+\]|"
                   r"\d+(?:\.\d+)?(?:ms|s)\b")
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
    keep, repeats = [lines[0]] if lines else [], Counter()
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
    """Condense outputs to a budget, each output once: a model summary when it is grounded, else the fallback.

    `record(messages, completion, observation, status)` stores each model call in the trajectory; a summary that
    names what its input does not (an invented pod, port or log line) is recorded with status `ungrounded`.
    """

    def __init__(self, budget: int = 1500, model: Model | None = None,
                 record: Callable[..., object] | None = None):
        self.budget, self.model, self.record = budget, model, record or (lambda *args, **kwargs: None)
        self.cache: dict[tuple[str, int], str] = {}  # (sha256 of the output, budget) -> what it was condensed to

    def __call__(self, text: str, budget: int | None = None, command: str = "") -> str:
        """Return text within the budget (unchanged when it already fits); the same output is condensed once."""
        budget = budget or self.budget
        if tokens(text) <= budget:
            return text
        key = (hashlib.sha256(text.encode()).hexdigest(), budget)
        if key not in self.cache:
            self.cache[key] = self._summary(text, budget, command) or fallback(text, budget)
        return self.cache[key]

    def _summary(self, text: str, budget: int, command: str) -> str | None:
        """Ask the model for a summary; None when there is no model or its summary is unusable."""
        if self.model is None:
            return None
        messages = [{"role": "system", "content": render("compressor", "system", budget=budget)},
                    {"role": "user", "content": render("compressor", "user", command=command or "(not known)",
                                                       output=text)}]
        try:
            completion = self.model.complete(messages, role=Role.COMPRESSOR, max_tokens=budget,
                                             context=CompressorContext(budget=budget, output=text))
        except Exception as exc:  # noqa: BLE001 - a model failure must never lose the output: fall back
            self.record(messages, None, observation=str(exc), status=Status.ERROR)
            return None
        summary = completion.text if isinstance(completion.text, str) else ""
        status, note = self._verdict(summary, text, budget)
        self.record(messages, completion, observation=note, status=status)
        return summary if status == Status.OK else None

    def _verdict(self, summary: str, text: str, budget: int) -> tuple[Status, str]:
        """Judge a summary: ok, empty, oversized, or ungrounded (with what it invented)."""
        if not summary.strip():
            return Status.EMPTY, "the summary was empty; the deterministic condenser was used"
        if tokens(summary) > budget:
            return Status.OVERSIZED, f"the summary exceeded {budget} tokens; the deterministic condenser was used"
        invented = ungrounded(summary, text)
        if invented:
            return Status.UNGROUNDED, (f"the summary names what the output does not ({', '.join(invented[:8])}); "
                                  "the deterministic condenser was used")
        return Status.OK, ""
