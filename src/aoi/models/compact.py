"""The compact decision format for small local models: fewer, shorter fields, answers chosen from what can be right.

A compact decision is one of
    {"next": "probe", "instruction": "..."}      {"next": "execute", "instruction": "..."}  (mitigation only)
    {"next": "submit", "answer": ...}            {"next": "submit"}  (mitigation: no answer)
The answer's values come from the episode: "Yes"/"No" for detection, the app's components the findings name for
localization (all of the app's components until a finding names one), AIOpsLab's system levels and fault types for
analysis. The Observer's compact prompt states them on one line (`choices_line`) and sends the decision's schema
(aoi.models.schemas.compact_schema) with the call; a caller that holds only a recorded prompt (GRPO's samplers)
reads the same schema back from that line (`reply_schema`).
"""

from __future__ import annotations

import json
import re
from typing import Any

from aoi.models.schemas import OBSERVER, compact_schema
from aoi.tasks import FAULT_TYPES, SYSTEM_LEVELS, TaskType

COMPACT, STANDARD = "compact", "standard"
CHOICES = re.compile(r"^Answer choices \((\w+)\): (.*)$", re.MULTILINE)
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


def reply_schema(role: str, messages: list[dict] | None = None) -> dict | None:
    """Return the JSON schema of an Observer's reply read back from its prompt: the compact decision's for a compact
    prompt, else the standard decision's; None for other roles (their callers send the schema with the call).

    Backends fall back to it when a call comes without a schema (a sampler that holds only a recorded prompt).

    Example:
        >>> ask = [{"role": "user", "content": choices_line("mitigation", None)}]
        >>> [b["required"] for b in reply_schema("observer", ask)["anyOf"]], reply_schema("observer")["required"]
        ([['next', 'instruction'], ['next']], ['next'])
    """
    if str(getattr(role, "value", role)) != "observer":
        return None
    found = read_choices(messages or [])
    return compact_schema(*found) if found is not None else OBSERVER


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
