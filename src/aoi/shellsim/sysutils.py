"""System utilities: env, printenv, ps, hostname, whoami, id, date, sleep, uname, which, pwd, nproc, df."""

from __future__ import annotations

import re
import time
import zlib

from aoi.shellsim.context import ExecContext
from aoi.shellsim.pod import container_spec, parse_time, quantity
from aoi.shellsim.util import Usage, getopt, program, result, run_command

_MEM_KIB = 16 * 1024 * 1024  # memory ps reports percentages against when the node is unknown


def uid(ctx: ExecContext) -> int:
    """Return the user id the container runs as (securityContext runAsUser, else root)."""
    c = container_spec(ctx.pod, ctx.container)
    for sc in (c.get("securityContext") or {}, (ctx.pod.get("spec") or {}).get("securityContext") or {}):
        if sc.get("runAsUser") is not None:
            return int(sc["runAsUser"])
    return 0


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
        return run_command("env", args, ctx, values)
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
    return time.strftime("%H:%M", time.gmtime(parse_time(started) or ctx.now))


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
        out += [f"{u:<8} {p:>7} {0 if p == 1 else 1:>7} {0:>2} {start:<5} {'?':<8} {'00:00:00':>8} {c}"
                for p, u, c in rows]
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
    iso_flags = [re.fullmatch(r"(?:-I|--iso-8601=?)(\w*)", a) for a in argv[1:]]
    iso = next((m[1] or "date" for m in iso_flags if m), None)
    argv = [argv[0]] + [a for a, m in zip(argv[1:], iso_flags, strict=True) if not m]
    opts, operands = getopt(argv, "uR", valued="d", longs={"utc": "u", "date": "d", "rfc-email": "R"})
    t = ctx.now
    when = opts.value("d")
    if when is not None:
        try:
            t = float(when[1:]) if when.startswith("@") else parse_time(when.strip() or "x")
        except (ValueError, TypeError):
            return result("", [f"date: invalid date '{when}'"])
    stamp = time.gmtime(t)
    if operands and operands[0].startswith("+"):
        fmt = operands[0][1:].replace("%s", str(int(t))).replace("%N", "000000000").replace("%e", f"{stamp.tm_mday:>2}")
        return result(time.strftime(fmt, stamp) + "\n")
    if iso:
        fmt = {"date": "%Y-%m-%d", "hours": "%Y-%m-%dT%H+00:00", "minutes": "%Y-%m-%dT%H:%M+00:00"}.get(
            iso, "%Y-%m-%dT%H:%M:%S+00:00")
        return result(time.strftime(fmt, stamp) + "\n")
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
        free, percent = size(total - used), used * 100 // total
        out.append(f"{name:<14} {size(total):>9} {size(used):>8} {free:>9} {percent:>3}% {path}")
    return result("".join(f"{line}\n" for line in out))


