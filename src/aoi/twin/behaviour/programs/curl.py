"""`curl` to in-cluster URLs: curl 8's output, progress meter, -v/-i/-I/-o/-w/-f/-L, and its error codes."""

from __future__ import annotations

from dataclasses import dataclass, field

from aoi.twin.behaviour.programs.basics import out
from aoi.twin.behaviour.programs.http_server import Exchange, fetch

SHORT_FLAGS = {"s": "silent", "S": "show-error", "v": "verbose", "i": "include", "I": "head", "f": "fail",
               "L": "location", "k": "insecure", "4": "", "6": "", "N": "", "g": "", "O": "remote-name"}
SHORT_VALUED = {"o": "output", "w": "write-out", "X": "request", "d": "data", "H": "header", "m": "max-time",
                "A": "user-agent", "u": "user", "e": "referer", "b": "cookie", "x": "proxy"}
LONG_VALUED = {"output", "write-out", "request", "data", "data-raw", "data-binary", "data-urlencode", "header",
               "max-time", "connect-timeout", "user-agent", "user", "retry", "retry-delay", "json", "referer",
               "cookie", "proxy", "url", "max-redirs", "resolve", "cacert"}
LONG_FLAGS = {"silent", "show-error", "verbose", "include", "head", "fail", "fail-with-body", "location",
              "insecure", "http1.1", "http2", "http2-prior-knowledge", "no-progress-meter", "compressed",
              "ipv4", "ipv6", "globoff", "no-buffer", "remote-name", "get"}
VERSION = "curl 8.5.0 (x86_64-pc-linux-gnu) libcurl/8.5.0 OpenSSL/3.0.13 zlib/1.3 nghttp2/1.59.0\n"
METER = ("  % Total    % Received % Xferd  Average Speed   Time    Time     Time  Current\n"
         "                                 Dload  Upload   Total   Spent    Left  Speed\n")


class CurlUsage(Exception):
    """A command line curl rejects (exit 2)."""


@dataclass
class Args:
    """curl's options."""

    urls: list[str] = field(default_factory=list)
    flags: set[str] = field(default_factory=set)
    values: dict[str, list[str]] = field(default_factory=dict)

    def last(self, name: str, default=None):
        return (self.values.get(name) or [default])[-1]

    def number(self, name: str) -> float | None:
        value = self.last(name)
        try:
            return float(value) if value is not None else None
        except ValueError:
            raise CurlUsage(f"option --{name}: expected a proper numerical parameter") from None


def parse(argv: list[str]) -> Args:
    """Read curl's options and URLs (options may follow URLs; short flags combine as in -sSL)."""
    args, words, i = Args(), argv[1:], 0
    while i < len(words):
        word, i = words[i], i + 1
        if word.startswith("--") and len(word) > 2:
            name, eq, value = word[2:].partition("=")
            if name in LONG_VALUED:
                if not eq:
                    if i >= len(words):
                        raise CurlUsage(f"option {word}: requires parameter")
                    value, i = words[i], i + 1
                args.values.setdefault(name, []).append(value)
            elif name in LONG_FLAGS:
                args.flags.add(name)
            else:
                raise CurlUsage(f"option {word}: is unknown")
        elif word.startswith("-") and len(word) > 1:
            i = _short(word, words, i, args)
        else:
            args.urls.append(word)
    args.urls += args.values.get("url", [])
    return args


def _short(word: str, words: list[str], i: int, args: Args) -> int:
    for j, ch in enumerate(word[1:], 1):
        if ch in SHORT_VALUED:
            value = word[j + 1:] or (words[i] if i < len(words) else None)
            if value is None:
                raise CurlUsage(f"option -{ch}: requires parameter")
            args.values.setdefault(SHORT_VALUED[ch], []).append(value)
            return i if word[j + 1:] else i + 1
        if ch not in SHORT_FLAGS:
            raise CurlUsage(f"option -{ch}: is unknown")
        args.flags.add(SHORT_FLAGS[ch])
    return i


