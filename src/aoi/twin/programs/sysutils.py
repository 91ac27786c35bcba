"""System utilities: printf, env, ps, date, uname, id, which, seq, xargs, test and friends."""

from __future__ import annotations

import re
import time
import zlib
from datetime import datetime, timezone

from aoi.twin.programs.context import ExecContext, ExecResult
from aoi.twin.programs.coreutils import Usage, getopt, program, result, split_lines, text, unescape
from aoi.twin.programs.kubelet import container_spec, quantity

_FMT = re.compile(r"%([-+ #0]*)(\d+)?(?:\.(\d+))?([sdiouxXfFeEgGcb%])")
_MEM_KIB = 16 * 1024 * 1024  # memory ps reports percentages against when the node is unknown
_TEST_ERRORS = {
    "dash": {"missing": "missing ]", "int": "Illegal number: {v}", "unary": "{v}: unexpected operator",
             "binary": "{v}: unexpected operator", "many": "{v}: unexpected operator"},
    "bash": {"missing": "missing `]'", "int": "{v}: integer expression expected", "unary": "{v}: unary operator expected",
             "binary": "{v}: binary operator expected", "many": "too many arguments"},
    "gnu": {"missing": "missing ']'", "int": "invalid integer '{v}'", "unary": "'{v}': unary operator expected",
            "binary": "'{v}': binary operator expected", "many": "extra argument '{v}'"}}


def uid(ctx: ExecContext) -> int:
    """Return the user id the container runs as (securityContext runAsUser, else root)."""
    c = container_spec(ctx.pod, ctx.container)
    for sc in (c.get("securityContext") or {}, (ctx.pod.get("spec") or {}).get("securityContext") or {}):
        if sc.get("runAsUser") is not None:
            return int(sc["runAsUser"])
    return 0


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


def _run_command(prog: str, argv: list[str], ctx: ExecContext, env: dict[str, str] | None = None):
    """Run a program for env, xargs and timeout; 127 when it does not exist."""
    runner = ctx.resolve(argv[0])
    if runner is None:
        return result("", [f"{prog}: '{argv[0]}': No such file or directory"], code=127)
    return runner(argv, ctx.with_(env=env if env is not None else ctx.env))


@program("env")
def env(argv, ctx):
    """Print the environment, or run a command in a changed one (`env -i A=1 cmd`)."""
    args, values = argv[1:], dict(ctx.env)
    while args and (args[0] in ("-i", "-", "-u") or "=" in args[0]):
        arg = args.pop(0)
        if arg in ("-i", "-"):
            values = {}
        elif arg == "-u":
            values.pop(args.pop(0) if args else "", None)
        else:
            values[arg.split("=", 1)[0]] = arg.split("=", 1)[1]
    if args:
        return _run_command("env", args, ctx, values)
    return result("".join(f"{k}={v}\n" for k, v in values.items()))


@program("printenv")
def printenv(argv, ctx):
    """Print all variables, or the values of those named (exit 1 if one is unset)."""
    if len(argv) == 1:
        return result("".join(f"{k}={v}\n" for k, v in ctx.env.items()))
    values = [ctx.env[n] for n in argv[1:] if n in ctx.env]
    return result("".join(f"{v}\n" for v in values), code=0 if len(values) == len(argv) - 1 else 1)


def _processes(ctx: ExecContext, command: str) -> list[tuple[int, str, str]]:
    procs = sorted(ctx.processes)
    user = "root" if uid(ctx) == 0 else str(uid(ctx))
    return procs + [(max([p for p, _, _ in procs] + [0]) + 1, user, command)]


def _clock(ctx: ExecContext) -> str:
    started = (ctx.pod.get("status") or {}).get("startTime")
    t = datetime.fromisoformat(started.replace("Z", "+00:00")) if started else datetime.fromtimestamp(ctx.now, timezone.utc)
    return t.strftime("%H:%M")


