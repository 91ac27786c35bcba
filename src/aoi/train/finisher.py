"""How a per-decision rollout ends: the expert finishes from what the team knows, without probing for more.

A sampled decision is played at its recorded state, and what comes after it must not erase its effect. The free
expert Observer would: it probes until it knows, so every sample of a group ends alike (zero advantage). The
`Finisher` may act only on the evidence already in the prompt: it submits its best answer where the expert would
probe again, executes a fix it is sure of (mitigation), and verifies a fix once one was made. So a probe is worth
what its report surfaced, a submission what its answer scores, an execution whether its change fixed the fault.
`surfaced` reads the sampled probe's own report for the evidence term. Both read what the Observer's prompt says
from the context its call sends (aoi.models.expert.contract.ObserverContext), not from the prompt's text.
"""

from __future__ import annotations

import json
import re
import time

from aoi.models.base import Completion, Message
from aoi.models.compact import compact_decision
from aoi.models.expert.contract import ObserverContext
from aoi.models.expert.findings import read
from aoi.models.expert.observer import decide, known
from aoi.models.tokens import count_messages, count_tokens


class Finisher:
    """The expert Observer that may no longer investigate: it keeps the context of every call it answers."""

    name = "finisher"

    def __init__(self):
        self.contexts: list[ObserverContext] = []

    def complete(self, messages: list[Message], *, role: str, max_tokens: int | None = None,
                 temperature: float | None = None, schema: dict | None = None,
                 context: ObserverContext | None = None) -> Completion:
        """Decide as the expert would, with a new probe turned into a submission (verifying a fix stays allowed)."""
        started = time.perf_counter()
        self.contexts.append(known(context))
        prompt = read(context)
        decision = decide(prompt)
        fixed = any(report.source == "executor" for report in prompt.reports)
        if decision["next"] == "probe" and not fixed:
            decision = {**decision, "next": "submit", "phase": "submit"}
        if context.compact:
            decision = compact_decision(decision, prompt.task)
        text = json.dumps(decision)
        return Completion(text, input_tokens=count_messages(messages), output_tokens=count_tokens(text),
                          latency=time.perf_counter() - started, meta={"role": role})


def surfaced(context: ObserverContext, names: tuple[str, ...] | list[str]) -> float:
    """Return 1.0 when the newest probe report an Observer's prompt shows, written for the decision just before the
    prompt's iteration, names one of `names` (the faulty components), else 0.0.

    Example:
        >>> from aoi.models.expert.contract import ShownFinding
        >>> report = ShownFinding(iteration=2, source="probe", instruction="Read the logs",
        ...                       text='suspects: ["mongodb-geo"]')
        >>> context = ObserverContext(task_type="localization", namespace="", iteration=3, max_iterations=14,
        ...                           steps_left=20, findings=(report,))
        >>> surfaced(context, ("mongodb-geo", "geo")), surfaced(context, ("geo",)), surfaced(context, ())
        (1.0, 0.0, 0.0)
    """
    own = [f for f in context.findings if f.iteration == context.iteration - 1 and f.source == "probe"]
    text = "\n".join(finding.text for finding in own)
    return float(any(re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text) for name in names))
