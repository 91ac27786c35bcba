"""Parse an agent's reply into one action, with AIOpsLab's ResponseParser rules (reference/aiopslab.md 1.4).

The rules are the interface, quirks included: exactly one fenced block matched by the regex below (a language tag,
an indented fence or a second block fails), the API name is the text before the first "(", the arguments are the
text between the first "(" and the last ")". exec_shell takes one quoted string; every other API is read with `ast`
literals. Error texts are ours, but they keep AIOpsLab's prefixes, which agents react to.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any

FENCE = re.compile(r"```\s*\n(.*?)\n```", re.DOTALL)
CONTEXT = re.compile(r"(?:```[\s\S]*?```)|(.*?)(?:(?=```)|$)", re.DOTALL)
PREFIX = "Error parsing response: "
FORMAT_FAILURE = PREFIX + """Format validation failure. Reply with exactly one action inside one fenced code block: \
three backticks alone on their line (no language tag, no indentation), the call, three backticks alone on their line.
Example 1:
I will list the files first.
```
exec_shell("ls")
```

Example 2:
```
exec_shell("kubectl get services --all-namespaces")
```"""


class ParseError(ValueError):
    """A reply that is not one well-formed action; `str(error)` is the observation to show the agent."""


@dataclass
class ParsedAction:
    """One action: the API name, its positional and keyword arguments, and the text around the block."""

    api: str
    args: list = field(default_factory=list)
    kwargs: dict = field(default_factory=dict)
    context: list[str] = field(default_factory=list)


def parse(response: str) -> ParsedAction:
    """Parse a reply into a ParsedAction; raise ParseError with the observation text otherwise.

    Example:
        >>> parse('I will look.\\n```\\nexec_shell("kubectl get pods -n x")\\n```')
        ParsedAction(api='exec_shell', args=['kubectl get pods -n x'], kwargs={}, context=['I will look.'])
        >>> parse('```\\nsubmit(["geo"])\\n```').args
        [['geo']]
    """
    if len(FENCE.findall(response)) != 1:
        raise ParseError(FORMAT_FAILURE)
    code = codeblock(response)
    api = api_name(code)
    args, kwargs = arguments(code, shell=api == "exec_shell")
    return ParsedAction(api, args, kwargs, context(response))


def codeblock(response: str) -> str:
    """Return the lines between the first two lines that contain three backticks."""
    lines = response.split("\n")
    fences = [i for i, line in enumerate(lines) if "```" in line]
    return "\n".join(lines[fences[0] + 1:fences[1]]) if len(fences) >= 2 else ""


def context(response: str) -> list[str]:
    """Return the non-empty stripped texts outside fenced blocks."""
    return [m.strip() for m in CONTEXT.findall(response) if m.strip()]


def api_name(code: str) -> str:
    """Return the text before the first "(", stripped ("" when there is none)."""
    first = code.find("(")
    return code[:first].strip() if first != -1 else ""


def arguments(code: str, shell: bool = False) -> tuple[list, dict]:
    """Return (args, kwargs) from the text between the first "(" and the last ")"."""
    first, last = code.find("("), code.rfind(")")
    if first == -1 or last == -1:
        raise ParseError(PREFIX + "no API call found; write one call such as get_logs(\"ns\", \"service\").")
    text = code[first + 1:last].strip()
    if not text:
        return [], {}
    return ([shell_command(text)], {}) if shell else literal_arguments(text)


def shell_command(text: str) -> str:
    """Return exec_shell's command: one quoted string, optionally written `command=...`.

    As in AIOpsLab, every "command=" is removed, all outer quote characters are stripped and \\" and \\' are
    unescaped; anything else (a second argument such as a timeout, a variable) is refused.

    Example:
        >>> shell_command("command='kubectl get pods'")
        'kubectl get pods'
    """
    if text.startswith("command="):
        text = text.replace("command=", "").strip()
    if len(text) >= 1 and text[0] == text[-1] and text[0] in "\"'":
        return text.strip(text[0]).replace('\\"', '"').replace("\\'", "'")
    raise ParseError(PREFIX + "exec_shell commands must be quoted strings: pass one string and nothing else, "
                              "e.g. exec_shell(\"kubectl get pods -A\").")


def literal_arguments(text: str) -> tuple[list, dict]:
    """Read positional and keyword arguments made of literals (strings, numbers, lists, dicts, True/False/None)."""
    try:
        call = ast.parse(f"func({text})").body[0].value
        args = [[literal(e) for e in a.elts] if isinstance(a, ast.Tuple) else literal(a) for a in call.args]
        return args, {kw.arg: literal(kw.value) for kw in call.keywords}
    except Exception as exc:  # noqa: BLE001 - AIOpsLab turns any failure here into a parse error, and so do we
        raise ParseError(PREFIX + f"the arguments are not plain literals ({exc}); use strings, numbers, "
                                  f"lists and dicts only.") from None


def literal(node: ast.AST) -> Any:
    """Return the value of a literal node: constants, lists, dicts and the names True, False, None."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.List):
        return [literal(e) for e in node.elts]
    if isinstance(node, ast.Dict):
        return {literal(k): literal(v) for k, v in zip(node.keys, node.values)}
    if isinstance(node, ast.Name) and node.id in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[node.id]
    raise ValueError(f"unsupported expression {type(node).__name__}")
