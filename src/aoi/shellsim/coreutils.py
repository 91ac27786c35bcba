"""File utilities: echo, cat, ls, find, mkdir, touch, rm, cp, mv, tee, base64, checksums, basename, dirname."""

from __future__ import annotations

import base64
import binascii
import fnmatch
import hashlib
import math
import posixpath
import re

from aoi.shellsim.context import ExecContext, ExecResult
from aoi.shellsim.util import (
    PROGRAMS,
    Opts,
    Usage,
    echo_output,
    getopt,
    mtime_stamp,
    program,
    raw,
    read_inputs,
    result,
    split_lines,
    text,
)

__all__ = ["PROGRAMS"]


@program("echo")
def echo(argv, ctx):
    """Print the arguments (-n: no newline, -e: backslash escapes)."""
    return ExecResult(echo_output(argv[1:]), b"", 0)


@program("true")
def true(argv, ctx):
    """Succeed."""
    return ExecResult(b"", b"", 0)


@program("false")
def false(argv, ctx):
    """Fail."""
    return ExecResult(b"", b"", 1)


@program("cat")
def cat(argv, ctx):
    """Concatenate files and stdin (`-`); -n numbers lines."""
    opts, names = getopt(argv, "nAevtsbu", longs={"number": "n"})
    errors = []
    data = b"".join(d for _, d in read_inputs("cat", names, ctx, errors))
    if "n" in opts:
        data = raw("".join(f"{n:>6}\t{line}\n" for n, line in enumerate(split_lines(text(data)), 1)))
    return result(data, errors)


def _ls_line(ctx: ExecContext, name: str, path: str, opts: Opts, width: int) -> str:
    is_dir = ctx.is_dir(path) and not ctx.is_file(path)
    size = 4096 if is_dir else len(ctx.files.get(path, b""))
    if "l" not in opts:
        return name + ("/" if is_dir and "F" in opts else "")
    mode = "drwxr-xr-x" if is_dir else "-rwxr-xr-x" if ctx.files.get(path, b"").startswith(b"#!") else "-rw-r--r--"
    shown = _human(size) if "h" in opts else str(size)
    return f"{mode} {2 if is_dir else 1} root root {shown:>{width}} {mtime_stamp(ctx.now)} {name}"


def _human(n: int) -> str:
    for unit in ("", "K", "M", "G", "T"):
        if n < 1024 or unit == "T":
            return str(n) if not unit else f"{n:.1f}{unit}" if n < 10 else f"{math.ceil(n)}{unit}"
        n = n / 1024
    return str(n)


def _ls_entries(ctx: ExecContext, pairs: list[tuple[str, str]], opts: Opts, total: bool) -> str:
    size = lambda p: 4096 if ctx.is_dir(p) else len(ctx.files.get(p, b""))  # noqa: E731
    pairs = sorted(pairs, key=(lambda e: -size(e[1])) if "S" in opts else (lambda e: e[0]))
    pairs = pairs[::-1] if "r" in opts else pairs
    width = max([len(_human(size(p)) if "h" in opts else str(size(p))) for _, p in pairs] + [1])
    lines = [_ls_line(ctx, name, path, opts, width) for name, path in pairs]
    if "l" in opts and total:
        lines.insert(0, f"total {sum((size(p) + 4095) // 4096 * 4 for _, p in pairs)}")
    return "".join(f"{line}\n" for line in lines)


def _ls_dir(ctx: ExecContext, name: str, opts: Opts, blocks: list[str], header: bool) -> None:
    path = ctx.path(name)
    names = [e for e in ctx.list_dir(path) if "a" in opts or "A" in opts or not e.startswith(".")]
    pairs = [(e, posixpath.join(path, e)) for e in names]
    pairs += [(".", path), ("..", posixpath.dirname(path))] if "a" in opts else []
    blocks.append((f"{name}:\n" if header else "") + _ls_entries(ctx, pairs, opts, total=True))
    for entry, sub in sorted(pairs):
        if "R" in opts and entry not in (".", "..") and ctx.is_dir(sub) and not ctx.is_file(sub):
            _ls_dir(ctx, posixpath.join(name, entry), opts, blocks, True)


