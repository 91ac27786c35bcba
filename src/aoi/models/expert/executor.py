"""The expert Executor: run the given kubectl commands one by one, then check the pods, then report.

Its budget and instruction come from the context its call sends (contract.SubAgentContext), what ran from the
conversation.
"""

from __future__ import annotations

import json
import re

from aoi.models.expert import contract
from aoi.models.expert.analyzers import pods
from aoi.models.expert.checks import tool_calls

COMMAND = re.compile(r"^\s*(?:\d+[.)]\s*|[-*]\s*)?(kubectl\s.+?)\s*$|`(kubectl\s[^`]+)`", re.MULTILINE)
VERIFY = ("kubectl get pods -n {ns}", "kubectl get pods -n {ns} -o wide", "kubectl get pods -n {ns} --show-labels",
          "kubectl get pods -n {ns} -o wide --show-labels")


def commands(text: str) -> list[str]:
    """Return the kubectl commands of an instruction (one per line, or in backticks), in order, without repeats.

    Example:
        >>> commands("Apply the fix:\\n1. kubectl scale deployment api -n shop --replicas=1\\n2. kubectl get pods")
        ['kubectl scale deployment api -n shop --replicas=1', 'kubectl get pods']
        >>> commands("Please run `kubectl rollout restart deployment api -n shop` now.")
        ['kubectl rollout restart deployment api -n shop']
    """
    return list(dict.fromkeys(m.group(1) or m.group(2) for m in COMMAND.finditer(text)))


def respond(messages: list[dict], context: contract.SubAgentContext | None) -> str:
    """Return the executor's next reply: the next command, a verification read, or the report."""
    given = contract.expect(context, contract.SubAgentContext, "executor")
    todo = commands(given.instruction)  # the instruction's only: a context may quote reports
    done = _done(messages[2:])
    ns = _namespace(given, todo)
    ran = [c for c, _ in done if c in todo]
    verifying = [(c, o) for c, o in done if c not in todo]
    if len(done) < given.budget and contract.NO_CALLS_LEFT not in str(messages[-1].get("content", "")):
        pending = [c for c in todo if c not in ran]
        if pending:
            return _call(f"apply step {len(ran) + 1} of {len(todo)}", pending[0])
        if not verifying or (verifying[-1][1].startswith(contract.REPEATED) and len(verifying) < len(VERIFY)):
            return _call("verify the pods after the change", VERIFY[len(verifying)].format(ns=ns))
    return _finish(todo, done, verifying)


def _call(thought: str, command: str) -> str:
    return json.dumps({"thought": thought, "tool": "exec_shell", "args": {"command": command}})


def _done(messages: list[dict]) -> list[tuple[str, str]]:
    """Return (command, observation) for each command already run."""
    return [(call["args"]["command"], observation) for call, observation in tool_calls(messages)
            if (call.get("args") or {}).get("command")]


def _namespace(given: contract.SubAgentContext, todo: list[str]) -> str:
    """Return the namespace the change is about: named in the instruction, its context, or a command."""
    named = (re.search(r"namespace:?\s+([a-z0-9-]+)", text) for text in (given.instruction, given.context))
    match = next((m for m in named if m), None) or \
        next((m for m in (re.search(r"-n\s+([a-z0-9-]+)", c) for c in todo) if m), None)
    return match.group(1) if match else "default"


def _finish(todo: list[str], done: list[tuple[str, str]], verifying: list[tuple[str, str]]) -> str:
    """Report what changed, what failed, what was left, and whether the pods look healthy."""
    outcome = dict(done)
    changes = [c for c in todo if c in outcome and not outcome[c].strip().startswith(contract.FAILED)]
    failed = {c: outcome[c].strip()[:200] for c in todo if c in outcome and c not in changes}
    pending = [c for c in todo if c not in outcome]
    checked = [o for _, o in verifying if not o.startswith(contract.REPEATED)]
    bad = pods.unhealthy(checked[-1]) if checked else None
    verified = bad == [] and not failed and not pending
    report = f"Ran {len(changes)} of {len(todo)} change(s)" + (f"; {len(failed)} failed" if failed else "") + \
        (f"; {len(pending)} not run" if pending else "") + \
        ("" if bad is None else f"; pods not healthy yet: {', '.join(bad)}" if bad else "; all pods healthy") + "."
    args = {"report": report, "changes": changes, "verified": verified}
    args |= {"failed": failed} if failed else {}
    args |= {"pending": pending} if pending else {}
    return json.dumps({"thought": "report the changes", "tool": "finish", "args": args})
