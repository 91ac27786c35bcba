"""The expert Probe: re-derives its run from its call, picks the next check, and reports.

Everything comes from the call it is given: the budget, instruction and context from the context the call sends
(contract.SubAgentContext: the focus, namespace, targets and known diagnosis), and what ran from its own earlier
replies in the conversation (each names its check in the thought) paired with the observations that followed.
Nothing is kept between calls but the evidence of each output already analysed (`checks.analyzed`: a function of
the check, its output, the namespace and the targets), so a call analyses only the newest output.
"""

from __future__ import annotations

import functools
import json
import re

from aoi.models.expert import checks, contract, instructions, report
from aoi.models.expert.analyzers import Evidence
from aoi.models.expert.checks import Seen, Step, tool_calls

PLANS = {
    "survey": ["pods", "events", "deployments", "chaos"],
    "services": ["services", "pod_ports", "endpoints"],
    "config": ["configmaps", "flags", "mounts", "claims", "volumes"],
    "telemetry": ["traces", "trace_summary", "metrics", "cpu", "drops"],
    "logs": [],
    "database": ["db_describe", "db_config", "db_logs"],
    "verify": ["verify_pods", "verify_deployments"],
    "continue": [],
}
NEEDS_TARGETS = ("logs", "database", "continue")  # without a parsable target these start from the pods
VERIFY_BY_KIND = {"port_mismatch": ["verify_services", "verify_pod_ports"], "stale_claim": ["verify_claims"],
                  "db_tls": ["verify_config"], "flag_enabled": ["verify_config"]}
CHECK_TAG = re.compile(r"^\[([\w:./-]+)\]")


class Run:
    """One probe call re-read from its context and its conversation."""

    def __init__(self, messages: list[dict], context: contract.SubAgentContext):
        self.budget = context.budget
        self.instruction = instructions.parse(context.instruction, context.context, context.findings)
        self.steps = _steps(messages[2:])
        self.namespace = self.instruction.namespace or checks.busiest_namespace(self.steps) or "default"
        self.seen = Seen(self.namespace, self.steps)
        self.out_of_calls = bool(messages) and contract.NO_CALLS_LEFT in str(messages[-1].get("content", ""))

    @property
    def targets(self) -> list[str]:
        """Return the pods, database or checks the instruction names."""
        return self.instruction.targets

    @functools.cached_property
    def plan(self) -> list[str]:
        """The checks of the focus, then the follow-ups the evidence so far asks for."""
        focus = self.instruction.focus
        base = list(PLANS[focus]) + [f"logs:{p}" for p in self.targets if focus == "logs"]
        base += [c for c in self.targets if focus == "continue" and (c in checks.CALLS or ":" in c)]
        if focus in NEEDS_TARGETS and not self.targets:
            base = ["pods", "events"]
        if not self.instruction.namespace:
            base.insert(0, "namespaces")
        if focus == "verify":
            kind = (self.instruction.known or {}).get("kind", "")
            base += VERIFY_BY_KIND.get(kind, [])
        evidence = self.evidence
        quiet = [s.check.split(":", 1)[1] for s in self.steps if s.check.startswith("logs:")
                 and not any(e.facts.get("pod") == s.check.split(":", 1)[1] for e in evidence)]
        return base + [f"previous:{p}" for p in quiet] + [f"logs:{p}" for p in report.log_leads(evidence, self.seen)]

    @functools.cached_property
    def evidence(self) -> list[Evidence]:
        """The run's evidence, the known diagnosis first."""
        return _known(self.instruction.known) + checks.evidence(self.seen, self._targets_for())

    def _targets_for(self) -> list[str]:
        known = self.instruction.known or {}
        if self.instruction.focus == "verify" and known.get("kind") in ("db_tls", "flag_enabled"):
            return [known.get("facts", {}).get("configmap", "")]
        return self.targets

    def unrun(self) -> list[str]:
        """Return the focus' checks that still apply but did not fit in the budget."""
        focus = [c for c in self.plan if not c.startswith(("logs:", "previous:")) or self.instruction.focus == "logs"]
        return [c for c in focus if not self.seen.ran(c) and checks.call(c, self.seen, self._targets_for())]

    def next_call(self) -> tuple[str, str, dict] | None:
        """Return (check, tool, args) of the next check to run, None when the plan is done."""
        for check in self.plan:
            tries = [s for s in self.steps if s.check == check]
            repeated = tries and tries[-1].observation.startswith(contract.REPEATED)
            if tries and (not repeated or len(tries) >= len(checks.VARIANTS)):
                continue
            made = checks.call(check, self.seen, self._targets_for())
            if made is None:
                continue
            tool, args = made
            if tries and tool == "exec_shell":
                args = {"command": args["command"] + checks.VARIANTS[len(tries)]}
            return check, tool, args
        return None


def respond(messages: list[dict], context: contract.SubAgentContext | None) -> str:
    """Return the probe's next reply: one tool call, or finish with the report."""
    run = Run(messages, contract.expect(context, contract.SubAgentContext, "probe"))
    nxt = run.next_call()
    if nxt is None or run.out_of_calls or len(run.steps) >= run.budget:
        unrun = run.unrun() if nxt else []  # checks the budget left out become a lead
        args = report.build(run.evidence, run.seen, run.instruction, run.namespace, unrun)
        return json.dumps({"thought": "[finish] report what the checks showed", "tool": "finish", "args": args})
    check, tool, args = nxt
    return json.dumps({"thought": f"[{check}] {report.WHY.get(check.split(':')[0], 'check')}", "tool": tool,
                       "args": args})


def _steps(messages: list[dict]) -> list[Step]:
    """Pair each of the probe's own tool calls with the observation that answered it."""
    steps = []
    for call, observation in tool_calls(messages):
        tag = CHECK_TAG.match(str(call.get("thought", "")))
        if tag and call.get("tool") != "finish":
            steps.append(Step(tag.group(1), call.get("tool", ""), call.get("args", {}), observation))
    return steps


def _known(known: dict | None) -> list[Evidence]:
    """Turn the diagnosis passed on in the context back into evidence."""
    if not known or not known.get("kind"):
        return []
    facts = dict(known.get("facts") or {}) | {"confidence": float(known.get("confidence", 0)),
                                               "fix": list(known.get("fix") or [])}
    lines = [str(x) for x in known.get("evidence") or []] or [f"{known['kind']} in {known.get('component')}"]
    detail = lines[0] if lines[0].startswith("known: ") else f"known: {lines[0]}"
    return [Evidence(known["kind"], known.get("component", ""), detail, facts)]

