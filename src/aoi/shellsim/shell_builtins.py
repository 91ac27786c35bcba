"""Shell builtins: the commands that change the shell itself (cd, export, exit, set, read...)."""

from __future__ import annotations

import fnmatch
import re

from aoi.shellsim.exprutils import test_expression
from aoi.shellsim.shell_lexer import NAME
from aoi.shellsim.util import echo_output

BASH_ONLY = {"source", "[[", "declare", "typeset", "shopt"}
OPTION_LETTERS = {"errexit": "e", "xtrace": "x", "pipefail": "|"}  # `set -o NAME`; pipefail has no letter


class ShellExit(Exception):
    """`exit N`, `set -e` or a fatal error: leave the (sub)shell with `status`."""

    def __init__(self, status: int):
        super().__init__(status)
        self.status = status


class LoopControl(Exception):
    """`break N` or `continue N`."""

    def __init__(self, kind: str, levels: int = 1):
        super().__init__(kind)
        self.kind, self.levels = kind, levels


class ReturnSignal(Exception):
    """`return N` from a function or sourced file."""

    def __init__(self, status: int):
        super().__init__(status)
        self.status = status


def shell_options(args: list[str]) -> tuple[set[str], list[str]]:
    """Split a shell's command line into option letters and the rest (`-lc`, `-o pipefail`, `--login`...).

    Example:
        >>> flags, rest = shell_options(["-ec", "echo hi", "x"])
        >>> sorted(flags), rest
        (['c', 'e'], ['echo hi', 'x'])
    """
    flags, i = set(), 0
    while i < len(args) and args[i][:1] in ("-", "+") and len(args[i]) > 1:
        arg, i = args[i], i + 1
        if arg == "--":
            break
        if arg in ("-o", "+o") and i < len(args):
            flags.add(OPTION_LETTERS.get(args[i], "")) if arg == "-o" else None
            i += 1
        elif not arg.startswith("--"):
            flags.update(arg[1:] if arg[0] == "-" else "")
    flags.discard("")
    return flags, args[i:]


def _int_arg(sh, io, name: str, text: str) -> int | None:
    """Parse a builtin's numeric argument, reporting it as dash or bash would."""
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    sh.error(io, f"{name}: {text}: numeric argument required" if sh.bash else f"{name}: Illegal number: {text}")
    return None


def b_true(sh, argv, io) -> int:
    """Succeed."""
    return 0


def b_false(sh, argv, io) -> int:
    """Fail."""
    return 1


def b_echo(sh, argv, io) -> int:
    """Print arguments (dash's echo always expands backslash escapes; bash's needs -e)."""
    io.out += echo_output(argv[1:], dash=not sh.bash)
    return 0


def b_cd(sh, argv, io) -> int:
    """Change directory (`cd -` to the previous one)."""
    target = argv[1] if len(argv) > 1 else sh.get("HOME") or "/"
    if target == "-":
        target = sh.get("OLDPWD") or sh.ctx.cwd
        io.out += f"{target}\n".encode()
    if not sh.ctx.is_dir(target):
        reason = "Not a directory" if sh.ctx.is_file(target) else "No such file or directory"
        sh.error(io, f"cd: {target}: {reason}" if sh.bash else f"cd: can't cd to {target}")
        return 1 if sh.bash else 2
    sh.assign("OLDPWD", sh.ctx.cwd)
    sh.ctx = sh.ctx.with_(cwd=sh.ctx.path(target))
    sh.assign("PWD", sh.ctx.cwd)
    return 0


def b_pwd(sh, argv, io) -> int:
    """Print the current directory."""
    io.out += f"{sh.ctx.cwd}\n".encode()
    return 0


def b_export(sh, argv, io, export: bool = True) -> int:
    """Export variables (`export A=1 B`), or list them."""
    names = [a for a in argv[1:] if not a.startswith("-")]
    if not names and export:
        for k in sorted(sh.exported & set(sh.vars)):
            v = sh.vars[k].replace('"', '\\"')
            io.out += (f'declare -x {k}="{v}"\n' if sh.bash else f"export {k}='{sh.vars[k]}'\n").encode()
    status = 0
    for arg in names:
        name, eq, value = arg.partition("=")
        if not NAME.fullmatch(name):
            bad = f"`{arg}': not a valid identifier" if sh.bash else f"{name}: bad variable name"
            sh.error(io, f"{argv[0]}: {bad}")
            status = 1 if sh.bash else 2
            continue
        if eq or name not in sh.vars:
            sh.assign(name, value if eq else sh.vars.get(name, ""), export=export)
        sh.exported.update([name] if export else [])
    return status


