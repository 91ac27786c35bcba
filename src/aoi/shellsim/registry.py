"""The program registry and `run`, what `kubectl exec POD -- argv...` calls."""

from __future__ import annotations

import posixpath

from aoi.shellsim.context import ExecContext, ExecResult, Program


class Registry:
    """Programs by name; the twin adds its own (mongo, redis-cli, curl...) next to the shell and coreutils.

    Example:
        >>> reg = Registry()
        >>> reg.register("hello", lambda argv, ctx: ExecResult(b"hi\\n", b"", 0))
        >>> reg.lookup("/usr/local/bin/hello")([], None).stdout
        b'hi\\n'
    """

    def __init__(self, programs: dict[str, Program] | None = None):
        self._programs: dict[str, Program] = dict(programs or {})

    def register(self, name: str, program: Program) -> None:
        """Add or replace program `name` (a basename: `mongo`, not `/usr/bin/mongo`)."""
        self._programs[posixpath.basename(name)] = program

    def lookup(self, name: str) -> Program | None:
        """Return the program called `name`, looked up by basename."""
        return self._programs.get(posixpath.basename(name))

    def names(self) -> list[str]:
        """Return the registered names, sorted."""
        return sorted(self._programs)

    def copy(self) -> Registry:
        """Return an independent copy (to extend for one pod without touching the original)."""
        return Registry(self._programs)


_DEFAULT: Registry | None = None


def default_registry() -> Registry:
    """Return a fresh registry with the shells and the utilities.

    Example:
        >>> {"sh", "bash", "grep", "ls"} <= set(default_registry().names())
        True
    """
    global _DEFAULT
    if _DEFAULT is None:
        from aoi.shellsim import awk, coreutils, exprutils, sed, shell, sysutils, textutils, util  # noqa: F401

        base = Registry(util.PROGRAMS)  # filled as the modules above register
        for name in ("sh", "dash", "ash"):
            base.register(name, shell.sh_program)
        base.register("bash", shell.bash_program)
        _DEFAULT = base
    return _DEFAULT.copy()


def _not_found(argv0: str, ctx: ExecContext) -> ExecResult:
    """Return what the container runtime says when argv[0] cannot be exec'd (kubectl shows exit 126)."""
    if "/" not in argv0:
        reason = f'exec: "{argv0}": executable file not found in $PATH'
    elif ctx.exists(argv0):
        reason = f'exec: "{argv0}": permission denied'
    else:
        reason = f'exec: "{argv0}": stat {argv0}: no such file or directory'
    return ExecResult(b"", f"OCI runtime exec failed: exec failed: unable to start container process: {reason}: "
                           f"unknown\n".encode(), 126)


def run(argv: list[str], ctx: ExecContext) -> ExecResult:
    """Run `argv` in the container as `kubectl exec` does, on a scratch copy of its files.

    The copy means writes (`> file`, touch, rm) last for this exec only: the twin does not persist a container's
    files between execs.

    Example:
        >>> ctx = ExecContext({"metadata": {"name": "web-0"}}, "web", {"A": "1"}, {}, [], 0.0,
        ...                   programs=default_registry())
        >>> run(["sh", "-c", "echo $A; hostname"], ctx).stdout
        b'1\\nweb-0\\n'
        >>> run(["nosuch"], ctx).exit_code
        126
    """
    ctx = ctx.with_(files=dict(ctx.files), steps=[0])
    program = ctx.resolve(argv[0]) if argv else None
    if program is None:
        return _not_found(argv[0] if argv else "", ctx)
    return program(list(argv), ctx)
