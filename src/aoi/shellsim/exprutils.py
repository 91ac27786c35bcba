"""Expression and command utilities: printf, test/[, seq, xargs, timeout."""

from __future__ import annotations

import re

from aoi.shellsim.context import ExecContext, ExecResult
from aoi.shellsim.limits import GENERATED_LIMIT, size
from aoi.shellsim.util import Usage, getopt, program, result, run_command, split_lines, text, unescape

_FMT = re.compile(r"%([-+ #0]*)(\d+)?(?:\.(\d+))?([sdiouxXfFeEgGcb%])")
EXHAUSTED = f"memory exhausted (the simulated shell's generators make at most {size(GENERATED_LIMIT)}: {{fix}})"
_TEST_ERRORS = {
    "dash": {"missing": "missing ]", "int": "Illegal number: {v}", "unary": "{v}: unexpected operator",
             "binary": "{v}: unexpected operator", "many": "{v}: unexpected operator"},
    "bash": {"missing": "missing `]'", "int": "{v}: integer expression expected",
             "unary": "{v}: unary operator expected",
             "binary": "{v}: binary operator expected", "many": "too many arguments"},
    "gnu": {"missing": "missing ']'", "int": "invalid integer '{v}'", "unary": "'{v}': unary operator expected",
            "binary": "'{v}': binary operator expected", "many": "extra argument '{v}'"}}


def printf_format(fmt: str, args: list[str], errors: list[str]) -> str:
    """Format like printf(1): escapes, %s %d %x %f %c %b, the format reused while arguments remain.

    Example:
        >>> printf_format("%s=%03d\\n", ["a", "7", "b"], [])
        'a=007\\nb=000\\n'
    """
    fmt, args, out = unescape(fmt, printf=True)[0], list(args), []
    while True:
        pos, consumed = 0, False
        for m in _FMT.finditer(fmt):
            out.append(fmt[pos:m.start()])
            pos = m.end()
            if m[4] == "%":
                out.append("%")
                continue
            consumed = True
            out.append(_convert(m, args.pop(0) if args else None, errors))
        out.append(fmt[pos:])
        if not args or not consumed:
            return "".join(out)


def _convert(m: re.Match, arg: str | None, errors: list[str]) -> str:
    flags, width, prec, conv = m[1], m[2] or "", f".{m[3]}" if m[3] is not None else "", m[4]
    if max(int(width or 0), int(m[3] or 0)) > GENERATED_LIMIT:
        raise Usage(EXHAUSTED.format(fix="use a smaller width or precision"), hint=False)
    if conv in "sb":
        value = unescape(arg or "")[0] if conv == "b" else arg or ""
        return f"%{flags}{width}{prec}s" % value
    if conv == "c":
        return f"%{flags}{width}s" % (arg or "")[:1]
    try:
        number = ord(arg[1]) if arg and arg[0] in "'\"" and len(arg) > 1 else (float if conv in "fFeEgG" else
                                                                                   lambda a: int(a, 0))(arg or "0")
    except ValueError:
        errors.append(f"printf: '{arg}': expected a numeric value")
        number = 0
    return f"%{flags}{width}{prec}{'d' if conv in 'iu' else conv}" % number


@program("printf")
def printf(argv, ctx):
    """Format and print arguments."""
    if len(argv) < 2:
        raise Usage("missing operand")
    errors = []
    return result(printf_format(argv[1], argv[2:], errors), errors)


@program("seq")
def seq(argv, ctx):
    """Print a sequence: seq LAST | FIRST LAST | FIRST INCR LAST (-s SEP, -w equal width)."""
    opts, nums = getopt(argv, "w", valued="sf", longs={"separator": "s"})
    try:
        values = [float(n) if "." in n else int(n) for n in nums]
    except ValueError:
        raise Usage(f"invalid floating point argument: '{nums[0]}'") from None
    if not 1 <= len(values) <= 3:
        raise Usage("missing operand" if not values else f"extra operand '{nums[3]}'")
    first, step, last = {1: (1, 1, *values), 2: (values[0], 1, values[-1]), 3: tuple(values)}[len(values)]
    count = max(int((last - first) / step) + 1, 0) if step else 0
    width = max(len(_number(first)), len(_number(last))) if "w" in opts else 0  # GNU pads to the operands' width
    out, cut = _numbers(first, step, count, opts.value("s", "\n"), width)
    return result(out, [f"seq: {EXHAUSTED.format(fix='narrow the range')}"] if cut else [])


def _number(value: float) -> str:
    """Write one number as seq does."""
    return f"{value:g}" if isinstance(value, float) else str(value)


def _numbers(first: float, step: float, count: int, sep: str, width: int) -> tuple[bytes, bool]:
    """Return seq's output, as much of it as fits GENERATED_LIMIT bytes, and whether the limit cut it short.

    Example:
        >>> _numbers(1, 2, 3, ",", 2)
        (b'01,03,05\\n', False)
    """
    out, gap = bytearray(), sep.encode()
    for i in range(count):
        item = (gap if i else b"") + _number(first + i * step).zfill(width).encode()
        if len(out) + len(item) >= GENERATED_LIMIT:  # one byte is kept for the final newline
            return bytes(out) + b"\n" * bool(out), True
        out += item
    return bytes(out) + b"\n" * bool(out), False