@program("ps")
def ps(argv, ctx):
    """List processes: `ps`, `ps aux` (BSD columns) or `ps -ef` (System V columns)."""
    style = "".join(argv[1:])
    rows, start = _processes(ctx, " ".join(argv)), _clock(ctx)
    if "u" in style:
        out = ["USER         PID %CPU %MEM    VSZ   RSS TTY      STAT START   TIME COMMAND"]
        for pid, user, cmd in rows:
            vsz = 8000 + zlib.crc32(cmd.encode()) % 900_000
            stat = "Ss" if pid == 1 else "R+" if cmd == " ".join(argv) else "Sl"
            out.append(f"{user:<8} {pid:>7} {0.0:>4.1f} {vsz // 8 * 100 / _MEM_KIB:>4.1f} {vsz:>6} {vsz // 8:>5} "
                       f"{'?':<8} {stat:<4} {start:>5} {'0:00':>6} {cmd}")
    elif "f" in style or "e" in style or "A" in style:
        out = ["UID          PID    PPID  C STIME TTY          TIME CMD"]
        out += [f"{u:<8} {p:>7} {0 if p == 1 else 1:>7} {0:>2} {start:<5} {'?':<8} {'00:00:00':>8} {c}" for p, u, c in rows]
    else:
        out = ["    PID TTY          TIME CMD"]
        out += [f"{p:>7} {'?':<8} {'00:00:00':>8} {c.split()[0].rsplit('/', 1)[-1] if c else ''}" for p, _, c in rows]
    return result("".join(f"{line}\n" for line in out))


@program("hostname")
def hostname(argv, ctx):
    """Print the host name (-i: the pod IP)."""
    ip = (ctx.pod.get("status") or {}).get("podIP", "")
    return result(f"{ip if '-i' in argv or '-I' in argv else ctx.hostname}\n")


@program("whoami")
def whoami(argv, ctx):
    """Print the user name."""
    if uid(ctx):
        return result("", [f"whoami: cannot find name for user ID {uid(ctx)}"])
    return result("root\n")


@program("id")
def id_(argv, ctx):
    """Print user and group ids."""
    n = uid(ctx)
    name = "(root)" if n == 0 else ""
    if "-u" in argv:
        return result(f"{n}\n")
    return result(f"uid={n}{name} gid={n}{name} groups={n}{name}\n")


