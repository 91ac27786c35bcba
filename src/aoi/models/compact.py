"""The compact decision format for small local models: fewer, shorter fields, answers chosen from what can be right.

A compact decision is one of
    {"next": "probe", "instruction": "..."}      {"next": "execute", "instruction": "..."}  (mitigation only)
    {"next": "submit", "answer": ...}            {"next": "submit"}  (mitigation: no answer)
The answer's values come from the episode: "Yes"/"No" for detection, the app's components the findings name for
localization (all of the app's components until a finding names one), AIOpsLab's system levels and fault types for
analysis. The Observer's compact prompt states them on one line (`choices_line`), so the reply's JSON schema is a
function of the prompt alone (`reply_schema`): the `local:` backend's constrained decoder, GRPO's sampler (which sees
prompts only) and a vLLM server's structured outputs all build it from the messages they are given.
"""

from __future__ import annotations

import json
import re
from typing import Any

from aoi.models.constrained import schema_for
from aoi.tasks import FAULT_TYPES, SYSTEM_LEVELS, TaskType

COMPACT, STANDARD = "compact", "standard"
CHOICES = re.compile(r"^Answer choices \((\w+)\): (.*)$", re.MULTILINE)
INSTRUCTION_CHARS = 2400  # the expert's longest instruction is 2,326 characters (a ConfigMap patch of 11 flags)
MAX_COMPONENTS = 3  # names in one localization answer
NOTES = {TaskType.DETECTION: " (is there a fault?)",
         TaskType.LOCALIZATION: " (a list of one or more of these; [] for no fault)",
         TaskType.ANALYSIS: " (one value of each)",
         TaskType.MITIGATION: " (submit with no answer once the fix is verified)"}


def answer_choices(task_type: str, components: list[str] | tuple[str, ...] = ()) -> Any:
    """Return what a task type's answer may hold: values, names, one list per key, or None (no answer).

    Example:
        >>> answer_choices("detection"), answer_choices("localization", ["geo"]), answer_choices("mitigation")
        (['Yes', 'No'], ['geo'], None)
    """
    return {TaskType.DETECTION: ["Yes", "No"], TaskType.LOCALIZATION: list(components),
            TaskType.ANALYSIS: {"system_level": list(SYSTEM_LEVELS), "fault_type": list(FAULT_TYPES)},
            TaskType.MITIGATION: None}[task_type]


def choices_line(task_type: str, choices: Any) -> str:
    """Write the compact prompt's line of answer choices (the decoder reads the answer's schema back from it).

    Example:
        >>> choices_line("detection", ["Yes", "No"])
        'Answer choices (detection): ["Yes", "No"] (is there a fault?)'
    """
    return f"Answer choices ({task_type}): {json.dumps(choices)}{NOTES[task_type]}"


def read_choices(messages: list[dict]) -> tuple[str, Any] | None:
    """Return (task type, choices) from a compact prompt's last user message; None for another prompt.

    Example:
        >>> read_choices([{"role": "user", "content": "Task\\n" + choices_line("localization", ["a", "b"])}])
        ('localization', ['a', 'b'])
        >>> read_choices([{"role": "user", "content": "Answer format when you submit: ..."}]) is None
        True
    """
    users = [m for m in messages if m.get("role") == "user"]
    match = CHOICES.search(str(users[-1].get("content") or "")) if users else None
    if match is None or match.group(1) not in NOTES:
        return None
    try:
        choices, _ = json.JSONDecoder().raw_decode(match.group(2))
    except ValueError:
        return None
    return match.group(1), choices


def prompt_format(messages: list[dict]) -> str:
    """Return the decision format a prompt asks for: compact when it carries the answer-choices line."""
    return COMPACT if read_choices(messages) is not None else STANDARD


def compact_schema(task_type: str, choices: Any) -> dict:
    """Return the JSON schema of a compact decision for a task type and its answer choices.

    Example:
        >>> s = compact_schema("detection", ["Yes", "No"])
        >>> [b["properties"]["next"]["enum"] for b in s["anyOf"]], s["anyOf"][1]["properties"]["answer"]["enum"]
        ([['probe'], ['submit']], ['Yes', 'No'])
    """
    steps = ["probe", "execute"] if task_type == TaskType.MITIGATION else ["probe"]
    act = _object({"next": {"type": "string", "enum": steps},
                   "instruction": {"type": "string", "minLength": 1, "maxLength": INSTRUCTION_CHARS}})
    submit = {"next": {"type": "string", "enum": ["submit"]}}
    if task_type != TaskType.MITIGATION:
        submit["answer"] = _answer(task_type, choices)
    return {"anyOf": [act, _object(submit)]}


def _object(properties: dict) -> dict:
    """Return an object schema whose properties are all required and the only ones allowed."""
    return {"type": "object", "required": list(properties), "properties": properties, "additionalProperties": False}


def _answer(task_type: str, choices: Any) -> dict:
    """Return the schema of a submitted answer drawn from the choices."""
    if task_type == TaskType.ANALYSIS:
        return _object({key: {"type": "string", "enum": list(values)} for key, values in choices.items()})
    if task_type == TaskType.LOCALIZATION:
        items = {"type": "string", "enum": list(choices)} if choices else {"type": "string", "maxLength": 40}
        return {"type": "array", "items": items, "maxItems": MAX_COMPONENTS}
    return {"type": "string", "enum": list(choices)}


def reply_schema(role: str, messages: list[dict] | None = None) -> dict | None:
    """Return the JSON schema of a role's reply to these messages: the compact decision's for a compact Observer
    prompt, else the role's standard one (constrained.schema_for); None for free-text roles.

    This is the schema to hand any constrained decoder (lm-format-enforcer here, a vLLM server's structured outputs).

    Example:
        >>> ask = [{"role": "user", "content": choices_line("mitigation", None)}]
        >>> [b["required"] for b in reply_schema("observer", ask)["anyOf"]], reply_schema("observer")["required"]
        ([['next', 'instruction'], ['next']], ['next'])
    """
    found = read_choices(messages or []) if str(getattr(role, "value", role)) == "observer" else None
    return compact_schema(*found) if found is not None else schema_for(role)


def compact_decision(decision: dict, task_type: str) -> dict:
    """Write a standard decision in the compact format (the fields a compact decision has, in its order).

    Example:
        >>> compact_decision({"phase": "act", "next": "probe", "instruction": "Survey", "answer": []}, "localization")
        {'next': 'probe', 'instruction': 'Survey'}
        >>> compact_decision({"next": "submit", "instruction": "", "answer": None}, "mitigation")
        {'next': 'submit'}
    """
    if decision.get("next") != "submit":
        return {"next": decision.get("next"), "instruction": decision.get("instruction", "")}
    return {"next": "submit"} | ({} if task_type == TaskType.MITIGATION else {"answer": decision.get("answer")})