def curl(twin, argv: list[str], ctx):
    """curl [options] URL..."""
    if "--version" in argv[1:] or "-V" in argv[1:]:
        return out(VERSION)
    try:
        args = parse(argv)
        if not args.urls:
            raise CurlUsage("no URL specified!")
        connect, max_time = args.number("connect-timeout"), args.number("max-time")
    except CurlUsage as e:
        return out("", f"curl: {e}\ncurl: try 'curl --help' or 'curl --manual' for more information\n", 2)
    stdout, stderr, code = "", "", 0
    for url in args.urls:
        result = _one(twin, ctx, args, url, connect, max_time)
        stdout, stderr, code = stdout + result[0], stderr + result[1], result[2]
    return out(stdout, stderr, code)


def _request(args: Args) -> tuple[str, dict, str]:
    data = "&".join(args.values.get("data", []) + args.values.get("data-raw", []) +
                    args.values.get("data-binary", []) + args.values.get("json", []))
    method = args.last("request") or ("HEAD" if "head" in args.flags else "POST" if data else "GET")
    headers = dict(h.split(":", 1) for h in args.values.get("header", []) if ":" in h)
    return method, {k.strip(): v.strip() for k, v in headers.items()}, data


def _one(twin, ctx, args: Args, url: str, connect, max_time) -> tuple[str, str, int]:
    """Fetch one URL (following redirects with -L) and render it."""
    method, headers, data = _request(args)
    ex = fetch(twin, ctx, url, method, headers, data, "insecure" in args.flags, connect, max_time)
    hops = 0
    while ("location" in args.flags and ex.response and ex.response.status in (301, 302, 307, 308) and hops < 50):
        location = dict(ex.response.headers).get("Location", "/")
        base = url.split("://", 1)[-1].split("/", 1)[0]
        url = location if "://" in location else f"{url.split('://')[0] if '://' in url else 'http'}://{base}{location}"
        ex, hops = fetch(twin, ctx, url, method, headers, data, "insecure" in args.flags, connect, max_time), hops + 1
    return _render(args, ctx, ex, method, headers, hops)


def _render(args: Args, ctx, ex: Exchange, method: str, headers: dict, hops: int) -> tuple[str, str, int]:
    silent, verbose = "silent" in args.flags, "verbose" in args.flags
    code, message = _failure(args, ex)
    body = "" if ex.response is None or method == "HEAD" or code == 22 else ex.response.body
    shown = "\r\n".join(ex.headers()) + "\r\n\r\n" if ex.response and ({"include", "head"} & args.flags) else ""
    err = _verbose(ex, method, headers) if verbose else ""
    stdout = shown + body
    target = args.last("output")
    if target not in (None, "-"):
        try:
            ctx.write(target, stdout.encode())
        except OSError:
            code, message = 23, f"Failure writing output to destination, passed {len(stdout)} returned 0"
        stdout = ""
    meter = "" if silent or "no-progress-meter" in args.flags else _meter(ex, len(body.encode()), code)
    stderr = meter + err + (f"curl: ({code}) {message}\n" if code and (not silent or "show-error" in args.flags)
                            else "")
    return stdout + _write_out(args, ex, code, len(body.encode()), hops), stderr, code


def _failure(args: Args, ex: Exchange) -> tuple[int, str]:
    """Return curl's exit code and message for an exchange (0, '' on success)."""
    ms = int(ex.connect * 1000)
    if ex.error.startswith("unsupported:"):
        return 1, f'Protocol "{ex.error.split(":")[1]}" not supported'
    errors = {"bad-url": (3, "URL rejected: Malformed input to a URL function"),
              "unresolved": (6, f"Could not resolve host: {ex.host}"),
              "refused": (7, f"Failed to connect to {ex.host} port {ex.port} after {ms} ms: Couldn't connect to "
                             "server"),
              "timeout": (28, f"Connection timed out after {ms + 1} milliseconds" if args.number("connect-timeout")
                          or args.number("max-time") else
                          f"Failed to connect to {ex.host} port {ex.port} after {ms} ms: Couldn't connect to server"),
              "slow": (28, f"Operation timed out after {int(ex.total * 1000) + 1} milliseconds with 0 bytes "
                           "received"),
              "http09": (1, "Received HTTP/0.9 when not allowed"), "empty": (52, "Empty reply from server"),
              "tls": (35, "OpenSSL/3.0.13: error:0A00010B:SSL routines::wrong version number"),
              "cert": (60, "SSL certificate problem: unable to get local issuer certificate\nMore details here: "
                           "https://curl.se/docs/sslcerts.html\n\ncurl failed to verify the legitimacy of the server "
                           "and therefore could not\nestablish a secure connection to it. To learn more about this "
                           "situation and\nhow to fix it, please visit the web page mentioned above.")}
    if ex.error:
        return errors[ex.error]
    if ex.response.status >= 400 and ({"fail", "fail-with-body"} & args.flags):
        return 22, f"The requested URL returned error: {ex.response.status}"
    return 0, ""


