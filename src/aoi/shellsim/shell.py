"""The `sh` and `bash` programs: a small POSIX shell (dash or bash flavour) over the simulated container.

Writes (`> file`, touch, rm...) go to the exec's scratch copy of the files: like a real container they last for this
exec, but unlike one they are not kept for the next exec, because the twin rebuilds the files for every exec.
"""

from __future__ import annotations

from aoi.shellsim.context import ExecContext, ExecResult
from aoi.shellsim.interpreter import Shell
from aoi.shellsim.limits import STEP_LIMIT, StepLimit
from aoi.shellsim.shell_builtins import shell_options
from aoi.shellsim.shell_io import IO, Stdin


def shell_main(argv: list[str], ctx: ExecContext, bash: bool) -> ExecResult:
    """Run `sh -c SCRIPT [arg0 args]`, `sh FILE [args]` or `sh` reading the script from stdin."""
    flags, rest = shell_options(argv[1:])
    arg0 = argv[0]
    if "c" in flags:
        if not rest:
            message = f"{arg0}: -c: option requires an argument\n" if bash else f"{arg0}: 0: -c requires an argument\n"
            return ExecResult(b"", message.encode(), 2)
        src, arg0, args, stdin = rest[0], rest[1] if len(rest) > 1 else arg0, rest[2:], ctx.stdin
    elif rest:
        try:
            src, arg0, args, stdin = ctx.read(rest[0]).decode("utf-8", "surrogateescape"), rest[0], rest[1:], ctx.stdin
        except OSError as e:
            if bash:
                return ExecResult(b"", f"{arg0}: {rest[0]}: {e.strerror}\n".encode(), 127)
            return ExecResult(b"", f"{arg0}: 0: cannot open {rest[0]}: No such file\n".encode(), 2)
    else:
        src, args, stdin = ctx.stdin.decode("utf-8", "surrogateescape"), [], b""
    shell = Shell(ctx, arg0, args, bash=bash, command_mode="c" in flags)
    shell.errexit, shell.xtrace, shell.pipefail = "e" in flags, "x" in flags, "|" in flags
    io = IO(Stdin(stdin), bytearray(), bytearray())
    try:
        status = shell.run_source(src, io)
    except StepLimit as limit:
        why = str(limit) or f"stopped after {STEP_LIMIT} commands (does a loop never end?)"
        io.err += f"{shell.prefix()}{why}\n".encode()
        status = 124
    except RecursionError:  # a script that runs itself, or eval without end
        io.err += f"{shell.prefix()}stopped: commands nested too deeply\n".encode()
        status = 2
    return ExecResult(bytes(io.out), bytes(io.err), status)


def sh_program(argv: list[str], ctx: ExecContext) -> ExecResult:
    """Run dash-flavoured `sh`.

    Example:
        >>> from aoi.shellsim.registry import default_registry
        >>> ctx = ExecContext({"metadata": {"name": "p"}}, "c", {}, {}, [], 0.0, programs=default_registry())
        >>> sh_program(["sh", "-c", "echo $((1 + 2)) && nosuch"], ctx)
        ExecResult(stdout=b'3\\n', stderr=b'sh: 1: nosuch: not found\\n', exit_code=127)
    """
    return shell_main(argv, ctx, bash=False)


def bash_program(argv: list[str], ctx: ExecContext) -> ExecResult:
    """Run bash-flavoured `bash` (the same interpreter, bash's messages).

    Example:
        >>> from aoi.shellsim.registry import default_registry
        >>> ctx = ExecContext({"metadata": {"name": "p"}}, "c", {}, {}, [], 0.0, programs=default_registry())
        >>> bash_program(["bash", "-c", "nosuch"], ctx).stderr
        b'bash: line 1: nosuch: command not found\\n'
    """
    return shell_main(argv, ctx, bash=True)
