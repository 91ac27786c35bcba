"""The agent <-> expert contract: what each role's call hands the expert as data, and every phrase the sub-agents'
loop writes that the expert reads back, written once.

Every call sends what its prompt says as a context (`Model.complete(..., context=...)`): the Observer an
`ObserverContext`, a Probe or an Executor a `SubAgentContext`, the Compressor a `CompressorContext`; so the expert
reads data, not the prompts' text. What a sub-agent's conversation adds after its prompt (tool feedback) is read back
with the phrases here; tests/models/test_contract.py runs the loop's real calls through the expert's readers, so
editing one side without the other fails there, not silently in an episode. It lives in the models layer because the
expert may not import the agents (cli -> agents -> ... -> models).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from aoi.models.base import ModelError

# Feedback the sub-agent loop answers a call with (the expert's Probe and Executor read their run back from it).
REPEATED = "You already ran"
NO_CALLS_LEFT = "No tool calls left: finish now with what you know."
REFUSED = "Refused"
NOT_APPROVED = "Not approved"
ERROR = "Error"  # a tool that failed (wrong arguments, an environment error)
OUTPUT_CUT = "[output was"
FAILED = (REFUSED, NOT_APPROVED, "[ERROR]", ERROR, "error:")  # how a change that did not happen reads

# A finding's header in the Observer's memory: the instruction is cut to KEY_CHARS, so that cut is its key.
KEY_CHARS = 160


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


@dataclass(frozen=True, kw_only=True)
class SubAgentContext:
    """What a Probe's or an Executor's prompt says, as data: its call budget, its instruction and context.

    Example:
        >>> SubAgentContext(budget=4, instruction="Survey namespace shop", context="namespace: shop").findings
        ()
    """

    budget: int  # tool calls the system prompt allows
    instruction: str  # the Observer's instruction, as the user prompt shows it
    context: str  # the context that travels with it, as the user prompt shows it
    findings: tuple[ShownFinding, ...] = ()  # the reports that context shows (a compact Observer's: its prompt's)


@dataclass(frozen=True, kw_only=True)
class CompressorContext:
    """What the Compressor's prompt says, as data: the token budget and the output to condense."""

    budget: int  # tokens the summary may take
    output: str


def expect(context: Any, kind: type, role: str) -> Any:
    """Return a call's context; without one of `kind` the expert cannot answer (it does not read the prompt's text).

    Example:
        >>> expect(None, CompressorContext, "compressor")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        aoi.models.base.ModelError: the expert compressor reads ... context=CompressorContext(...)) as aoi.agents...
    """
    if not isinstance(context, kind):
        raise ModelError(f"the expert {role} reads what its prompt says from the context its call sends: call "
                         f"complete(..., context={kind.__name__}(...)) as aoi.agents does, or give the {role} "
                         "another model")
    return context


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
    """
    return f'[{iteration}] {source} on "{key(instruction)}":'


def succeeded(observation: str) -> bool:
    """Return whether a tool's observation reads as a usable result (not repeated, refused or failed).

    Example:
        >>> succeeded("NAME READY"), succeeded(refused("kubectl delete is a write")), succeeded(NO_CALLS_LEFT)
        (True, False, True)
    """
    return not observation.startswith((REPEATED, REFUSED, ERROR))
