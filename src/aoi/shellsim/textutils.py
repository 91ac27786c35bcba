"""Text utilities: grep, head, tail, wc, sort, uniq, cut, tr."""

from __future__ import annotations

import re

from aoi.shellsim.context import ExecContext
from aoi.shellsim.util import Opts, Usage, getopt, program, read_inputs, result, split_lines, text, unescape

_CLASSES = {"alpha": "a-zA-Z", "digit": "0-9", "alnum": "a-zA-Z0-9", "upper": "A-Z", "lower": "a-z",
            "space": r" \t\n\r\f\v", "blank": r" \t", "punct": r"!-/:-@\[-`{-~", "xdigit": "0-9A-Fa-f",
            "word": r"\w", "cntrl": r"\x00-\x1f"}


def posix_regex(pattern: str, extended: bool = False) -> str:
    """Translate a POSIX basic (or extended) regular expression into Python syntax, best effort.

    Example:
        >>> posix_regex(r"a\\(b\\)*c+[[:digit:]]")
        'a(b)*c\\\\+[0-9]'
    """
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            n = pattern[i + 1]
            out.append(r"\b" if n in "<>" else n if n in "|+?(){}" and not extended else "\\" + n)
            i += 2
            continue
        if c == "[":
            j = _bracket_end(pattern, i)
            out.append(_bracket(pattern[i:j]))
            i = j
            continue
        out.append("\\" + c if c in "|+?(){}" and not extended else c)
        i += 1
    return "".join(out)


def _bracket_end(p: str, i: int) -> int:
    j = i + 1 + (p[i + 1:i + 2] == "^")
    j += p[j:j + 1] == "]"
    while j < len(p) and p[j] != "]":
        j = p.find(":]", j) + 2 if p.startswith("[:", j) and ":]" in p[j:] else j + 1
    return j + 1 if j < len(p) else len(p)


def _bracket(b: str) -> str:
    if not b.endswith("]") or len(b) < 3:
        return re.escape(b)
    inner = b[1:-1].replace("\\", "\\\\")
    inner = re.sub(r"\[:(\w+):\]", lambda m: _CLASSES.get(m[1], ""), inner)
    return "[" + inner.replace("[", "\\[") + "]"


def _grep_regex(patterns: list[str], opts: Opts) -> re.Pattern:
    parts = [re.escape(p) if "F" in opts else posix_regex(p, "E" in opts) for p in patterns]
    expr = "|".join(f"(?:{p})" for p in parts)
    expr = rf"(?<!\w)(?:{expr})(?!\w)" if "w" in opts else expr
    expr = rf"^(?:{expr})$" if "x" in opts else expr
    return re.compile(expr, re.IGNORECASE if "i" in opts else 0)


def _grep_inputs(names: list[str], opts: Opts, ctx: ExecContext, errors: list[str]) -> list[tuple[str, bytes]]:
    if not ("r" in opts or "R" in opts):
        return read_inputs("grep", names, ctx, errors)
    out = []
    for name in names or ["."]:
        if ctx.is_file(name) or not ctx.exists(name):
            out += read_inputs("grep", [name], ctx, errors)
            continue
        base = ctx.path(name).rstrip("/")
        for p in (p for p in ctx.tree() if p.startswith(base + "/") and ctx.is_file(p)):
            out.append((p[len(base) + 1:] if not names else name.rstrip("/") + "/" + p[len(base) + 1:], ctx.files[p]))
    return out


def _grep_file(name: str | None, data: bytes, rx: re.Pattern, opts: Opts) -> tuple[list[str], int]:
    """Return the output lines and the match count for one input."""
    lines, invert, out = split_lines(text(data)), "v" in opts, []
    hits = [n for n, line in enumerate(lines) if bool(rx.search(line)) != invert]
    hits = hits[:int(opts.value("m"))] if opts.get("m") else hits
    before, after = int(opts.value("B", opts.value("C", 0))), int(opts.value("A", opts.value("C", 0)))
    shown, last = sorted({k for n in hits for k in range(max(n - before, 0), min(n + after + 1, len(lines)))}), None
    for n in shown:
        if last is not None and n > last + 1 and (before or after):
            out.append("--")
        sep, last = ":" if n in hits else "-", n
        prefix = (f"{name}{sep}" if name is not None else "") + (f"{n + 1}{sep}" if "n" in opts else "")
        found = [m.group(0) for m in rx.finditer(lines[n]) if m.group(0)] if "o" in opts and not invert else [lines[n]]
        out.extend(prefix + f for f in (found if n in hits else [lines[n]]))
    return out, len(hits)


