"""What agents write and what the environment reads: JSON tool calls in, AIOpsLab action texts out."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from aoi.tasks import TaskType, task

JSON_BLOCK = re.compile(r"```(?:json)?\s*(\{.*?\})\s*```", re.DOTALL)
STRING_OR_BRACE = re.compile(r'"[^"]*"?|[{}]')  # what _balanced counts; a string runs to the next quote


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


def submit_action(task_type: str, answer) -> str:
    """Render the submit action for a task type from a model's answer, normalised as the task type's declaration
    says (aoi.tasks): a missing or unreadable answer stays unanswered ("" / [] / {}), which the scorer judges wrong,
    so an agent that could not answer is never credited with a default.

    Example:
        >>> print(submit_action("detection", "yes, the geo service"))
        ```
        submit('Yes')
        ```
        >>> submit_action("localization", "geo, rate"), submit_action("mitigation", "done")
        ("```\\nsubmit(['geo', 'rate'])\\n```", '```\\nsubmit()\\n```')
    """
    value = task(task_type).normalise(answer)
    return env_action("submit") if task_type == TaskType.MITIGATION else env_action("submit", value)