@program("ls", usage=2)
def ls(argv, ctx):
    """List directory contents (-l -a -A -1 -R -d -h -r -S -F), one name per line as without a terminal."""
    longs = {"all": "a", "almost-all": "A", "recursive": "R", "directory": "d", "human-readable": "h", "reverse": "r"}
    opts, names = getopt(argv, "laA1RdhtrSFCi", longs=longs)
    errors, files, dirs = [], [], []
    for name in names or ["."]:
        if not ctx.exists(name):
            errors.append(f"ls: cannot access '{name}': No such file or directory")
        else:
            (dirs if ctx.is_dir(name) and not ctx.is_file(name) and "d" not in opts else files).append(name)
    blocks = [_ls_entries(ctx, [(f, ctx.path(f)) for f in files], opts, total=False)] if files else []
    for d in sorted(dirs):
        _ls_dir(ctx, d, opts, blocks, header=len(names) > 1 or "R" in opts)
    return result("\n".join(blocks), errors, fail=2)


@program("find")
def find(argv, ctx):
    """Find files: find [PATH...] [-name P] [-iname P] [-path P] [-type f|d] [-maxdepth N] [-mindepth N]."""
    args, roots, errors, out = argv[1:], [], [], []
    while args and not args[0].startswith("-"):
        roots.append(args.pop(0))
    tests = dict(zip(args[::2], args[1::2], strict=False))
    unknown = [a for a in args[::2] if a not in ("-name", "-iname", "-path", "-type", "-maxdepth", "-mindepth")]
    if unknown:
        return result("", [f"find: unknown predicate '{unknown[0]}'"])
    for root in roots or ["."]:
        if not ctx.exists(root):
            errors.append(f"find: '{root}': No such file or directory")
            continue
        base = ctx.path(root)
        for p in [base] + [p for p in ctx.tree() if p.startswith(base.rstrip("/") + "/")]:
            shown = root if p == base else root.rstrip("/") + "/" + p[len(base):].lstrip("/")
            if _find_match(ctx, p, shown, p[len(base):].count("/"), tests):
                out.append(shown)
    return result("".join(f"{o}\n" for o in out), errors)


def _find_match(ctx: ExecContext, path: str, shown: str, depth: int, tests: dict[str, str]) -> bool:
    name, kind = posixpath.basename(path) or "/", "f" if ctx.is_file(path) else "d"
    checks = {"-name": lambda v: _fnmatch(name, v), "-iname": lambda v: _fnmatch(name.lower(), v.lower()),
              "-path": lambda v: _fnmatch(shown, v), "-type": lambda v: kind == v,
              "-maxdepth": lambda v: depth <= int(v), "-mindepth": lambda v: depth >= int(v)}
    return all(checks[k](v) for k, v in tests.items())


def _fnmatch(name: str, pattern: str) -> bool:
    return fnmatch.fnmatchcase(name, pattern)


@program("mkdir")
def mkdir(argv, ctx):
    """Make directories in the scratch overlay (-p: parents too, no error if present)."""
    opts, names = getopt(argv, "pv", valued="m", longs={"parents": "p"})
    errors = []
    for name in names:
        path = ctx.path(name)
        steps = ["/".join(path.split("/")[:n]) for n in range(2, path.count("/") + 2)] if "p" in opts else [name]
        for step in steps:
            if "p" in opts and ctx.is_dir(step):
                continue
            try:
                ctx.make_dir(step)
            except OSError as e:
                errors.append(f"mkdir: cannot create directory '{name}': {e.strerror}")
                break
    return result("", errors)


@program("touch")
def touch(argv, ctx):
    """Create empty files in the scratch overlay."""
    _, names = getopt(argv, "acm", valued="dtr")
    errors = []
    for name in names:
        try:
            ctx.write(name, b"", append=True) if not ctx.is_dir(name) else None
        except OSError as e:
            errors.append(f"touch: cannot touch '{name}': {e.strerror}")
    return result("", errors)


@program("rm")
def rm(argv, ctx):
    """Remove files (-r directories, -f no complaints) from the scratch overlay."""
    opts, names = getopt(argv, "rRfvid", longs={"recursive": "r", "force": "f"})
    errors = []
    for name in names:
        if ctx.path(name) == "/":
            errors.append("rm: it is dangerous to operate recursively on '/'")
            continue
        try:
            ctx.remove(name, recursive="r" in opts or "R" in opts)
        except OSError as e:
            if not ("f" in opts and isinstance(e, FileNotFoundError)):
                errors.append(f"rm: cannot remove '{name}': {e.strerror}")
    return result("", errors)