@program("grep", "egrep", "fgrep", usage=2)
def grep(argv, ctx):
    """Print lines matching patterns (-i -v -c -n -E -F -o -q -w -x -r -l -L -h -H -e -A -B -C -m -s)."""
    longs = {"ignore-case": "i", "invert-match": "v", "count": "c", "line-number": "n", "quiet": "q", "silent": "q",
             "recursive": "r", "files-with-matches": "l", "extended-regexp": "E", "fixed-strings": "F", "regexp": "e"}
    opts, names = getopt(argv, "ivcnEFoqwxrRlLhHsIaZ", valued="eABCmf", longs=longs)
    opts.setdefault({"egrep": "E", "fgrep": "F"}.get(argv[0].rsplit("/", 1)[-1], "G"), 1)
    if "e" not in opts and not names:
        raise Usage("Usage: grep [OPTION]... PATTERNS [FILE]...", prefix=False)
    patterns = [p for e in opts.get("e") or [names.pop(0)] for p in e.split("\n")]
    try:
        rx = _grep_regex(patterns, opts)
    except re.error as e:
        reason = "Unmatched ( or \\(" if "parenthes" in str(e) else "Invalid regular expression"
        return result("", [f"grep: {reason}"], code=2)
    errors, out, matched = [], [], False
    inputs = _grep_inputs(names, opts, ctx, errors)
    named = ("H" in opts or len(inputs) > 1 or "r" in opts or "R" in opts) and "h" not in opts
    for name, data in inputs:
        shown = "(standard input)" if name == "-" else name
        lines, count = _grep_file(shown if named else None, data, rx, opts)
        matched |= count > 0
        if "q" in opts and matched:
            return result("", code=0)
        if "l" in opts or "L" in opts:
            out += [shown] if (count > 0) == ("l" in opts) else []
        elif "c" in opts:
            out.append(f"{shown}:{count}" if named else str(count))
        else:
            out += lines
    status = 2 if errors and not ("q" in opts and matched) else 0 if matched else 1
    return result("".join(f"{line}\n" for line in out), [] if "s" in opts else errors, code=status)


def _count_option(argv: list[str]) -> list[str]:
    """Turn the obsolete `head -5` / `tail -5` / `tail +5` forms into `-n 5` / `-n +5`."""
    out = [argv[0]]
    for arg in argv[1:]:
        obsolete = re.fullmatch(r"[-+]\d+", arg) and out[-1] not in ("-n", "-c", "--lines", "--bytes")
        out.append(f"-n{arg[1:] if arg[0] == '-' else arg}" if obsolete else arg)
    return out


def _head_tail(argv: list[str], ctx: ExecContext, pick) -> object:
    opts, names = getopt(_count_option(argv), "qvfF", valued="nc", longs={"lines": "n", "bytes": "c", "follow": "f"})
    prog, errors, out = argv[0].rsplit("/", 1)[-1], [], []
    count = opts.value("c") or opts.value("n", "10")
    if not re.fullmatch(r"[-+]?\d+", count):
        raise Usage(f"invalid number of {'bytes' if opts.get('c') else 'lines'}: '{count}'", hint=False)
    inputs = read_inputs(prog, names, ctx, errors, "{prog}: cannot open '{name}' for reading: {reason}")
    for n, (name, data) in enumerate(inputs):
        if (len(inputs) > 1 or "v" in opts) and "q" not in opts:
            out.append(f"{'' if n == 0 else chr(10)}==> {'standard input' if name == '-' else name} <==\n".encode())
        units = data if opts.get("c") else [line + b"\n" for line in data.split(b"\n")]
        if not opts.get("c") and data.split(b"\n")[-1:] == [b""]:
            units = units[:-1]
        elif not opts.get("c") and units:
            units[-1] = units[-1][:-1]
        picked = pick(units, count)
        out.append(bytes(picked) if opts.get("c") else b"".join(picked))
    return result(b"".join(out), errors)


