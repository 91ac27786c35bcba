"""How a per-decision rollout ends: the expert finishes from what the team knows, without probing for more.

A sampled decision is played at its recorded state, and what comes after it must not erase its effect. The free
expert Observer would: it probes until it knows, so every sample of a group ends alike (zero advantage). The
`Finisher` may act only on the evidence already in the prompt: it submits its best answer where the expert would
probe again, executes a fix it is sure of (mitigation), and verifies a fix once one was made. So a probe is worth
what its report surfaced, a submission what its answer scores, an execution whether its change fixed the fault.
`surfaced` reads the sampled probe's own report for the evidence term.
"""

from __future__ import annotations

import json
import re
import time

from aoi.models.base import Completion, Message
from aoi.models.compact import compact_decision, read_choices
from aoi.models.expert.findings import parse
from aoi.models.expert.observer import decide
from aoi.models.tokens import count_messages, count_tokens


class Finisher:
    """The expert Observer that may no longer investigate: it keeps every prompt it is shown."""

    name = "finisher"

    def __init__(self):
        self.prompts: list[list[Message]] = []

    def complete(self, messages: list[Message], *, role: str, max_tokens: int | None = None,
                 temperature: float | None = None) -> Completion:
        """Decide as the expert would, with a new probe turned into a submission (verifying a fix stays allowed)."""
        started = time.perf_counter()
        self.prompts.append(messages)
        prompt = parse(messages[-1]["content"] if messages else "")
        decision = decide(prompt)
        fixed = any(report.source == "executor" for report in prompt.reports)
        if decision["next"] == "probe" and not fixed:
            decision = {**decision, "next": "submit", "phase": "submit"}
        if read_choices(messages) is not None:
            decision = compact_decision(decision, prompt.task)
        text = json.dumps(decision)
        return Completion(text, input_tokens=count_messages(messages), output_tokens=count_tokens(text),
                          latency=time.perf_counter() - started, meta={"role": role})


def surfaced(prompt: str, names: tuple[str, ...] | list[str]) -> float:
    """Return 1.0 when the newest probe report of an Observer prompt, written for the decision just before this
    prompt's iteration, names one of `names` (the faulty components), else 0.0.

    Example:
        >>> text = ('Task (localization):\\nIteration 3 of 14; environment actions left: 20.\\nFindings so far:\\n'
        ...         '[2] probe on "Read the logs":\\nsuspects: ["mongodb-geo"]\\nYour recent decisions:\\n')
        >>> surfaced(text, ("mongodb-geo", "geo")), surfaced(text, ("geo",)), surfaced(text, ())
        (1.0, 0.0, 0.0)
    """
    parsed = parse(prompt)
    own = [r for r in parsed.reports if r.iteration == parsed.iteration - 1 and r.source == "probe"]
    text = "\n".join(report.text for report in own)
    return float(any(re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text) for name in names))
