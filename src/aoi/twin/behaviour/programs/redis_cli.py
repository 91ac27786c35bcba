"""`redis-cli` and `valkey-cli`: connect to a Redis in the cluster, run one command (or one per stdin line)."""

from __future__ import annotations

import shlex

from aoi.twin.behaviour.programs import redis_data
from aoi.twin.behaviour.programs.basics import out
from aoi.twin.behaviour.programs.common import LOCAL_NAMES, component_of_service, dial, pod_ip, serving_ports
from aoi.twin.behaviour.programs.redis_commands import Session

VALUED = {"-h", "-p", "-n", "-a", "-u", "--user", "--pass", "--pattern", "-r", "-i", "-s"}
FLAGS = {"--raw", "--no-raw", "-c", "--scan", "--no-auth-warning", "-e", "--verbose", "-x", "--tls"}
HTTPISH = ("http", "envoy", "grpc", "flagd", "consul", "jaeger")


def parse(argv: list[str]) -> tuple[dict, list[str]]:
    """Split redis-cli's options from the command words (options come first)."""
    opts, i = {"-h": "127.0.0.1", "-p": "6379", "-n": "0"}, 1
    while i < len(argv) and argv[i].startswith("-") and argv[i] != "-":
        word = argv[i]
        if word in VALUED and i + 1 < len(argv):
            opts[word], i = argv[i + 1], i + 2
        elif word in FLAGS or word in ("-v", "--version", "--help"):
            opts[word], i = "", i + 1
        else:
            break
    if "-u" in opts:
        _uri(opts, opts["-u"])
    return opts, argv[i:]


def _uri(opts: dict, uri: str) -> None:
    rest = uri.split("://", 1)[-1]
    creds, at, rest = rest.rpartition("@")
    hostport, _, db = rest.partition("/")
    host, _, port = hostport.partition(":")
    opts.update({"-h": host or "127.0.0.1", "-p": port or "6379", "-n": db or opts["-n"]})
    if at:
        opts["-a"] = creds.split(":")[-1]


def redis_cli(twin, argv: list[str], ctx):
    """redis-cli [-h host] [-p port] [-n db] [--raw|--no-raw] [--scan --pattern p] [command args...]."""
    opts, words = parse(argv)
    name = "valkey-cli" if argv[0].endswith("valkey-cli") else "redis-cli"
    if "-v" in opts or "--version" in opts:
        return out(f"{name} {'8.0.1' if name == 'valkey-cli' else '6.2.4'}\n")
    if "--help" in opts:
        return out(f"Usage: {name} [OPTIONS] [cmd [arg [arg ...]]]\n")
    if not opts["-p"].isdigit() or not opts["-n"].lstrip("-").isdigit():
        return out("", "Invalid value for port or database number\n", 1)
    host, port = opts["-h"], int(opts["-p"])
    server, error = _connect(twin, ctx, host, port)
    if server is None:
        return out("", error, 1)
    warn = ("Warning: Using a password with '-a' or '-u' option on the command line interface may not be safe.\n"
            if "-a" in opts and "--no-auth-warning" not in opts else "")
    session = Session(twin, server, int(opts["-n"]), ctx.now, "127.0.0.1" if server.pod is ctx.pod else pod_ip(ctx.pod))
    commands = _commands(opts, words, ctx)
    raw = "--no-raw" not in opts
    text = "".join(render(session.run(c), raw) for c in commands if c)
    return out(text, warn)


def _commands(opts: dict, words: list[str], ctx) -> list[list[str]]:
    """Return the commands to run: the arguments, --scan, or one per stdin line."""
    if "--scan" in opts:
        return [["keys", opts.get("--pattern", "*")]]
    if words:
        repeat = int(opts.get("-r", "1")) if opts.get("-r", "1").isdigit() else 1
        return [words] * repeat
    lines = ctx.stdin.decode(errors="replace").splitlines()
    return [_split(line) for line in lines if line.strip()]


def _split(line: str) -> list[str]:
    try:
        return shlex.split(line)
    except ValueError:
        return line.split()


def _connect(twin, ctx, host: str, port: int) -> tuple[redis_data.RedisServer | None, str]:
    """Return the Redis server at host:port, or what redis-cli prints when it cannot talk to one."""
    fail = f"Could not connect to Redis at {host}:{port}: "
    if host in LOCAL_NAMES or host == pod_ip(ctx.pod):
        server = redis_data.server_in(twin, ctx.pod)
        if server is None or port not in serving_ports(twin, ctx.pod):
            return None, fail + "Connection refused\n"
        return server, ""
    reach = dial(twin, ctx, host, port)
    if not reach.ok:
        reason = {"unresolved": "Name or service not known", "refused": "Connection refused",
                  "timeout": "Connection timed out"}[reach.error]
        return None, fail + reason + "\n"
    server = redis_data.server_in(twin, reach.pod)
    if server is not None:
        return server, ""
    protocol = component_of_service(twin, reach.service)[2].get("protocol", "")
    if protocol == "memcached":
        return None, 'Error: Protocol error, got "E" as reply type byte\n'
    if protocol in HTTPISH:
        return None, 'Error: Protocol error, got "H" as reply type byte\n'
    return None, "Error: Connection reset by peer\n"


def render(reply: tuple[str, object], raw: bool) -> str:
    """Print a reply as redis-cli does: raw when stdout is not a terminal, else the (integer)/1) "x" forms."""
    return (_raw(reply) + "\n") if raw else (_tty(reply, "") + "\n")


def _raw(reply) -> str:
    kind, value = reply
    if kind == "array":
        return "\n".join(_raw(r) for r in value)
    return "" if value is None else str(value)


def _tty(reply, indent: str) -> str:
    kind, value = reply
    if kind == "error":
        return f"(error) {value}"
    if kind == "int":
        return f"(integer) {value}"
    if kind == "status":
        return str(value)
    if kind == "bulk":
        return "(nil)" if value is None else _quote(value)
    if not value:
        return "(empty array)"
    width = len(str(len(value)))
    lines = []
    for n, item in enumerate(value, 1):
        prefix = f"{str(n).rjust(width)}) "
        lines.append((indent if n > 1 else "") + prefix + _tty(item, indent + " " * len(prefix)))
    return "\n".join(lines)


def _quote(text: str) -> str:
    if "\r\n" in text:
        return text.rstrip("\r\n").replace("\r\n", "\n")  # INFO and CLIENT LIST print verbatim
    escaped = "".join(c if 32 <= ord(c) < 127 and c not in '"\\' else
                      {"\n": "\\n", "\r": "\\r", "\t": "\\t", '"': '\\"', "\\": "\\\\"}.get(c, f"\\x{ord(c):02x}")
                      for c in text)
    return f'"{escaped}"'


PROGRAMS = {"redis-cli": redis_cli, "valkey-cli": redis_cli}
