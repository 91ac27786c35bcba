"""Helpers the utilities share: registration, GNU option parsing, inputs, escapes and result building."""

from __future__ import annotations

import posixpath
import re
import time

from aoi.shellsim.context import ExecContext, ExecResult, Program

PROGRAMS: dict[str, Program] = {}
_ESC = {"n": "\n", "t": "\t", "\\": "\\", "a": "\a", "b": "\b", "e": "\x1b", "f": "\f", "r": "\r", "v": "\v"}
_ESCAPE = re.compile(r"\\(c|[ntr\\abefv]|0[0-7]{0,3}|[1-7][0-7]{0,2}|x[0-9a-fA-F]{1,2})")


class Usage(Exception):
    """A bad command line; `code` overrides the program's usage exit status."""

    def __init__(self, message: str, code: int | None = None, hint: bool = True, prefix: bool = True):
        super().__init__(message)
        self.code, self.hint, self.prefix = code, hint, prefix


class Opts(dict):
    """Parsed options: flags map to a count, valued options to the list of their values."""

    def value(self, key: str, default=None):
        """Return the last value given for option `key`."""
        values = self.get(key)
        return values[-1] if values else default


def program(*names: str, usage: int = 1):
    """Register a utility under `names`; a Usage error becomes GNU's message and exit status `usage`."""
    def wrap(fn):
        def run(argv: list[str], ctx: ExecContext) -> ExecResult:
            try:
                return fn(argv, ctx)
            except Usage as e:
                prog = posixpath.basename(argv[0])
                hint = f"\nTry '{prog} --help' for more information." if e.hint else ""
                message = f"{prog}: {e}" if e.prefix else str(e)
                return ExecResult(b"", f"{message}{hint}\n".encode(), usage if e.code is None else e.code)
        run.__doc__, run.__name__ = fn.__doc__, fn.__name__
        PROGRAMS.update(dict.fromkeys(names, run))
        return run
    return wrap


def getopt(argv: list[str], flags: str = "", valued: str = "", longs: dict[str, str] | None = None):
    """Split argv[1:] into Opts and operands as GNU getopt does (options may follow operands; `--` ends them).

    Example:
        >>> getopt(["grep", "-in", "-e", "x", "file"], "in", "e")
        ({'i': 1, 'n': 1, 'e': ['x']}, ['file'])
    """
    opts, operands, args, i = Opts(), [], argv[1:], 0
    while i < len(args):
        arg, i = args[i], i + 1
        if arg == "--":
            return opts, operands + args[i:]
        if arg.startswith("--"):
            name, eq, value = arg[2:].partition("=")
            key = (longs or {}).get(name)
            if key is None:
                raise Usage(f"unrecognized option '{arg}'")
            if key in valued and not eq:
                if i >= len(args):
                    raise Usage(f"option '{arg}' requires an argument")
                value, i = args[i], i + 1
            _store(opts, key, value, key in valued)
        elif arg.startswith("-") and len(arg) > 1:
            i = _short(arg, args, i, opts, flags, valued)
        else:
            operands.append(arg)
    return opts, operands


def _store(opts: Opts, key: str, value: str, valued: bool) -> None:
    if valued:
        opts.setdefault(key, []).append(value)
    else:
        opts[key] = opts.get(key, 0) + 1


def _short(arg: str, args: list[str], i: int, opts: Opts, flags: str, valued: str) -> int:
    """Parse a cluster of short options such as `-in5` (valued options take the rest or the next arg)."""
    for j, ch in enumerate(arg[1:], 1):
        if ch in valued:
            if j + 1 < len(arg):
                _store(opts, ch, arg[j + 1:], True)
            elif i < len(args):
                _store(opts, ch, args[i], True)
                i += 1
            else:
                raise Usage(f"option requires an argument -- '{ch}'")
            return i
        if ch not in flags:
            raise Usage(f"invalid option -- '{ch}'")
        _store(opts, ch, "", False)
    return i


def text(data: bytes) -> str:
    """Decode bytes losslessly (undecodable bytes survive a round trip)."""
    return data.decode("utf-8", "surrogateescape")


def raw(s: str) -> bytes:
    """Encode text made by text()."""
    return s.encode("utf-8", "surrogateescape")


def result(out: str | bytes = "", errors: list[str] | None = None, code: int | None = None, fail: int = 1):
    """Return an ExecResult from output text and error lines (exit `fail` when there are errors)."""
    err = "".join(f"{e}\n" for e in errors or [])
    status = code if code is not None else (fail if errors else 0)
    return ExecResult(out if isinstance(out, bytes) else raw(out), raw(err), status)


def read_inputs(prog: str, names: list[str], ctx: ExecContext, errors: list[str],
                fmt: str = "{prog}: {name}: {reason}") -> list[tuple[str, bytes]]:
    """Read each operand (`-` or none: stdin), adding GNU-style lines to `errors` for unreadable ones."""
    out = []
    for name in names or ["-"]:
        try:
            out.append((name, ctx.stdin if name == "-" else ctx.read(name)))
        except OSError as e:
            errors.append(fmt.format(prog=prog, name=name, reason=e.strerror))
    return out


def split_lines(s: str) -> list[str]:
    """Split text into lines without their newlines (a final newline adds no empty line)."""
    lines = s.split("\n")
    return lines[:-1] if lines and lines[-1] == "" else lines


def unescape(s: str, printf: bool = False) -> tuple[str, bool]:
    """Expand backslash escapes as echo -e (or printf) does; return the text and whether \\c stopped it."""
    out, pos = [], 0
    for m in _ESCAPE.finditer(s):
        out.append(s[pos:m.start()])
        pos, g = m.end(), m[1]
        if g == "c":
            return "".join(out), True
        if g in _ESC:
            out.append(_ESC[g])
        elif g[0] == "x":
            out.append(_char(int(g[1:], 16)))
        elif g[0] == "0" or printf:
            out.append(_char(int(g if printf else g[1:] or "0", 8) & 255))
        else:
            out.append("\\" + g)
    return "".join(out) + s[pos:], False


def _char(value: int) -> str:
    return chr(value) if value < 128 else chr(0xDC00 + value)  # a raw byte, as surrogateescape encodes it


def echo_output(args: list[str], dash: bool = False) -> bytes:
    """Return what echo prints: GNU/bash with -n -e -E, or dash (only -n, escapes always on)."""
    newline, escape = True, dash
    while args and re.fullmatch(r"-n" if dash else r"-[neE]+", args[0]):
        newline = newline and "n" not in args[0]
        escape = {"e": True, "E": False}.get(args[0][-1], escape) if not dash else True
        args = args[1:]
        if dash:
            break
    s = " ".join(args)
    if escape:
        s, stop = unescape(s)
        newline = newline and not stop
    return raw(s + "\n" * newline)


def mtime_stamp(now: float) -> str:
    """Format a modification time as ls -l does (`Jun  2 09:00`)."""
    t = time.gmtime(now)
    return f"{time.strftime('%b', t)} {t.tm_mday:>2} {t.tm_hour:02d}:{t.tm_min:02d}"


def run_command(prog: str, argv: list[str], ctx: ExecContext, env: dict[str, str] | None = None) -> ExecResult:
    """Run a program for env, xargs and timeout; 127 when it does not exist."""
    runner = ctx.resolve(argv[0])
    if runner is None:
        return result("", [f"{prog}: '{argv[0]}': No such file or directory"], code=127)
    return runner(argv, ctx.with_(env=env if env is not None else ctx.env))
