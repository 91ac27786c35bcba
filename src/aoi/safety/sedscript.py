"""Scan a sed script command by command and refuse the commands and flags that run programs or touch files."""

from __future__ import annotations

from aoi.safety.shellwords import Refused

PLAIN = set("{}=dDgGhHlnNpPqQxzF")  # commands that only edit the pattern and hold spaces
FORBIDDEN = set("erRwW")  # e runs a command; r/R read files; w/W write files
S_FLAGS = set("gpiImM0123456789")  # substitution flags; w (write) and e (execute) are left out on purpose
ENDS = set(";\n} \t#")
INSTEAD = "use only s///, y///, p, d and the other commands that edit text"


def check(script: str) -> None:
    """Raise Refused if a sed script could run a command, read a file or write one.

    Example:
        >>> check("s/error/ERROR/g; /^$/d")
        >>> check("s/a/b/w /tmp/out")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        aoi.safety.shellwords.Refused: The sed substitution flag `w` writes files or runs commands, which is ...
    """
    i = 0
    while i < len(script):
        i = _skip(script, i, " \t\n;")
        if i >= len(script):
            return
        i = _skip(script, _address(script, i), " \t!")
        i = _command(script, i)


def _command(s: str, i: int) -> int:
    """Check the command at s[i]; return the index after it."""
    cmd = s[i] if i < len(s) else ""
    if cmd in FORBIDDEN or not cmd:
        raise Refused(f"The sed command `{cmd or '(none)'}` reads or writes files or runs commands (or is missing), "
                      f"which is refused — {INSTEAD}.")
    if cmd in "#aic":
        return _line_end(s, i + 1)
    if cmd in "btT:v":
        return _until(s, i + 1, ";\n")
    if cmd in "sy":
        return _substitute(s, i + 1) if cmd == "s" else _delimited(s, i + 1, 2)
    if cmd in PLAIN:
        return _skip(s, i + 1, "0123456789 \t")
    raise Refused(f"The sed command `{cmd}` is not one AOI knows to be safe — {INSTEAD}.")


def _address(s: str, i: int) -> int:
    """Skip one address or an address range."""
    i = _one_address(s, i)
    return _one_address(s, i + 1) if i < len(s) and s[i] == "," else i


def _one_address(s: str, i: int) -> int:
    """Skip a line number, $, /regex/, \\cregexc, first~step, +N or ~N."""
    if i >= len(s):
        return i
    if s[i] == "/" or s[i] == "\\":
        start = i + (1 if s[i] == "\\" else 0)
        return _skip(s, _delimited(s, start, 1), "IM")
    if s[i] == "$":
        return i + 1
    return _skip(s, i, "0123456789~+")


def _substitute(s: str, i: int) -> int:
    """Skip s/regex/replacement/flags, refusing the w and e flags."""
    i = _delimited(s, i, 2)
    while i < len(s) and s[i] not in ENDS:
        if s[i] not in S_FLAGS:
            raise Refused(f"The sed substitution flag `{s[i]}` writes files or runs commands, which is refused — "
                          f"{INSTEAD}.")
        i += 1
    return i


def _delimited(s: str, i: int, parts: int) -> int:
    """Skip `parts` delimited fields starting at the delimiter s[i] (backslash escapes the delimiter)."""
    if i >= len(s) or s[i] in "\n\\":
        raise Refused(f"The sed script has a malformed delimited field — {INSTEAD}.")
    delim, i = s[i], i + 1
    for _ in range(parts):
        while i < len(s) and s[i] != delim:
            i += 2 if s[i] == "\\" else 1
        if i >= len(s):
            raise Refused(f"The sed script has an unterminated `{delim}` field — close it.")
        i += 1
    return i


def _skip(s: str, i: int, chars: str) -> int:
    while i < len(s) and s[i] in chars:
        i += 1
    return i


def _until(s: str, i: int, stops: str) -> int:
    while i < len(s) and s[i] not in stops:
        i += 1
    return i


def _line_end(s: str, i: int) -> int:
    """Skip text to the end of the line, following backslash-newline continuations (a, i, c and comments)."""
    while i < len(s) and s[i] != "\n":
        i += 2 if s[i] == "\\" else 1
    return i