def b_local(sh, argv, io) -> int:
    """Set variables (the twin's shell has no function scope)."""
    return b_export(sh, argv, io, export=False)


def b_unset(sh, argv, io) -> int:
    """Unset variables (-v) or functions (-f)."""
    functions = "-f" in argv
    for name in (a for a in argv[1:] if not a.startswith("-")):
        (sh.funcs if functions else sh.vars).pop(name, None)
        sh.exported.discard(name)
    return 0


def b_exit(sh, argv, io) -> int:
    """Leave the shell with a status (default: the last command's)."""
    status = _int_arg(sh, io, "exit", argv[1]) if len(argv) > 1 else sh.status
    raise ShellExit(2 if status is None else status & 255)


def b_return(sh, argv, io) -> int:
    """Return from a function."""
    status = _int_arg(sh, io, "return", argv[1]) if len(argv) > 1 else sh.status
    raise ReturnSignal(2 if status is None else status & 255)


def b_break(sh, argv, io) -> int:
    """Leave (break) or restart (continue) the innermost N loops."""
    levels = _int_arg(sh, io, argv[0], argv[1]) if len(argv) > 1 else 1
    raise LoopControl(argv[0], max(levels or 1, 1))


def b_set(sh, argv, io) -> int:
    """Set options (-e, -x, -o pipefail; -u is tolerated) or positional parameters (`set -- a b`)."""
    args, i = argv[1:], 0
    if not args:
        io.out += "".join(f"{k}='{v}'\n" for k, v in sorted(sh.vars.items())).encode()
    while i < len(args) and args[i][:1] in ("-", "+") and args[i] not in ("-", "--"):
        on, letters, i = args[i][0] == "-", args[i][1:], i + 1
        if "o" in letters and i < len(args):
            letters, i = letters + OPTION_LETTERS.get(args[i], ""), i + 1
        for letter, attr in (("e", "errexit"), ("x", "xtrace"), ("|", "pipefail")):
            if letter in letters:
                setattr(sh, attr, on)
    if i < len(args):
        sh.args = args[i + (args[i] == "--"):]
    return 0


def b_shift(sh, argv, io) -> int:
    """Drop the first N positional parameters."""
    n = _int_arg(sh, io, "shift", argv[1]) if len(argv) > 1 else 1
    if n is None or n > len(sh.args):
        if not sh.bash:
            sh.error(io, "shift: can't shift that many")
        return 1 if sh.bash else 2
    sh.args = sh.args[n:]
    return 0


def b_eval(sh, argv, io) -> int:
    """Run the arguments as a script in this shell."""
    return sh.run_source(" ".join(argv[1:]), io, catch_exit=False)


def b_source(sh, argv, io) -> int:
    """Run a file in this shell (`. file` / `source file`)."""
    if len(argv) < 2:
        sh.error(io, f"{argv[0]}: filename argument required")
        return 2
    try:
        src = sh.ctx.read(argv[1]).decode("utf-8", "surrogateescape")
    except OSError as e:
        sh.error(io, f"{argv[1]}: {e.strerror}" if sh.bash else f"{argv[0]}: cannot open {argv[1]}: No such file")
        if not sh.bash:
            raise ShellExit(2) from None
        return 1
    saved = sh.args
    sh.args = argv[2:] or sh.args
    try:
        return sh.run_source(src, io, catch_exit=False)
    except ReturnSignal as r:
        return r.status
    finally:
        sh.args = saved


def b_read(sh, argv, io) -> int:
    """Read a line from stdin into variables (REPLY by default); fail at end of input."""
    raw, names, args = "-r" in argv, [], iter(argv[1:])
    for arg in args:
        if arg in ("-p", "-t", "-n", "-d", "-u"):
            next(args, None)
        elif not arg.startswith("-"):
            names.append(arg)
    names = names or ["REPLY"]
    data = io.stdin.readline()
    line = (data or b"").decode("utf-8", "surrogateescape")
    text = line.rstrip("\n") if raw else re.sub(r"\\(.)", r"\1", line.rstrip("\n"))
    parts = ifs_fields(text, sh.vars.get("IFS", " \t\n"), len(names)) if names != ["REPLY"] else [text]
    for n, name in enumerate(names):
        sh.assign(name, parts[n] if n < len(parts) else "")
    return 0 if line.endswith("\n") else 1