@program("xargs")
def xargs(argv, ctx):
    """Run a command with arguments from stdin (-n N per run, -I STR to substitute, -r skip if none)."""
    opts, cmd = getopt(["xargs", *_leading_options(argv[1:])], "rt0", valued="nIL")
    cmd = cmd or ["echo"]
    words = text(ctx.stdin).split("\0" if "0" in opts else None) if "I" not in opts else split_lines(text(ctx.stdin))
    words = [w for w in words if w]
    if "I" in opts:
        batches = [[a.replace(opts.value("I"), w) for a in cmd] for w in words]
    else:
        size = int(opts.value("n", 0)) or max(len(words), 1)
        batches = [cmd + words[i:i + size] for i in range(0, max(len(words), 1), size)]
        batches = [] if not words and "r" in opts else batches
    out, err, status = bytearray(), bytearray(), 0
    for batch in batches:
        res = run_command("xargs", batch, ctx.with_(stdin=b""))
        out, err = out + res.stdout, err + res.stderr
        status = res.exit_code if res.exit_code in (126, 127) else 123 if res.exit_code else status
    return ExecResult(bytes(out), bytes(err), status)


def _leading_options(args: list[str]) -> list[str]:
    """Return xargs' own options followed by `--` and the command, so the command's options stay its own."""
    i = 0
    while i < len(args) and args[i].startswith("-"):
        i += 2 if args[i] in ("-n", "-I", "-L") else 1
    return args[:i] + ["--"] + args[i:]


@program("timeout")
def timeout(argv, ctx):
    """Run a command (the twin's commands finish at once, so the limit never bites)."""
    args = argv[1:]
    while args and args[0].startswith("-"):
        args = args[2:] if args[0] in ("-s", "-k") else args[1:]
    if len(args) < 2:
        raise Usage("missing operand")
    return run_command("timeout", args[1:], ctx)


def test_expression(args: list[str], ctx: ExecContext, style: str = "gnu") -> tuple[int, str]:
    """Evaluate test(1) arguments; return the status and an error message ("" if none).

    Example:
        >>> test_expression(["-n", "x", "-a", "1", "-lt", "2"], None)
        (0, '')
    """
    try:
        return (0 if _test(args, ctx) else 1), ""
    except ValueError as e:
        kind, value = e.args
        return 2, _TEST_ERRORS[style][kind].format(v=value)


def _test(args: list[str], ctx: ExecContext) -> bool:
    for op in ("-o", "-a"):
        if op in args[1:-1]:
            i = args.index(op, 1)
            return _test(args[:i], ctx) or _test(args[i + 1:], ctx) if op == "-o" else \
                _test(args[:i], ctx) and _test(args[i + 1:], ctx)
    if args[:1] == ["!"] and len(args) > 1:
        return not _test(args[1:], ctx)
    if len(args) > 2 and args[0] == "(" and args[-1] == ")":
        return _test(args[1:-1], ctx)
    if len(args) <= 1:
        return bool(args and args[0])
    if len(args) == 2:
        return _unary(args[0], args[1], ctx)
    if len(args) == 3:
        return _binary(*args)
    raise ValueError("many", args[3])


def _unary(op: str, arg: str, ctx: ExecContext) -> bool:
    files = {"-e": lambda: ctx.exists(arg), "-f": lambda: ctx.is_file(arg),
             "-s": lambda: bool(ctx.files.get(ctx.path(arg))),
             "-d": lambda: ctx.is_dir(arg) and not ctx.is_file(arg), "-r": lambda: ctx.exists(arg),
             "-w": lambda: ctx.exists(arg) and not ctx.read_only(arg),
             "-x": lambda: ctx.is_dir(arg) or ("/" in arg and ctx.resolve(arg) is not None)}
    if op in ("-z", "-n"):
        return (arg == "") == (op == "-z")
    if op in files:
        return files[op]()
    if op in ("-L", "-h", "-p", "-S", "-b", "-c", "-t", "-g", "-u", "-k", "-O", "-G"):
        return False
    raise ValueError("unary", op)


def _binary(left: str, op: str, right: str) -> bool:
    strings = {"=": left == right, "==": left == right, "!=": left != right, "<": left < right, ">": left > right}
    if op in strings:
        return strings[op]
    numeric = {"-eq": "__eq__", "-ne": "__ne__", "-lt": "__lt__", "-le": "__le__", "-gt": "__gt__", "-ge": "__ge__"}
    if op not in numeric:
        raise ValueError("binary", op)
    for value in (left, right):
        if not re.fullmatch(r"\s*[-+]?\d+\s*", value):
            raise ValueError("int", value)
    return getattr(int(left), numeric[op])(int(right))


@program("test", "[")
def test(argv, ctx):
    """Evaluate a test expression (`[ ... ]` needs its closing bracket)."""
    name = argv[0].rsplit("/", 1)[-1]
    if name == "[" and argv[-1:] != ["]"]:
        return result("", [f"[: {_TEST_ERRORS['gnu']['missing']}"], code=2)
    status, message = test_expression(argv[1:-1] if name == "[" else argv[1:], ctx)
    return result("", [f"{name}: {message}"] if message else [], code=status)