def _copy(ctx: ExecContext, src: str, dst: str, recursive: bool, errors: list[str], prog: str) -> None:
    if ctx.is_dir(dst):
        dst = posixpath.join(dst, posixpath.basename(src.rstrip("/")))
    if ctx.is_dir(src) and not ctx.is_file(src):
        if not recursive:
            return errors.append(f"{prog}: -r not specified; omitting directory '{src}'")
        base = ctx.path(src)
        for p in [p for p in ctx.tree() if p.startswith(base + "/") and ctx.is_file(p)]:
            ctx.files[ctx.path(dst) + p[len(base):]] = ctx.files[p]
        ctx.files.setdefault(ctx.path(dst) + "/", b"")
        return None
    try:
        ctx.write(dst, ctx.read(src))
    except OSError as e:
        errors.append(f"{prog}: cannot stat '{src}': {e.strerror}" if not ctx.exists(src)
                      else f"{prog}: cannot create regular file '{dst}': {e.strerror}")


@program("cp")
def cp(argv, ctx):
    """Copy files (-r: directories) in the scratch overlay."""
    opts, names = getopt(argv, "rRafpv", longs={"recursive": "r"})
    if len(names) < 2:
        raise Usage(f"missing destination file operand after '{names[0]}'" if names else "missing file operand")
    errors = []
    for src in names[:-1]:
        _copy(ctx, src, names[-1], bool({"r", "R", "a"} & set(opts)), errors, "cp")
    return result("", errors)


@program("mv")
def mv(argv, ctx):
    """Move files in the scratch overlay."""
    _, names = getopt(argv, "fvn")
    if len(names) < 2:
        raise Usage(f"missing destination file operand after '{names[0]}'" if names else "missing file operand")
    errors = []
    for src in names[:-1]:
        before = len(errors)
        _copy(ctx, src, names[-1], True, errors, "mv")
        if len(errors) == before:
            ctx.remove(src, recursive=True)
    return result("", errors)


@program("tee")
def tee(argv, ctx):
    """Copy stdin to stdout and to files (-a: append)."""
    opts, names = getopt(argv, "ai", longs={"append": "a"})
    errors = []
    for name in names:
        try:
            ctx.write(name, ctx.stdin, append="a" in opts)
        except OSError as e:
            errors.append(f"tee: {name}: {e.strerror}")
    return result(ctx.stdin, errors)


@program("base64")
def base64_(argv, ctx):
    """Encode (76-column lines; -w N) or decode (-d) base64."""
    opts, names = getopt(argv, "di", valued="w", longs={"decode": "d", "wrap": "w"})
    errors = []
    data = b"".join(d for _, d in read_inputs("base64", names, ctx, errors))
    if "d" in opts:
        try:
            return result(base64.b64decode(re.sub(rb"\s", b"", data), validate=True), errors)
        except (binascii.Error, ValueError):
            return result("", errors + ["base64: invalid input"])
    encoded, width = text(base64.b64encode(data)), int(opts.value("w", "76"))
    lines = [encoded[i:i + width] for i in range(0, len(encoded), width)] if width else [encoded]
    return result("".join(f"{line}\n" for line in lines if line) or ("" if width else "\n"), errors)


def _sum(algorithm: str):
    def run(argv, ctx):
        _, names = getopt(argv, "bctw")
        errors, out = [], []
        for name, data in read_inputs(argv[0].rsplit("/", 1)[-1], names, ctx, errors):
            out.append(f"{hashlib.new(algorithm, data).hexdigest()}  {name}\n")
        return result("".join(out), errors)
    return run


for _name, _algo in (("md5sum", "md5"), ("sha1sum", "sha1"), ("sha256sum", "sha256")):
    program(_name)(_sum(_algo))


@program("basename")
def basename(argv, ctx):
    """Strip the directory (and a suffix) from a name."""
    if len(argv) < 2:
        raise Usage("missing operand")
    name = posixpath.basename(argv[1].rstrip("/")) or "/"
    if len(argv) > 2 and name.endswith(argv[2]) and name != argv[2]:
        name = name[:-len(argv[2])]
    return result(name + "\n")


@program("dirname")
def dirname(argv, ctx):
    """Strip the last component from a name."""
    if len(argv) < 2:
        raise Usage("missing operand")
    return result("".join(f"{posixpath.dirname(a.rstrip('/')) or '.'}\n" for a in argv[1:]))
