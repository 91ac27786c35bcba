"""The Observer's memory between iterations: a plan, findings from the sub-agents, its own recent decisions."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from aoi.agents.compressor import Compressor, tokens

DECISIONS_KEPT = 4


@dataclass
class Finding:
    """What one probe or executor call reported."""

    iteration: int
    source: str  # probe | executor
    instruction: str
    text: str


@dataclass
class Memory:
    """Everything the Observer knows, rendered within a token budget (oldest findings condensed first)."""

    budget: int = 6000
    plan: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    decisions: list[str] = field(default_factory=list)

    def add_finding(self, finding: Finding) -> None:
        """Remember a sub-agent's report."""
        self.findings.append(finding)

    def add_decision(self, iteration: int, decision: dict) -> None:
        """Remember a decision in one line."""
        claims = "; ".join(f"{h.get('claim', '')} ({h.get('confidence', '?')})"
                           for h in decision.get("hypotheses") or [] if isinstance(h, dict))
        line = f"[{iteration}] {decision.get('phase', '?')} -> {decision.get('next', '?')}: " \
               f"{str(decision.get('instruction', ''))[:200]}"
        self.decisions.append(line + (f" | hypotheses: {claims[:300]}" if claims else ""))
        if decision.get("plan"):
            self.plan = [str(p) for p in decision["plan"]][:8]

    def render_findings(self, compress: Compressor) -> str:
        """Render the findings, condensing the oldest until they fit the budget."""
        texts = [f"[{f.iteration}] {f.source} on \"{f.instruction[:160]}\":\n{f.text}" for f in self.findings]
        while texts and tokens("\n\n".join(texts)) > self.budget and len(texts) > 1:
            oldest = texts.pop(0)
            share = max(self.budget // (2 * (len(texts) + 1)), 80)
            texts[0] = compress(oldest, share) + "\n\n" + texts[0]
        joined = "\n\n".join(texts)
        return compress(joined, self.budget) if joined else "(none yet)"

    def render_plan(self) -> str:
        return "\n".join(f"- {p}" for p in self.plan) or "(no plan yet)"

    def render_decisions(self) -> str:
        return "\n".join(self.decisions[-DECISIONS_KEPT:]) or "(none yet)"


def as_text(report: dict) -> str:
    """Render a sub-agent's finish arguments as readable text."""
    if not report:
        return "(no report)"
    parts = []
    for key, value in report.items():
        if isinstance(value, (list, dict)):
            value = json.dumps(value, ensure_ascii=False)
        parts.append(f"{key}: {value}")
    return "\n".join(parts)
