"""Split a command into pipeline stages without a shell, refusing every shell construct a shell would act on."""

from __future__ import annotations

import re
import shlex

MAX_LENGTH = 100_000  # characters; room for a ConfigMap patch, not for a payload
MAX_STAGES = 5  # kubectl plus four filters: longer pipelines are almost always an attempt to smuggle something
OPERATORS = {"&&": "`&&`", "||": "`||`", ";": "`;`", "&": "`&`", ">": "a `>` redirect", "<": "a `<` redirect",
             "(": "`(`", ")": "`)`", "`": "a backquote", "\n": "a newline", "\r": "a carriage return"}
EXPANSION = re.compile(r"\$[A-Za-z0-9_{(@*#?$!-]")  # what a shell would expand outside single quotes
BRACES = re.compile(r"\{[^\s{}]*,[^\s{}]*\}")  # brace expansion: {get,delete}
INSTEAD = "run one kubectl command per action, optionally piped into text filters, and quote arguments that need it"


class Refused(ValueError):
    """A command the policy will not run; the message is the one-sentence reason."""


def scan(command: str) -> str:
    """Return the command as a shell sees its structure: quoted or escaped characters masked as `_`.

    `$` and backquotes stay visible inside double quotes, where a shell still expands them.

    Example:
        >>> scan("grep 'a|b' | wc")
        "grep '___' | wc"
    """
    out, quote, escaped = [], "", False
    for ch in command:
        if escaped:
            out.append("\n" if ch == "\n" else "_")  # a line continuation is still a line break to us
            escaped = False
        elif quote == "'" or (quote == '"' and ch not in '"\\$`'):
            out.append(ch if ch == quote else "_")
            quote = "" if ch == quote else quote
        elif ch == "\\":
            escaped = True
            out.append("_")
        else:
            out.append(ch)
            quote = (ch if ch in "'\"" else "") if not quote else ("" if ch == quote else quote)
    if quote or escaped:
        raise Refused(f"The command ends inside a quote or after a backslash — close every quote and {INSTEAD}.")
    return "".join(out)


def _refuse_syntax(command: str, masked: str) -> None:
    """Refuse control characters, operators and expansions that appear outside quotes."""
    if any(ord(ch) < 32 and ch not in "\t\n" or ord(ch) == 127 for ch in command):
        raise Refused(f"The command contains a control character — remove it and {INSTEAD}.")
    if any(EXPANSION.match(command, i) for i, ch in enumerate(masked) if ch == "$"):
        raise Refused(f"Shell expansion (`$`, `$(`, `${{` or backquotes) is refused — write the value out and "
                      f"{INSTEAD}.")
    for token, name in OPERATORS.items():
        if token in masked:
            raise Refused(f"Shell syntax ({name}) is refused because commands never run in a shell — {INSTEAD}.")
    if BRACES.search(masked):
        raise Refused(f"Brace expansion such as `{{a,b}}` is refused — write each word out and {INSTEAD}.")


def split(command: str) -> list[list[str]]:
    """Split a command on unquoted pipes into argv lists (shlex, POSIX rules); raise Refused on shell syntax.

    Example:
        >>> split("kubectl get pods -n x | grep -v Running")
        [['kubectl', 'get', 'pods', '-n', 'x'], ['grep', '-v', 'Running']]
    """
    if len(command) > MAX_LENGTH:
        raise Refused(f"A command of {len(command)} characters is refused (at most {MAX_LENGTH}) — patch in smaller "
                      "steps.")
    masked = scan(command)
    _refuse_syntax(command, masked)
    cuts = [i for i, ch in enumerate(masked) if ch == "|"]
    parts = [command[a + 1:b] for a, b in zip([-1, *cuts], [*cuts, len(command)])]
    if len(parts) > MAX_STAGES:
        raise Refused(f"A pipeline of {len(parts)} stages is refused (at most {MAX_STAGES}) — split the work into "
                      "several smaller commands.")
    stages = [shlex.split(part) for part in parts]
    if any(not stage for stage in stages):
        raise Refused(f"The command has an empty pipeline stage — {INSTEAD}.")
    return stages
