"""A small sed: addresses (N, $, /re/, ranges, !) with the s, p, d, q and = commands; -n, -e, -E, -i."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from aoi.shellsim.textutils import posix_regex
from aoi.shellsim.util import Usage, getopt, program, raw, read_inputs, result, split_lines, text


@dataclass
class Command:
    first: object  # None, a line number, "$" or a compiled regex
    last: object
    negate: bool
    op: str
    args: tuple = ()
    active: list = field(default_factory=lambda: [False])  # inside a range


def _regex(pattern: str, extended: bool, flags: int = 0) -> re.Pattern:
    try:
        return re.compile(posix_regex(pattern, extended), flags)
    except re.error:
        raise Usage("-e expression #1, char 0: unterminated address regex", hint=False) from None


def _split(script: str, i: int, delim: str, count: int) -> tuple[list[str], int]:
    """Read `count` parts ended by `delim` (an escaped delimiter is literal); return them and the index after."""
    parts, cur = [], []
    while len(parts) < count:
        if i >= len(script):
            raise Usage(f"-e expression #1, char {i}: unterminated `s' command", hint=False)
        c = script[i]
        if c == "\\" and script[i + 1:i + 2] == delim:
            cur.append(delim)
            i += 2
            continue
        if c == "\\":
            cur.append(script[i:i + 2])
            i += 2
            continue
        if c == delim:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(c)
        i += 1
    return parts, i


def _address(script: str, i: int, extended: bool) -> tuple[object, int]:
    m = re.match(r"\d+|\$", script[i:])
    if m:
        return (int(m[0]) if m[0] != "$" else "$"), i + m.end()
    if script[i:i + 1] == "/":
        (pattern,), i = _split(script, i + 1, "/", 1)
        flags = re.I if script[i:i + 1] == "I" else 0
        return _regex(pattern, extended, flags), i + bool(flags)
    return None, i


def parse_script(script: str, extended: bool) -> list[Command]:
    """Parse a sed script into commands."""
    cmds, i = [], 0
    while i < len(script):
        if script[i] in " \t\n;":
            i += 1
            continue
        first, i = _address(script, i, extended)
        last = None
        if first is not None and script[i:i + 1] == ",":
            last, i = _address(script, i + 1, extended)
        while script[i:i + 1] in (" ", "!"):
            i += 1
        negate = script[i - 1:i] == "!"
        op, i = script[i:i + 1], i + 1
        args: tuple = ()
        if op == "s":
            (pattern, replacement), i = _split(script, i + 1, script[i:i + 1], 2)
            m = re.match(r"[gpiI\d]*", script[i:])
            i += m.end()
            args = (_regex(pattern, extended, re.I if re.search("[iI]", m[0]) else 0), replacement, m[0])
        elif op not in ("p", "d", "q", "Q", "="):
            raise Usage(f"-e expression #1, char {i}: unknown command: `{op}'", hint=False)
        cmds.append(Command(first, last, negate, op, args))
    return cmds


def _hit(addr, n: int, line: str, last: bool) -> bool:
    return n == addr if isinstance(addr, int) else last if addr == "$" else bool(addr.search(line))


def _selected(c: Command, n: int, line: str, last: bool) -> bool:
    if c.first is None:
        return True
    if c.last is None:
        return _hit(c.first, n, line, last)
    if c.active[0]:
        ended = n >= c.last if isinstance(c.last, int) else _hit(c.last, n, line, last)
        c.active[0] = not ended
        return True
    if _hit(c.first, n, line, last):
        c.active[0] = not (isinstance(c.last, int) and c.last <= n)
        return True
    return False


def _replace(replacement: str, flags: str):
    """Return a re.sub function for a sed replacement (&, \\1-\\9, \\n) honouring g and a numeric flag."""
    nth, seen = int(re.sub(r"\D", "", flags) or 1), [0]

    def repl(m: re.Match) -> str:
        seen[0] += 1
        if seen[0] < nth:
            return m.group(0)
        return re.sub(r"\\(\d)|\\n|\\t|\\(.)|&", lambda e: (m.group(int(e[1])) or "") if e[1] else "\n"
                      if e[0] == "\\n" else "\t" if e[0] == "\\t" else e[2] if e[2] else m.group(0), replacement)
    return repl, (0 if "g" in flags else nth)


def run_script(cmds: list[Command], lines: list[str], quiet: bool) -> list[str]:
    """Run commands over the lines; return the output lines."""
    out = []
    for n, line in enumerate(lines, 1):
        last, printed = n == len(lines), not quiet
        for c in cmds:
            if _selected(c, n, line, last) == c.negate:
                continue
            if c.op == "p":
                out.append(line)
            elif c.op == "=":
                out.append(str(n))
            elif c.op == "d":
                printed = False
                break
            elif c.op == "s":
                repl, count = _replace(c.args[1], c.args[2])
                line, made = c.args[0].subn(repl, line, count=count)
                out += [line] if made and "p" in c.args[2] else []
            elif c.op in ("q", "Q"):
                return out + ([line] if printed and c.op == "q" else [])
        out += [line] if printed else []
    return out


@program("sed")
def sed(argv, ctx):
    """Edit a stream: sed [-n] [-E] [-i] [-e SCRIPT]... [SCRIPT] [FILE]..."""
    argv = [a if not a.startswith("-i") or a.startswith("--") else "-i" for a in argv]
    opts, names = getopt(argv, "nErsiu", valued="e", longs={"quiet": "n", "expression": "e", "in-place": "i",
                                                               "regexp-extended": "E", "silent": "n"})
    if not opts.get("e") and not names:
        raise Usage("Usage: sed [OPTION]... {script-only-if-no-other-script} [input-file]...", prefix=False,
                    hint=False)
    script = "\n".join(opts.get("e") or [names.pop(0)])
    extended, errors = "E" in opts or "r" in opts, []
    if "i" in opts:
        for name, data in read_inputs("sed", names, ctx, errors, "{prog}: can't read {name}: {reason}"):
            lines = run_script(parse_script(script, extended), split_lines(text(data)), "n" in opts)
            ctx.write(name, raw("".join(f"{line}\n" for line in lines)))
        return result("", errors, fail=2)
    inputs = read_inputs("sed", names, ctx, errors, "{prog}: can't read {name}: {reason}")
    lines = [line for _, data in inputs for line in split_lines(text(data))]
    out = run_script(parse_script(script, extended), lines, "n" in opts)
    return result("".join(f"{line}\n" for line in out), errors, fail=2)
