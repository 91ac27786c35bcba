"""`nc`/`netcat` (busybox) and `telnet`: port checks, and raw text protocols (memcached, Redis, HTTP) over stdin."""

from __future__ import annotations

import shlex

from aoi.twin.behaviour.programs import http_server, memcached, redis_data
from aoi.twin.behaviour.programs.basics import out
from aoi.twin.behaviour.programs.common import dial
from aoi.twin.behaviour.programs.redis_commands import Session

NC_FLAGS = set("zvnulkCN46")
NC_VALUED = set("wqisepx")


def parse(argv: list[str]) -> tuple[set, dict, list[str]] | str:
    """Split nc's options (clustered short flags, -w N) from host and ports."""
    flags, values, rest, i = set(), {}, [], 1
    while i < len(argv):
        word, i = argv[i], i + 1
        if word.startswith("-") and len(word) > 1:
            for j, ch in enumerate(word[1:], 1):
                if ch in NC_VALUED:
                    value = word[j + 1:] or (argv[i] if i < len(argv) else "")
                    i += 0 if word[j + 1:] else 1
                    values[ch] = value
                    break
                if ch not in NC_FLAGS:
                    return f"nc: invalid option -- '{ch}'"
                flags.add(ch)
        else:
            rest.append(word)
    return flags, values, rest


def _ports(spec: str) -> list[int]:
    low, _, high = spec.partition("-")
    if not low.isdigit() or (high and not high.isdigit()):
        return []
    return list(range(int(low), int(high or low) + 1))


def nc(twin, argv: list[str], ctx):
    """nc [-zv] [-w SEC] HOST PORT[-PORT] (stdin goes to the server, its answer to stdout)."""
    parsed = parse(argv)
    if isinstance(parsed, str):
        return out("", parsed + "\n", 1)
    flags, values, rest = parsed
    if "l" in flags:
        return out("", "nc: bind: Address in use\n", 1)
    if len(rest) < 2 or not _ports(rest[1]):
        return out("", "BusyBox v1.36.1 multi-call binary.\n\nUsage: nc [OPTIONS] HOST PORT  - connect\n", 1)
    host, stdout, stderr, code = rest[0], "", "", 0
    for port in _ports(rest[1]):
        reach = dial(twin, ctx, host, port)
        where = f"{host} ({reach.ip}:{port})"
        if reach.error == "unresolved":
            return out(stdout, stderr + f"nc: bad address '{host}'\n", 1)
        if not reach.ok:
            reason = "Connection refused" if reach.error == "refused" else "Connection timed out"
            stderr, code = stderr + f"nc: {where}: {reason}\n", 1
            continue
        stderr += f"{where} open\n" if "v" in flags else ""
        if "z" not in flags:
            stdout += talk(twin, ctx, reach, ctx.stdin.decode(errors="replace"))[0]
    return out(stdout, stderr, code)


def talk(twin, ctx, reach, request: str) -> tuple[str, bool]:
    """Send text to whatever listens; return (its answer, whether it closed the connection)."""
    pod = reach.pod
    container = memcached.is_memcached(twin, pod) if pod is not None else ""
    if container:
        return memcached.answer(twin, pod, container, ctx.now, request)
    server = redis_data.server_in(twin, pod) if pod is not None else None
    if server is not None:
        session = Session(twin, server, 0, ctx.now, ctx.pod["status"].get("podIP", ""))
        replies = [resp(session.run(_split(line))) for line in request.splitlines() if line.strip()]
        return "".join(replies), False
    kind = http_server.identify(twin, reach)[0]
    if kind in ("http", "api", "mongo") and request.strip():
        return _http(twin, ctx, reach, request), True
    return "", kind == "empty" and bool(request)


def _split(line: str) -> list[str]:
    try:
        return shlex.split(line)
    except ValueError:
        return line.split()


def resp(reply) -> str:
    """Encode a reply in the Redis protocol (RESP2)."""
    kind, value = reply
    if kind == "status":
        return f"+{value}\r\n"
    if kind == "error":
        return f"-{value}\r\n"
    if kind == "int":
        return f":{value}\r\n"
    if kind == "bulk":
        return "$-1\r\n" if value is None else f"${len(str(value).encode())}\r\n{value}\r\n"
    return f"*{len(value)}\r\n" + "".join(resp(r) for r in value)


def _http(twin, ctx, reach, request: str) -> str:
    """Answer a raw HTTP request typed into nc."""
    first = request.splitlines()[0].split() if request.splitlines() else []
    if len(first) < 2 or not first[0].isalpha():
        return ("HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"
                "400 Bad Request")
    method, path = first[0], first[1]
    url = f"http://{reach.ip}:{reach.port}{path}"
    ex = http_server.fetch(twin, ctx, url, method, {}, request.split("\r\n\r\n", 1)[-1] if "\r\n\r\n" in request
                           else "")
    if ex.response is None:
        return ""
    return "\r\n".join(ex.headers()) + "\r\n\r\n" + ("" if method == "HEAD" else ex.response.body)


def telnet(twin, argv: list[str], ctx):
    """telnet HOST [PORT]: netkit's messages around the same exchange nc does."""
    args = [a for a in argv[1:] if not a.startswith("-")]
    if not args:
        return out("", "usage: telnet [-l user] [-a] host-name [port]\n", 1)
    host, port = args[0], int(args[1]) if len(args) > 1 and args[1].isdigit() else 23
    reach = dial(twin, ctx, host, port)
    if reach.error == "unresolved":
        return out("", f"telnet: could not resolve {host}/{port}: Name or service not known\n", 1)
    trying = f"Trying {reach.ip}...\n"
    if not reach.ok:
        reason = "Connection refused" if reach.error == "refused" else "Connection timed out"
        return out(trying, f"telnet: Unable to connect to remote host: {reason}\n", 1)
    answer, closed = talk(twin, ctx, reach, ctx.stdin.decode(errors="replace"))
    text = f"{trying}Connected to {host}.\nEscape character is '^]'.\n{answer}"
    return out(text + ("Connection closed by foreign host.\n" if closed else ""), "", 1 if closed else 0)


PROGRAMS = {"nc": nc, "netcat": nc, "telnet": telnet}
