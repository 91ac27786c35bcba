"""`netstat -tlnp`, `ss -ltn` over the container's listening ports, and `kill` (which may not kill PID 1)."""

from __future__ import annotations

import posixpath
import shlex

from aoi.twin.behaviour.programs.basics import out
from aoi.twin.behaviour.programs.common import behaviour_of, serving_ports

GO_PROGRAMS = ("hotel-",)  # Go services listen on [::] (tcp6), the rest on 0.0.0.0


def _listeners(twin, ctx) -> list[tuple[str, int, str]]:
    """Return (family, port, 'pid/name') for each listening TCP port of the pod, by port."""
    main = ctx.processes[0][2] if ctx.processes else ""
    name = posixpath.basename(shlex.split(main)[0]) if main.strip() else "?"
    proc = behaviour_of(twin).process(ctx.pod, ctx.container)
    family = "tcp6" if proc is not None and proc.program.startswith(GO_PROGRAMS) else "tcp"
    udp = {p["containerPort"] for c in ctx.pod["spec"]["containers"] for p in c.get("ports") or []
           if p.get("protocol") == "UDP"}
    tcp = {p["containerPort"] for c in ctx.pod["spec"]["containers"] for p in c.get("ports") or []
           if p.get("protocol", "TCP") == "TCP"}
    ports = sorted(p for p in serving_ports(twin, ctx.pod) if p in tcp or p not in udp)
    return [(family, port, f"1/{name}"[:19]) for port in ports]


def netstat(twin, argv: list[str], ctx):
    """netstat -tlnp (and -an/-tln): the pod's listening sockets."""
    flags = "".join(a[1:] for a in argv[1:] if a.startswith("-") and not a.startswith("--"))
    if "l" not in flags and "a" not in flags:
        return out("Active Internet connections (w/o servers)\nProto Recv-Q Send-Q Local Address           "
                   "Foreign Address         State       \n")
    pid = "p" in flags
    head = ("Active Internet connections (only servers)\nProto Recv-Q Send-Q Local Address           "
            "Foreign Address         State      " + (" PID/Program name    " if pid else "") + "\n")
    rows = []
    for family, port, owner in _listeners(twin, ctx):
        local, remote = (f":::{port}", ":::*") if family == "tcp6" else (f"0.0.0.0:{port}", "0.0.0.0:*")
        rows.append(f"{family:<5} {0:>6} {0:>6} {local:<23} {remote:<23} LISTEN     " +
                    (f" {owner:<20}" if pid else "") + "\n")
    return out(head + "".join(rows))


def ss(twin, argv: list[str], ctx):
    """ss -ltn[p]: iproute2's listening sockets table."""
    flags = "".join(a[1:] for a in argv[1:] if a.startswith("-") and not a.startswith("--"))
    if "l" not in flags and "a" not in flags:
        return out("Netid State Recv-Q Send-Q Local Address:Port Peer Address:PortProcess\n")
    rows = ["State  Recv-Q Send-Q Local Address:Port  Peer Address:Port" + ("Process" if "p" in flags else "")]
    for family, port, owner in _listeners(twin, ctx):
        local, peer = (f"*:{port}", "*:*") if family == "tcp6" else (f"0.0.0.0:{port}", "0.0.0.0:*")
        process = f'users:(("{owner.split("/", 1)[1]}",pid=1,fd=3))' if "p" in flags else ""
        rows.append(f"LISTEN 0      4096   {local:>18} {peer:>18}{process}")
    return out("\n".join(rows) + "\n")


def kill(twin, argv: list[str], ctx):
    """kill [-SIGNAL] PID...: PID 1 is the container's init, which a process in it may not kill."""
    args, words = [], iter(argv[1:])
    for word in words:
        if word in ("-s", "-n"):
            next(words, None)  # the signal
        elif not word.startswith("-"):
            args.append(word)
    if argv[1:2] == ["-l"]:
        return out(" 1) SIGHUP\t 2) SIGINT\t 3) SIGQUIT\t 4) SIGILL\t 5) SIGTRAP\n 6) SIGABRT\t 7) SIGBUS\t"
                   " 8) SIGFPE\t 9) SIGKILL\t10) SIGUSR1\n11) SIGSEGV\t12) SIGUSR2\t13) SIGPIPE\t14) SIGALRM\t"
                   "15) SIGTERM\n")
    if not args:
        return out("", "kill: usage: kill [-s sigspec | -n signum | -sigspec] pid | jobspec ... or kill -l "
                       "[sigspec]\n", 2)
    errors = []
    for pid in args:
        if not pid.isdigit():
            errors.append(f"kill: {pid}: arguments must be process or job IDs")
        elif pid == "1":
            errors.append("kill: can't kill pid 1: Operation not permitted")
        else:
            errors.append(f"kill: can't kill pid {pid}: No such process")
    return out("", "".join(e + "\n" for e in errors), 1 if errors else 0)


PROGRAMS = {"netstat": netstat, "ss": ss, "kill": kill}