@program("head")
def head(argv, ctx):
    """Print the first lines (-n N, -N, -n -N: all but the last N) or bytes (-c N)."""
    def pick(units, count):
        n = int(count)
        return units[:n] if n >= 0 else units[:n or None]
    return _head_tail(argv, ctx, pick)


@program("tail")
def tail(argv, ctx):
    """Print the last lines (-n N, -N, -n +N: from line N on) or bytes (-c N); -f returns at once."""
    def pick(units, count):
        n = int(count)
        if count.startswith("+"):
            return units[max(n - 1, 0):]
        return units[max(len(units) - abs(n), 0):] if n else units[:0]
    return _head_tail(argv, ctx, pick)


@program("wc")
def wc(argv, ctx):
    """Count lines, words and bytes (-l -w -c -m)."""
    opts, names = getopt(argv, "lwcmL", longs={"lines": "l", "words": "w", "bytes": "c", "chars": "m"})
    keys = [k for k in "lwmc" if k in opts] or ["l", "w", "c"]
    errors = []
    inputs = read_inputs("wc", names, ctx, errors)
    rows = [([{"l": d.count(b"\n"), "w": len(d.split()), "c": len(d), "m": len(text(d))}[k] for k in keys],
             "" if n == "-" and not names else n) for n, d in inputs]
    if len(rows) > 1:
        rows.append(([sum(r[0][i] for r in rows) for i in range(len(keys))], "total"))
    width = 1 if len(keys) == 1 and len(rows) == 1 else 7 if "-" in [n for n, _ in inputs] else \
        max((len(str(v)) for r, _ in rows for v in r), default=1)
    lines = [" ".join(f"{v:>{width}}" for v in values) + (f" {name}" if name else "") for values, name in rows]
    return result("".join(f"{line}\n" for line in lines), errors)


def _sort_key(opts: Opts):
    spec = opts.value("k")
    sep = opts.value("t")
    m = re.fullmatch(r"(\d+)(?:\.\d+)?([a-zA-Z]*)(?:,(\d+)(?:\.\d+)?[a-zA-Z]*)?", spec or "1")
    if not m:
        raise Usage(f"invalid number at field start: invalid count at start of '{spec}'", code=2)
    start, end = int(m[1]) - 1, int(m[3]) if m[3] else None
    numeric, human = "n" in opts or "n" in m[2] or "g" in opts, "h" in opts or "h" in m[2]

    def key(line: str):
        fields = line.split(sep) if sep else line.split()
        part = (sep or " ").join(fields[start:end]) if spec else line
        part = part.lower() if "f" in opts else part
        if numeric or human:
            num = re.match(r"\s*(-?\d+(?:\.\d+)?)([KMGTP]?)", part)
            factor = 1024 ** " KMGTP".index(num[2] or " ") if num and human else 1
            return (float(num[1]) * factor if num else 0.0, "")
        return (0.0, part)
    return key


@program("sort", usage=2)
def sort(argv, ctx):
    """Sort lines (-n -h -r -u -f -k N[,M] -t SEP)."""
    longs = {"numeric-sort": "n", "reverse": "r", "unique": "u", "key": "k", "human-numeric-sort": "h"}
    opts, names = getopt(argv, "nrufhbsgVM", valued="kto", longs=longs)
    errors = []
    lines = [line for _, d in read_inputs("sort", names, ctx, errors, "{prog}: cannot read: {name}: {reason}")
             for line in split_lines(text(d))]
    key = _sort_key(opts)
    ordered = sorted(lines, key=(lambda s: (key(s), s)) if "s" not in opts else key, reverse="r" in opts)
    if "u" in opts:
        ordered = [s for i, s in enumerate(ordered) if i == 0 or key(s) != key(ordered[i - 1])]
    return result("".join(f"{s}\n" for s in ordered), errors, fail=2)