@program("date")
def date(argv, ctx):
    """Print the twin's time: `date`, `date -u`, `date +FORMAT`, `date -d @SECONDS`, `date -I`, `date -R`."""
    opts, operands = getopt(argv, "uRI", valued="d", longs={"utc": "u", "date": "d", "iso-8601": "I", "rfc-email": "R"})
    t = ctx.now
    when = opts.value("d")
    if when is not None:
        try:
            t = float(when[1:]) if when.startswith("@") else datetime.fromisoformat(when.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return result("", [f"date: invalid date '{when}'"])
    stamp = time.gmtime(t)
    if operands and operands[0].startswith("+"):
        fmt = operands[0][1:].replace("%s", str(int(t))).replace("%N", "000000000").replace("%e", f"{stamp.tm_mday:>2}")
        return result(time.strftime(fmt, stamp) + "\n")
    if "I" in opts:
        return result(time.strftime("%Y-%m-%d", stamp) + "\n")
    if "R" in opts:
        return result(time.strftime("%a, %d %b %Y %H:%M:%S +0000", stamp) + "\n")
    return result(time.strftime(f"%a %b {stamp.tm_mday:>2} %H:%M:%S UTC %Y", stamp) + "\n")


@program("sleep")
def sleep(argv, ctx):
    """Check the interval and return at once: the twin's clock moves only between actions, never inside an exec."""
    if len(argv) < 2:
        raise Usage("missing operand")
    bad = [a for a in argv[1:] if not re.fullmatch(r"(\d+(\.\d*)?|\.\d+)[smhd]?|inf(inity)?", a)]
    return result("", [f"sleep: invalid time interval '{bad[0]}'"] if bad else [])


def _kernel(ctx: ExecContext) -> tuple[str, str]:
    info = ((ctx.node or {}).get("status") or {}).get("nodeInfo") or {}
    arch = {"amd64": "x86_64", "arm64": "aarch64"}.get(info.get("architecture", "amd64"), "x86_64")
    return info.get("kernelVersion") or "6.1.0-28-amd64", arch


@program("uname")
def uname(argv, ctx):
    """Print system information (-a -s -n -r -v -m -o)."""
    opts, _ = getopt(argv, "asnrvmpio", longs={"all": "a"})
    kernel, arch = _kernel(ctx)
    fields = {"s": "Linux", "n": ctx.hostname, "r": kernel, "v": "#1 SMP PREEMPT_DYNAMIC Debian 6.1.119-1 (2024-11-22)",
              "m": arch, "o": "GNU/Linux"}
    chosen = [k for k in "snrvmo" if k in opts or "a" in opts] or ["s"]
    return result(" ".join(fields[k] for k in chosen) + "\n")


@program("which")
def which(argv, ctx):
    """Print where each command is (exit 1 if one is missing)."""
    names = [a for a in argv[1:] if not a.startswith("-")]
    found = [n if "/" in n else f"/usr/bin/{n}" for n in names if ctx.resolve(n) is not None]
    return result("".join(f"{f}\n" for f in found), code=0 if len(found) == len(names) and names else 1)


@program("pwd")
def pwd(argv, ctx):
    """Print the working directory."""
    return result(f"{ctx.cwd}\n")


@program("nproc")
def nproc(argv, ctx):
    """Print the node's CPU count (as in a real container, not the pod's limit)."""
    cpu = (((ctx.node or {}).get("status") or {}).get("capacity") or {}).get("cpu", "4")
    return result(f"{max(int(quantity(cpu)), 1)}\n")


@program("df")
def df(argv, ctx):
    """Report file systems: the overlay root and the pod's mounts (-h: human sizes)."""
    human = any(a.startswith("-") and "h" in a for a in argv[1:])
    mounts = [("overlay", 102626232, 21442224, "/"), ("tmpfs", 65536, 0, "/dev"), ("shm", 65536, 0, "/dev/shm")]
    mounts += [("/dev/sda1", 102626232, 21442224, m.get("mountPath", "")) for m in
               container_spec(ctx.pod, ctx.container).get("volumeMounts") or []]
    size = (lambda k: f"{k / 1048576:.0f}G" if k >= 1048576 else f"{k / 1024:.0f}M" if k else "0") if human else str
    out = [f"{'Filesystem':<14} {'Size' if human else '1K-blocks':>9} {'Used':>8} {'Available':>9} Use% Mounted on"]
    for name, total, used, path in mounts:
        out.append(f"{name:<14} {size(total):>9} {size(used):>8} {size(total - used):>9} {used * 100 // total:>3}% {path}")
    return result("".join(f"{line}\n" for line in out))


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
    first, step, last = (1, 1, values[0]) if len(values) == 1 else (values[0], 1, values[1]) if len(values) == 2 else values
    count = max(int((last - first) / step) + 1, 0) if step else 0
    items = [first + i * step for i in range(min(count, 1_000_000))]
    shown = [f"{v:g}" if isinstance(v, float) else str(v) for v in items]
    width = max((len(s) for s in shown), default=0) if "w" in opts else 0
    return result(opts.value("s", "\n").join(s.zfill(width) for s in shown) + ("\n" if shown else ""))


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
        res = _run_command("xargs", batch, ctx.with_(stdin=b""))
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
    return _run_command("timeout", args[1:], ctx)


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
    files = {"-e": lambda: ctx.exists(arg), "-f": lambda: ctx.is_file(arg), "-s": lambda: bool(ctx.files.get(ctx.path(arg))),
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

