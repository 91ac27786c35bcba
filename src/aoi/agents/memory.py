"""The Observer's memory between iterations (a plan, the sub-agents' findings, its recent decisions) within a budget."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field

from aoi.agents.compressor import fallback, tokens
from aoi.models.expert import contract
from aoi.models.tokens import count_messages

DECISIONS_KEPT = 4
PLAN_ITEM_CHARS = 200
CONDENSED_TOKENS = 150  # what an older finding keeps once the context is full (its header, errors, anomalies)
FULL, CONDENSED, HEADER, DROPPED = "full", "condensed", "header", "dropped"


@dataclass
class Finding:
    """What one probe or executor call reported."""

    iteration: int
    source: str  # probe | executor
    instruction: str
    text: str


@dataclass
class Memory:
    """Everything the Observer knows, rendered so that its whole prompt fits a token budget.

    When it does not fit, the oldest findings go first: condensed, then cut to their header, then dropped; the
    newest is condensed last. The task, plan and recent decisions are always kept; the prompt says what was cut.
    """

    budget: int = 4000  # tokens of the Observer's whole prompt (system + user), cl100k
    _: KW_ONLY  # the budget is positional, the contents by keyword
    plan: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    decisions: list[str] = field(default_factory=list)
    _sizes: dict = field(default_factory=dict, repr=False)  # (finding index, level) -> (text, tokens)
    shown: list[contract.ShownFinding] = field(default_factory=list, repr=False)  # the last rendered findings

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
        plan = decision.get("plan")
        if plan:
            self.plan = [str(p)[:PLAN_ITEM_CHARS] for p in (plan if isinstance(plan, list) else [plan])][:8]

    def prompt(self, build: Callable[[str], list[dict]]) -> list[dict]:
        """Return build(findings) with as many findings as keep the whole prompt within the budget."""
        room = self.budget - count_messages(build(""))
        messages = build(self.render_findings(room))
        for _ in range(3):  # parts are counted one by one; joined, a few tokens may differ: tighten and retry
            over = count_messages(messages) - self.budget
            if over <= 0:
                break
            room -= over + 8
            messages = build(self.render_findings(room))
        return messages

    def render_findings(self, room: int) -> str:
        """Render the findings in at most `room` tokens, giving up the oldest first; `shown` keeps what it showed."""
        self.shown = []
        if not self.findings:
            return "(none yet)"
        levels = [FULL] * len(self.findings)
        for level in (CONDENSED, HEADER, DROPPED):
            for i in range(len(levels) - 1):
                if self._size(levels) <= room:
                    break
                levels[i] = level
        pieces = [self._piece(i, level)[0] for i, level in enumerate(levels) if level != DROPPED]
        if self._size(levels) > room:  # the newest alone is too big: condense it to what is left
            newest = self.findings[-1]
            rest = self._size(levels) - self._piece(len(levels) - 1, FULL)[1]
            pieces[-1] = _header(newest) + "\n" + fallback(newest.text, max(room - rest, 40))
        shown = [finding for finding, level in zip(self.findings, levels) if level != DROPPED]
        self.shown = [_shown(finding, piece) for finding, piece in zip(shown, pieces)]
        return _note(levels, self.findings) + "\n\n".join(pieces)

    def _size(self, levels: list[str]) -> int:
        """Count the tokens of the findings at these levels (with the note about what was left out)."""
        parts = [self._piece(i, level)[1] + 1 for i, level in enumerate(levels) if level != DROPPED]
        return sum(parts) + tokens(_note(levels, self.findings))

    def _piece(self, index: int, level: str) -> tuple[str, int]:
        """Return one finding rendered at a level, and its tokens (cached: findings never change)."""
        key = (index, level)
        if key not in self._sizes:
            piece = _header(self.findings[index]) + "\n" + _body(self.findings[index].text, level)
            self._sizes[key] = (piece, tokens(piece))
        return self._sizes[key]

    def render_plan(self) -> str:
        """Render the plan as a list."""
        return "\n".join(f"- {p}" for p in self.plan) or "(no plan yet)"

    def render_decisions(self) -> str:
        """Render the most recent decisions, one a line."""
        return "\n".join(self.decisions[-DECISIONS_KEPT:]) or "(none yet)"


def _header(finding: Finding) -> str:
    """Return a finding's header line (its shape is the expert's contract)."""
    return contract.header(finding.iteration, finding.source, finding.instruction)


def _shown(finding: Finding, piece: str) -> contract.ShownFinding:
    """Return a finding as its rendered piece shows it (the piece minus its header line)."""
    text = piece[len(_header(finding)) + 1:].strip()
    return contract.ShownFinding(iteration=finding.iteration, source=finding.source,
                                 instruction=contract.key(finding.instruction), text=text)


def _body(text: str, level: str) -> str:
    """Return a finding's text at a level: whole, condensed (header line, errors, anomalies) or left out."""
    if level == HEADER:
        return "(report left out to fit the context)"
    short = fallback(text, CONDENSED_TOKENS) if level == CONDENSED else text
    return text if short == text else "(condensed to fit the context)\n" + short


def _note(levels: list[str], findings: list[Finding]) -> str:
    """Say which findings were left out or shortened to fit the context, if any."""
    dropped = [str(f.iteration) for f, level in zip(findings, levels) if level == DROPPED]
    cut = sum(level in (CONDENSED, HEADER) for level in levels)
    if not dropped and not cut:
        return ""
    said = [f"{len(dropped)} oldest finding(s) left out (iterations {', '.join(dropped)})"] if dropped else []
    said += [f"{cut} older finding(s) shortened"] if cut else []
    return f"[To fit the context budget: {'; '.join(said)}.]\n"


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