@program("uniq")
def uniq(argv, ctx):
    """Collapse adjacent equal lines (-c count, -d only repeated, -u only unique, -i ignore case)."""
    opts, names = getopt(argv, "cdui", longs={"count": "c", "repeated": "d", "unique": "u", "ignore-case": "i"})
    errors = []
    groups: list[list[str]] = []
    for line in split_lines(text(b"".join(d for _, d in read_inputs("uniq", names[:1], ctx, errors)))):
        same = groups and (groups[-1][0].lower() == line.lower() if "i" in opts else groups[-1][0] == line)
        groups[-1].append(line) if same else groups.append([line])
    groups = [g for g in groups if ("d" not in opts or len(g) > 1) and ("u" not in opts or len(g) == 1)]
    return result("".join(f"{len(g):>7} {g[0]}\n" if "c" in opts else f"{g[0]}\n" for g in groups), errors)


def _ranges(spec: str) -> list[tuple[int, int]]:
    out = []
    for part in spec.split(","):
        m = re.fullmatch(r"(\d*)(-?)(\d*)", part)
        if not m or not (m[1] or m[3]):
            raise Usage("invalid field range" if m else f"invalid byte/character position '{part}'")
        lo = int(m[1] or 1)
        out.append((lo, int(m[3]) if m[3] else (10**9 if m[2] else lo)))
    return out


@program("cut")
def cut(argv, ctx):
    """Select fields (-f LIST with -d DELIM, -s) or characters (-c LIST) from each line."""
    opts, names = getopt(argv, "sn", valued="dfcb", longs={"delimiter": "d", "fields": "f", "characters": "c"})
    spec = opts.value("f") or opts.value("c") or opts.value("b")
    if not spec:
        raise Usage("you must specify a list of bytes, characters, or fields")
    ranges, delim, errors, out = _ranges(spec), opts.value("d", "\t"), [], []
    keep = lambda n: any(lo <= n <= hi for lo, hi in ranges)  # noqa: E731
    for line in split_lines(text(b"".join(d for _, d in read_inputs("cut", names, ctx, errors)))):
        if not opts.get("f"):
            out.append("".join(ch for n, ch in enumerate(line, 1) if keep(n)))
        elif delim in line:
            out.append(delim.join(f for n, f in enumerate(line.split(delim), 1) if keep(n)))
        elif "s" not in opts:
            out.append(line)
    return result("".join(f"{line}\n" for line in out), errors)


def _tr_set(spec: str) -> str:
    classes = _CLASSES | {"space": " \t\n\r\f\v", "blank": " \t"}
    spec = re.sub(r"\[:(\w+):\]", lambda m: classes.get(m[1], ""), spec)
    spec = unescape(spec, printf=True)[0]
    out, i = [], 0
    while i < len(spec):
        if i + 2 < len(spec) and spec[i + 1] == "-":
            out.extend(chr(c) for c in range(ord(spec[i]), ord(spec[i + 2]) + 1))
            i += 3
        else:
            out.append(spec[i])
            i += 1
    return "".join(out)


@program("tr")
def tr(argv, ctx):
    """Translate (tr SET1 SET2), delete (-d, -c: the complement) or squeeze (-s) characters from stdin."""
    opts, sets = getopt(argv, "dscC")
    if not sets:
        raise Usage("missing operand")
    data, first = text(ctx.stdin), _tr_set(sets[0])
    if "d" in opts:
        complement = "c" in opts or "C" in opts
        data = "".join(ch for ch in data if (ch in first) == complement)
    elif len(sets) > 1:
        second = _tr_set(sets[1])
        second = (second + second[-1:] * len(first))[:len(first)] if second else ""
        data = data.translate(str.maketrans(first, second))
    squeeze = _tr_set(sets[-1]) if "s" in opts else ""
    if squeeze:
        data = re.sub("([" + re.escape(squeeze) + r"])\1+", r"\1", data)
    return result(data)