def _meter(ex: Exchange, size: int, code: int) -> str:
    """Return the progress meter curl writes to stderr when stdout is not a terminal."""
    done = 100 if ex.response is not None and code in (0, 22) else 0
    speed = int(size / max(ex.total, 0.001)) if done else 0
    shown = lambda n: str(n) if n < 100000 else f"{n // 1024}k"  # noqa: E731
    line = (f"{done:3d} {shown(size):>5}  {done:3d} {shown(size):>5}    0     0  {shown(speed):>5}      0 "
            f"--:--:-- --:--:-- --:--:-- {shown(speed):>5}")
    return METER + "\r" + line + "\n"


def _verbose(ex: Exchange, method: str, headers: dict) -> str:
    """Return what -v writes to stderr about the connection and the exchange."""
    if ex.error in ("unresolved", "bad-url") or ex.error.startswith("unsupported"):
        return f"* Could not resolve host: {ex.host}\n" if ex.error == "unresolved" else ""
    lines = [f"*   Trying {ex.ip}:{ex.port}..."]
    if ex.error in ("refused", "timeout"):
        return "\n".join(lines + [f"* connect to {ex.ip} port {ex.port} failed: "
                                  f"{'Connection refused' if ex.error == 'refused' else 'Connection timed out'}",
                                  "* Closing connection"]) + "\n"
    lines.append(f"* Connected to {ex.host} ({ex.ip}) port {ex.port}")
    host = ex.host if ex.port in (80, 443) else f"{ex.host}:{ex.port}"
    path = ex.url.split("://", 1)[-1]
    path = "/" + path.split("/", 1)[1] if "/" in path else "/"
    sent = [f"> {method} {path} HTTP/1.1", f"> Host: {host}", "> User-Agent: curl/8.5.0", "> Accept: */*"]
    lines += sent + [f"> {k}: {v}" for k, v in headers.items()] + [">"]
    if ex.response is not None:
        lines += [f"< {h}" for h in ex.headers()] + ["<", f"{{ [{len(ex.response.body.encode())} bytes data]"]
    lines.append(f"* Connection #0 to host {ex.host} left intact")
    return "\n".join(lines) + "\n"


def _write_out(args: Args, ex: Exchange, code: int, size: int, hops: int) -> str:
    """Expand -w's %{variables} and escapes."""
    template = args.last("write-out")
    if template is None:
        return ""
    status = ex.response.status if ex.response is not None and code not in (1, 52) else 0
    values = {"http_code": f"{status:03d}", "response_code": f"{status:03d}", "time_total": f"{ex.total:.6f}",
              "time_connect": f"{ex.connect:.6f}", "time_starttransfer": f"{ex.total:.6f}",
              "time_namelookup": "0.000512", "size_download": str(size), "remote_ip": ex.ip,
              "remote_port": str(ex.port) if ex.ip else "0", "url_effective": ex.url, "exitcode": str(code),
              "num_redirects": str(hops), "content_type": ex.response.content_type if ex.response else "",
              "errormsg": _failure(args, ex)[1] if code else ""}
    text = template.replace("\\n", "\n").replace("\\t", "\t").replace("\\r", "\r")
    for name, value in values.items():
        text = text.replace("%{" + name + "}", value)
    return text


PROGRAMS = {"curl": curl}
