"""The agent <-> expert contract: what the Observer hands the expert as data, and every phrase the sub-agents' loop
writes that the expert reads back, written once.

The Observer sends what its prompt says as an `ObserverContext` with each call (`Model.complete(..., context=...)`),
so the expert Observer reads data, not the prompt's text. The sub-agents' conversations (the Probe's instruction and
context, tool feedback, the Compressor's output) are read back with the phrases and patterns here;
tests/models/test_contract.py runs the loop's real messages through the expert's readers, so editing one side
without the other fails there, not silently in an episode. It lives in the models layer because the expert may not
import the agents (cli -> agents -> ... -> models).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

# Feedback the sub-agent loop answers a call with (the expert's Probe and Executor read their run back from it).
REPEATED = "You already ran"
NO_CALLS_LEFT = "No tool calls left: finish now with what you know."
REFUSED = "Refused"
NOT_APPROVED = "Not approved"
ERROR = "Error"  # a tool that failed (wrong arguments, an environment error)
OUTPUT_CUT = "[output was"
FAILED = (REFUSED, NOT_APPROVED, "[ERROR]", ERROR, "error:")  # how a change that did not happen reads

# The prompts (aoi/agents/prompts.yaml) as the expert reads them.
CALL_BUDGET = re.compile(r"at most (\d+) tool calls")  # the sub-agents' system prompts
TOKEN_BUDGET = re.compile(r"at most (\d+) tokens")  # the Compressor's system prompt
INVESTIGATE, CONTEXT = "Investigate: ", "\nContext: "  # the Probe's user prompt: instruction, then context
OUTPUT = "Output:\n"  # the Compressor's user prompt: the output follows

# A finding's header in the Observer's memory: the instruction is cut to KEY_CHARS, so that cut is its key. A compact
# Observer passes its findings on in the sub-agent's context, where the expert Probe finds them by their headers.
KEY_CHARS = 160
HEADER = re.compile(r'^\[(\d+)\] (probe|executor) on "(.*?)":[ \t]*$', re.MULTILINE | re.DOTALL)


@dataclass(frozen=True, kw_only=True)
class ShownFinding:
    """A sub-agent's report as the Observer's prompt shows it."""

    iteration: int
    source: str  # probe | executor
    instruction: str  # the instruction's key (key()), as the finding's header shows it
    text: str  # the report as shown: whole, condensed, or the note that it was left out to fit the context


@dataclass(frozen=True, kw_only=True)
class ObserverContext:
    """What the Observer's prompt says, as data: the expert's Observer decides from this, not from the prompt's text.

    Example:
        >>> ObserverContext(task_type="detection", namespace="shop", iteration=1, max_iterations=14,
        ...                 steps_left=30).findings
        ()
    """

    task_type: str
    namespace: str
    iteration: int
    max_iterations: int
    steps_left: int  # environment actions left, as the prompt says
    findings: tuple[ShownFinding, ...] = ()  # the reports the prompt shows, oldest first (dropped ones left out)
    compact: bool = False  # the prompt asks for a compact decision (aoi.models.compact)


def repeated(tool: str, args: dict) -> str:
    """Answer a call the role already made in this instruction.

    Example:
        >>> repeated("exec_shell", {"command": "kubectl get pods"}).startswith(REPEATED)
        True
    """
    return (f"{REPEATED} exactly this ({tool} {json.dumps(args)}) in this task; its result is above. Run something "
            "different, or finish with what you know.")


def format_error(error: object) -> str:
    """Answer a sub-agent reply that was no valid tool call."""
    return f"Format error: {error}"


def refused(reason: str) -> str:
    """Answer a command the policy refused."""
    return f"{REFUSED}: {reason}"


def not_approved(reason: str) -> str:
    """Answer a change the approval gate denied."""
    return f"{NOT_APPROVED}: {reason}"


def output_cut(size: int) -> str:
    """Say, after a tool output, that it was cut or summarised and how to narrow it."""
    return f"\n{OUTPUT_CUT} {size} characters; summarised. Narrow the command (grep, -l, --tail)]"


def key(instruction: str) -> str:
    """Return the part of an instruction a finding's header keeps (how the expert tells instructions apart).

    Example:
        >>> len(key("x" * 500)) == KEY_CHARS
        True
    """
    return instruction[:KEY_CHARS]


def header(iteration: int, source: str, instruction: str) -> str:
    """Return a finding's header line in the Observer's memory.

    Example:
        >>> header(2, "probe", "Survey namespace shop")
        '[2] probe on "Survey namespace shop":'
        >>> HEADER.match(header(2, "probe", "Survey namespace shop")).groups()
        ('2', 'probe', 'Survey namespace shop')
    """
    return f'[{iteration}] {source} on "{key(instruction)}":'


def succeeded(observation: str) -> bool:
    """Return whether a tool's observation reads as a usable result (not repeated, refused or failed).

    Example:
        >>> succeeded("NAME READY"), succeeded(refused("kubectl delete is a write")), succeeded(NO_CALLS_LEFT)
        (True, False, True)
    """
    return not observation.startswith((REPEATED, REFUSED, ERROR))