def ifs_fields(text: str, ifs: str, count: int) -> list[str]:
    """Split a line into at most `count` fields by IFS as `read` does: IFS blanks gather, other IFS characters cut.

    Example:
        >>> ifs_fields("  pod/web-1 x ", "/", 2), ifs_fields(" a  b c ", " ", 2), ifs_fields("a:b", "", 2)
        (['  pod', 'web-1 x '], ['a', 'b c'], ['a:b'])
    """
    blank, other = [re.escape(c) for c in ifs if c in " \t\n"], [re.escape(c) for c in ifs if c not in " \t\n"]
    text = text.strip("".join(c for c in ifs if c in " \t\n"))
    if not ifs or not text:
        return [text] if text else []
    gap = f"[{''.join(blank)}]*" if blank else ""
    cuts = [f"{gap}[{''.join(other)}]{gap}"] * bool(other) + [f"[{''.join(blank)}]+"] * bool(blank)
    return re.split("|".join(cuts), text, maxsplit=count - 1)


def b_command(sh, argv, io) -> int:
    """`command -v NAME` says where NAME comes from; `command NAME ARGS` runs it."""
    if len(argv) > 1 and argv[1] in ("-v", "-V"):
        status = 0
        for name in argv[2:]:
            where = describe(sh, name)
            status |= where is None
            if where is not None:
                io.out += f"{name if where.endswith(('builtin', 'function')) else where}\n".encode()
        return status
    return sh.invoke(argv[1:], {}, io) if len(argv) > 1 else 0


def b_type(sh, argv, io) -> int:
    """Say what each name is: a builtin, a function or a program path."""
    status = 0
    for name in argv[1:]:
        where = describe(sh, name)
        if where is None and sh.bash:
            sh.error(io, f"type: {name}: not found")
            status = 1
        elif where is None:
            io.out += f"{name}: not found\n".encode()
            status = 127
        else:
            io.out += f"{name} is {where}\n".encode()
    return status


def describe(sh, name: str) -> str | None:
    """Return "a shell builtin", "a function" or the program's path; None when nothing runs as `name`."""
    if name in sh.funcs:
        return "a function"
    if lookup(name, sh.bash) is not None:
        return "a shell builtin"
    if sh.ctx.resolve(name) is not None:
        return name if "/" in name else f"/usr/bin/{name}"
    return None


def b_exec(sh, argv, io) -> int:
    """Replace the shell with a command (redirection-only `exec` is accepted and ignored)."""
    if len(argv) < 2:
        return 0
    raise ShellExit(sh.invoke(argv[1:], {}, io))


def b_test2(sh, argv, io) -> int:
    """Run bash's `[[ ... ]]` for the common cases: test operators, `==` globs and `=~` regexes."""
    args = argv[1:-1] if argv[-1] == "]]" else argv[1:]
    if len(args) == 3 and args[1] in ("==", "=", "!=", "=~"):
        left, op, right = args
        hit = re.search(right, left) is not None if op == "=~" else fnmatch.fnmatchcase(left, right)
        return int(hit == (op == "!="))
    status, message = test_expression(args, sh.ctx, "bash")
    if message:
        sh.error(io, f"[[: {message}")
    return status


def b_test(sh, argv, io) -> int:
    """Evaluate `test ...` or `[ ... ]`, with the shell's own error messages."""
    style = "bash" if sh.bash else "dash"
    if argv[0] == "[" and argv[-1] != "]":
        sh.error(io, "[: missing `]'" if sh.bash else "[: missing ]")
        return 2
    status, message = test_expression(argv[1:-1] if argv[0] == "[" else argv[1:], sh.ctx, style)
    if message:
        sh.error(io, f"{argv[0]}: {message}")
    return status


def b_noop(sh, argv, io) -> int:
    """Accept a builtin the twin's shell does not model (trap, wait, ulimit, umask, hash, alias, shopt)."""
    if argv[0] in ("ulimit", "umask") and len(argv) == 1:
        io.out += b"unlimited\n" if argv[0] == "ulimit" else b"0022\n"
    return 0


BUILTINS = {":": b_true, "true": b_true, "false": b_false, "echo": b_echo, "cd": b_cd, "pwd": b_pwd,
            "export": b_export, "local": b_local, "readonly": b_local, "declare": b_local, "typeset": b_local,
            "unset": b_unset, "exit": b_exit, "return": b_return, "break": b_break, "continue": b_break,
            "set": b_set, "shift": b_shift, "eval": b_eval, ".": b_source, "source": b_source, "read": b_read,
            "command": b_command, "type": b_type, "exec": b_exec, "[[": b_test2,
            "test": b_test, "[": b_test,
            **dict.fromkeys(("trap", "wait", "ulimit", "umask", "hash", "alias", "shopt", "times"), b_noop)}


def lookup(name: str, bash: bool):
    """Return the builtin `name` of a dash (`bash=False`) or bash shell, or None."""
    if name in BASH_ONLY and not bash:
        return None
    return BUILTINS.get(name)
