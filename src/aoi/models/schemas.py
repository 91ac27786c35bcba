"""The roles' reply schemas, declared once: what the agents parse and what constrained decoders enforce.

The agents build a call's schema here and send it with the call (`Model.complete(..., schema=...)`): the Observer
its decision's (`OBSERVER`, or `compact_schema` of the answer choices its compact prompt lists), a Probe or an
Executor the tool call among its own tools (`tool_call_schema(names)`, the names it parses with). The same values
are what their parsers accept (aoi.agents.actions.parse_tool_call, the Observer's `NEXT_STEPS`), so a reply valid
under the schema parses. Strings and lists are bounded so a decision fits a small model's token cap.
"""

from __future__ import annotations

from typing import Any

from aoi.tasks import FAULT_TYPES, SYSTEM_LEVELS, TaskType

NEXT_STEPS = ("probe", "execute", "submit")  # a decision's "next": the Observer's tools
PHASES = ("survey", "narrow", "confirm", "act", "verify", "submit")
INSTRUCTION_CHARS = 2400  # a compact instruction: the expert's longest is 2,326 characters (a ConfigMap patch)
MAX_COMPONENTS = 3  # names in one compact localization answer


def _text(limit: int) -> dict:
    return {"type": "string", "maxLength": limit}


def _texts(items: int, limit: int) -> dict:
    return {"type": "array", "items": _text(limit), "maxItems": items}


def _one_of(values) -> dict:
    return {"type": "string", "enum": list(values)}


OBSERVER = {"type": "object", "required": ["next"], "properties": {
    "phase": _one_of(PHASES),
    "plan": _texts(3, 80),
    "hypotheses": {"type": "array", "maxItems": 2, "items": {"type": "object", "properties": {
        "claim": _text(100), "confidence": {"type": "number", "enum": [i / 10 for i in range(11)]},
        "evidence": _text(100)}}},
    "next": _one_of(NEXT_STEPS),
    "instruction": _text(240),
    "context": _text(160),
    "answer": {"anyOf": [_text(40), _texts(4, 40), {"type": "null"}, {"type": "object", "properties": {
        "system_level": _one_of(SYSTEM_LEVELS), "fault_type": _one_of(FAULT_TYPES)}}]},
}}
ARG_VALUE = {"anyOf": [_text(300), {"type": "number"}, {"type": "boolean"}, _texts(5, 80)]}


def tool_call_schema(tools: list[str] | tuple[str, ...]) -> dict:
    """Return the schema of a Probe/Executor reply: {"thought", "tool", "args"} with tool among `tools`.

    Example:
        >>> tool_call_schema(["finish"])["properties"]["tool"]
        {'type': 'string', 'enum': ['finish']}
    """
    return {"type": "object", "required": ["tool", "args"], "properties": {
        "thought": _text(200), "tool": _one_of(tools),
        "args": {"type": "object", "additionalProperties": ARG_VALUE}}}


def compact_schema(task_type: str, choices: Any) -> dict:
    """Return the JSON schema of a compact decision for a task type and its answer choices (aoi.models.compact).

    Example:
        >>> s = compact_schema("detection", ["Yes", "No"])
        >>> [b["properties"]["next"]["enum"] for b in s["anyOf"]], s["anyOf"][1]["properties"]["answer"]["enum"]
        ([['probe'], ['submit']], ['Yes', 'No'])
    """
    probe, execute, submit = NEXT_STEPS
    act = _object({"next": _one_of([probe, execute] if task_type == TaskType.MITIGATION else [probe]),
                   "instruction": {"type": "string", "minLength": 1, "maxLength": INSTRUCTION_CHARS}})
    done = {"next": _one_of([submit])}
    if task_type != TaskType.MITIGATION:
        done["answer"] = _answer(task_type, choices)
    return {"anyOf": [act, _object(done)]}


def _object(properties: dict) -> dict:
    """Return an object schema whose properties are all required and the only ones allowed."""
    return {"type": "object", "required": list(properties), "properties": properties, "additionalProperties": False}


def _answer(task_type: str, choices: Any) -> dict:
    """Return the schema of a submitted answer drawn from the choices."""
    if task_type == TaskType.ANALYSIS:
        return _object({key: _one_of(values) for key, values in choices.items()})
    if task_type == TaskType.LOCALIZATION:
        items = _one_of(choices) if choices else _text(40)
        return {"type": "array", "items": items, "maxItems": MAX_COMPONENTS}
    return _one_of(choices)
