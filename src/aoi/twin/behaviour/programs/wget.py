"""`wget` as busybox has it: -q, -O FILE|-, -T SECONDS, --spider, -S, --header, --post-data."""

from __future__ import annotations

import posixpath

from aoi.twin.behaviour.programs.basics import out
from aoi.twin.behaviour.programs.http_server import fetch, parse_url

SHORT_VALUED = {"O": "output", "T": "timeout", "U": "agent", "t": "tries", "o": "log", "P": "prefix"}
SHORT_FLAGS = {"q": "quiet", "S": "headers", "c": "", "4": "", "s": "quiet"}
LONG_VALUED = {"timeout": "timeout", "header": "header", "post-data": "post", "user-agent": "agent",
               "tries": "tries", "output-document": "output"}
LONG_FLAGS = {"quiet": "quiet", "spider": "spider", "server-response": "headers", "continue": "",
              "no-check-certificate": "insecure"}


class _BadOption(Exception):
    """A bad option; the message is busybox's error text."""


def parse(argv: list[str]) -> tuple[dict, list[str]] | str:
    """Return (options, URLs), or the busybox error text for a bad option (short options cluster: -qO-)."""
    opts, urls, i = {}, [], 1
    try:
        while i < len(argv):
            word, i = argv[i], i + 1
            if word.startswith("--"):
                i = _long_option(word, argv, i, opts)
            elif word.startswith("-") and len(word) > 1:
                i = _short_options(word, argv, i, opts)
            else:
                urls.append(word)
    except _BadOption as bad:
        return str(bad)
    return opts, urls


def _long_option(word: str, argv: list[str], i: int, opts: dict) -> int:
    """Record one --option (its value after = or in the next word); return the index of the next word."""
    name, eq, value = word[2:].partition("=")
    if name in LONG_VALUED:
        if not eq:
            if i >= len(argv):
                raise _BadOption(f"wget: option '--{name}' requires an argument")
            value, i = argv[i], i + 1
        opts.setdefault(LONG_VALUED[name], []).append(value)
    elif name in LONG_FLAGS:
        opts[LONG_FLAGS[name]] = True
    else:
        raise _BadOption(f"wget: unrecognized option '{word}'")
    return i


def _short_options(word: str, argv: list[str], i: int, opts: dict) -> int:
    """Record a cluster of short options (a valued one takes the rest of the word or the next word); return the
    index of the next word."""
    for j, ch in enumerate(word[1:], 1):
        if ch in SHORT_VALUED:
            value = word[j + 1:] or (argv[i] if i < len(argv) else None)
            if value is None:
                raise _BadOption(f"wget: option requires an argument -- '{ch}'")
            opts.setdefault(SHORT_VALUED[ch], []).append(value)
            return i if word[j + 1:] else i + 1
        if ch not in SHORT_FLAGS:
            raise _BadOption(f"wget: invalid option -- '{ch}'")
        opts[SHORT_FLAGS[ch]] = True
    return i


def wget(twin, argv: list[str], ctx):
    """wget [-q] [-O FILE] [-T SEC] [--spider] URL..."""
    parsed = parse(argv)
    if isinstance(parsed, str):
        return out("", parsed + "\nBusyBox v1.36.1 multi-call binary.\n\nUsage: wget [-cqS] [--spider] [-O FILE] "
                            "[-o LOGFILE] [--header STR]\n\t[--post-data STR | --post-file FILE] [-Y on/off]\n"
                            "\t[-P DIR] [-U AGENT] [-T SEC] URL...\n", 1)
    opts, urls = parsed
    if not urls:
        return out("", "BusyBox v1.36.1 multi-call binary.\n\nUsage: wget [-cqS] [--spider] [-O FILE] URL...\n", 1)
    stdout, stderr = "", ""
    for url in urls:
        text, err, code = _one(twin, ctx, opts, url)
        stdout, stderr = stdout + text, stderr + err
        if code:
            return out(stdout, stderr, code)
    return out(stdout, stderr, 0)


def _one(twin, ctx, opts: dict, url: str) -> tuple[str, str, int]:
    """Fetch one URL and say what busybox says."""
    quiet = opts.get("quiet", False)
    timeout = float((opts.get("timeout") or ["900"])[-1] or 900)
    headers = dict(h.split(":", 1) for h in opts.get("header", []) if ":" in h)
    post = (opts.get("post") or [None])[-1]
    ex = fetch(twin, ctx, url, "POST" if post is not None else "GET", headers, post or "",
               opts.get("insecure", False), timeout, timeout)
    log = [] if quiet else [f"Connecting to {ex.host}:{ex.port} ({ex.ip}:{ex.port})"] if ex.ip else []
    fail = {"unresolved": f"wget: bad address '{ex.host}:{ex.port}'",
            "refused": f"wget: can't connect to remote host ({ex.ip}): Connection refused",
            "timeout": "wget: download timed out", "slow": "wget: download timed out",
            "http09": "wget: error getting response", "empty": "wget: error getting response",
            "tls": "wget: error getting response: Connection reset by peer",
            "cert": "wget: TLS certificate verification failed", "bad-url": f"wget: not an http or ftp url: {url}"}
    if ex.error:
        message = fail.get(ex.error, f"wget: not an http or ftp url: {url}")
        return "", _lines(log + [message]), 1
    r = ex.response
    if opts.get("headers"):
        log += [f"  {h}" for h in ex.headers()]
    if r.status >= 400:
        return "", _lines(log + [f"wget: server returned error: {ex.version} {r.status} {r.reason}"]), 1
    if opts.get("spider"):
        return "", _lines(log + ([] if quiet else ["remote file exists"])), 0
    target = (opts.get("output") or [None])[-1] or posixpath.basename(parse_url(url)[3]) or "index.html"
    size = len(r.body.encode())
    bar = f"{'-' if target == '-' else target:<20} 100% |{'*' * 32}| {size:>5}  0:00:00 ETA"
    if target == "-":
        return r.body, _lines(log + ([] if quiet else ["writing to stdout", bar, "written to stdout"])), 0
    try:
        ctx.write(target, r.body.encode())
    except OSError as e:
        return "", _lines(log + [f"wget: can't open '{target}': {e.strerror}"]), 1
    return "", _lines(log + ([] if quiet else [f"saving to '{target}'", bar, f"'{target}' saved"])), 0


def _lines(lines: list[str]) -> str:
    return "".join(f"{line}\n" for line in lines)


PROGRAMS = {"wget": wget}
