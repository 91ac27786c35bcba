"""What agents write and what the environment reads: JSON tool calls in, AIOpsLab action texts out."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

JSON_BLOCK = re.compile(r"```(?:json)?\s*(\{.*?\})\s*```", re.DOTALL)
STRING_OR_BRACE = re.compile(r'"[^"]*"?|[{}]')  # what _balanced counts; a string runs to the next quote
ANALYSIS_KEYS = ("system_level", "fault_type")


class FormatError(ValueError):
    """A model reply that is not one JSON object of the expected shape; the message says how to fix it."""


@dataclass
class ToolCall:
    """One tool call a role asked for."""

    tool: str
    args: dict = field(default_factory=dict)
    thought: str = ""

    def key(self) -> str:
        """Return a canonical text of the call (for repeat detection)."""
        return json.dumps([self.tool, self.args], sort_keys=True)


def extract_json(text: str) -> dict:
    """Return the first JSON object in a reply (fenced or bare); raise FormatError when there is none.

    Example:
        >>> extract_json('Plan: ```json\\n{"tool": "finish", "args": {}}\\n```')
        {'tool': 'finish', 'args': {}}
    """
    fenced = JSON_BLOCK.search(text)
    candidates = [fenced.group(1)] if fenced else []
    start = text.find("{")
    if start >= 0:
        candidates.append(_balanced(text, start))
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except (json.JSONDecodeError, TypeError):
            continue
        if isinstance(value, dict):
            return value
    raise FormatError("your reply must contain one JSON object, e.g. "
                      '{"thought": "...", "tool": "exec_shell", "args": {"command": "kubectl get pods -n NS"}}')


def _balanced(text: str, start: int) -> str:
    """Return the text from start up to the brace that closes it (ignoring braces inside strings).

    A string ends at the next quote, escaped or not: replies have always been cut this way (a reply whose strings
    hold escaped quotes and braces may be cut short, and then fails to parse).

    Example:
        >>> _balanced('say {"a": "}", "b": {}} and more', 4)
        '{"a": "}", "b": {}}'
    """
    depth = 0
    for token in STRING_OR_BRACE.finditer(text, start):
        depth += (token.group() == "{") - (token.group() == "}")
        if depth == 0:
            return text[start:token.end()]
    return text[start:]


def parse_tool_call(text: str, tools: list[str]) -> ToolCall:
    """Parse a role's reply into a tool call among `tools`."""
    data = extract_json(text)
    tool, args = data.get("tool"), data.get("args", {})
    if tool not in tools:
        raise FormatError(f"unknown tool {tool!r}; use one of: {', '.join(tools)}")
    if not isinstance(args, dict):
        raise FormatError('"args" must be an object, e.g. {"command": "..."}')
    return ToolCall(tool, args, str(data.get("thought", "")))


def env_action(api: str, *args) -> str:
    """Render an environment action in AIOpsLab's format: one fenced block, positional arguments.

    Example:
        >>> env_action("get_logs", "ns", "geo")
        "```\\nget_logs('ns', 'geo')\\n```"
        >>> print(env_action("exec_shell", r'kubectl get cm c -o jsonpath="{.data.a\\.json}"'))
        ```
        exec_shell("kubectl get cm c -o jsonpath=\\"{.data.a\\.json}\\"")
        ```
    """
    if api == "exec_shell":
        # AIOpsLab's parser undoes only \" (and \'), so backslashes must go through as they are: doubling them
        # would hand the shell two where the command had one.
        command = str(args[0]).replace('"', '\\"')
        return f'```\nexec_shell("{command}")\n```'
    return "```\n" + f"{api}({', '.join(repr(a) for a in args)})" + "\n```"


def normalize_answer(task_type: str, answer):
    """Coerce a model's answer into the submit argument the task type expects (never raises, never guesses).

    A missing or unreadable answer stays unanswered ("" / [] / {}), which the scorer judges wrong: an agent that
    could not answer is never credited with a default.

    Example:
        >>> normalize_answer("detection", "yes, the geo service"), normalize_answer("detection", None)
        ('Yes', '')
        >>> normalize_answer("localization", "geo, rate"), normalize_answer("analysis", {"fault_type": "Code Defect"})
        (['geo', 'rate'], {'fault_type': 'Code Defect'})
    """
    if task_type == "mitigation":
        return None
    if task_type == "detection":
        text = str(answer).strip() if answer is not None else ""
        lower = text.lower()
        return "Yes" if lower.startswith(("yes", "true", "1")) else "No" if lower.startswith(("no", "false", "0")) \
            else text
    if task_type == "localization":
        if isinstance(answer, str):
            return [a.strip() for a in answer.split(",") if a.strip()]
        return [str(a) for a in answer] if isinstance(answer, (list, tuple)) else []
    if isinstance(answer, dict):
        return {key: str(answer[key]) for key in ANALYSIS_KEYS if answer.get(key)}
    return {}


def submit_action(task_type: str, answer) -> str:
    """Render the submit action for a task type from an answer."""
    value = normalize_answer(task_type, answer)
    return env_action("submit") if task_type == "mitigation" else env_action("submit", value)
