"""exec_shell without a shell: kubectl, optionally piped through text filters, as the role's policy allows."""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Callable

from aoi.safety import gate
from aoi.safety.policy import one_line
from aoi.safety.shellwords import Refused
from aoi.twin.programs.context import ExecContext
from aoi.twin.programs.registry import default_registry

# AIOpsLab refuses these before running anything (substring match), with these short answers.
BLOCKED = (("kubectl edit", "Error: Cannot use `kubectl edit`. Use `kubectl patch` instead."),
           ("edit svc", "Error: Cannot use `kubectl edit`. Use `kubectl patch` instead."),
           ("kubectl port-forward", "Error: Cannot use `kubectl port-forward` because it is an interactive command."),
           ("docker logs -f", "Error: Cannot use `docker logs -f`. Use `docker logs` instead."),
           ("kubectl logs -f", "Error: Cannot use `kubectl logs -f`. Use `kubectl logs` instead."))
FILTERS = ("grep", "egrep", "fgrep", "head", "tail", "wc", "sort", "uniq", "awk", "cut", "sed", "tr", "jq")
MAX_OUTPUT = 8 * 1024 * 1024  # the hard bound: kubectl output beyond it is an error, not an observation
REFUSED = ("Error: exec_shell runs kubectl, optionally piped into {filters}; shell syntax such as {token!r} is not "
           "available. Run one kubectl command per action; use `kubectl exec POD -- CMD` for commands inside a "
           "container.")


class ShellRefusal(ValueError):
    """A command exec_shell will not run; the message is the observation."""


@dataclass
class Pipeline:
    """A parsed command: kubectl arguments, then filter stages."""

    kubectl: list[str]
    filters: list[list[str]]


def _unquoted(command: str) -> str:
    """Return the command with quoted parts blanked (to look for shell syntax outside quotes)."""
    out, quote = [], ""
    for ch in command:
        if quote:
            out.append(" ")
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
            out.append(" ")
        else:
            out.append(ch)
    return "".join(out)


def parse_pipeline(command: str) -> Pipeline:
    """Split a command into kubectl args and filters; refuse every other shell construct."""
    bare = _unquoted(command)
    for token in ("$(", "`", "&&", "||", ";", ">", "<", "&", "\n"):
        if token in bare:
            raise ShellRefusal(REFUSED.format(filters=", ".join(FILTERS), token=token.strip() or "newline"))
    try:
        stages = [shlex.split(part) for part in _split_pipes(command)]
    except ValueError as exc:
        raise ShellRefusal(f"Error: could not parse the command ({exc}); check the quotes.") from exc
    if not stages or not stages[0] or stages[0][0] != "kubectl":
        first = stages[0][0] if stages and stages[0] else ""
        raise ShellRefusal(f"Error: `{first}` is not available here. exec_shell runs kubectl (optionally piped into "
                           f"{', '.join(FILTERS)}); use `kubectl exec POD -- {first} ...` to run it inside a container.")
    for stage in stages[1:]:
        if not stage or stage[0] not in FILTERS:
            raise ShellRefusal(f"Error: `{stage[0] if stage else ''}` cannot be piped into here; allowed filters: "
                               f"{', '.join(FILTERS)}.")
    return Pipeline(stages[0][1:], stages[1:])


def _split_pipes(command: str) -> list[str]:
    """Split on | characters that are outside quotes (one pass: commands may be long)."""
    cuts, quote = [], ""
    for i, ch in enumerate(command):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "|":
            cuts.append(i)
    return [command[a + 1:b] for a, b in zip([-1, *cuts], [*cuts, len(command)])]


def run_filters(text: bytes, filters: list[list[str]], now: float) -> tuple[bytes, bytes, int]:
    """Pipe text through the filter stages (the twin's deterministic text utilities)."""
    registry = default_registry()
    ctx = ExecContext({"metadata": {"name": "kind-control-plane"}}, "shell", {"PATH": "/usr/bin:/bin"}, {}, [], now,
                      programs=registry)
    data, errors, code = text, b"", 0
    for argv in filters:
        program = registry.lookup(argv[0])
        if program is None:
            return data, errors + f"sh: 1: {argv[0]}: not found\n".encode(), 127
        result = program(argv, ctx.with_(stdin=data))
        data, errors, code = result.stdout, errors + result.stderr, result.exit_code
    return data, errors, code


def plan(command: str, role: str | None) -> Pipeline:
    """Return the pipeline a role may run, through the one enforcement point (aoi.safety.gate); raise ShellRefusal.

    The probe and the executor run exactly the stages their policy judged. The admin roles (AIOpsLab parity) keep
    AIOpsLab's blocks and parsing, then must pass the baseline every role obeys.
    """
    try:
        gate.screen(command)
        if role in gate.LIMITED:
            stages = gate.authorize(command, role)[1]
            return Pipeline(stages[0][1:], stages[1:])
        for needle, answer in BLOCKED:
            if needle in command:
                raise ShellRefusal(answer)
        pipeline = parse_pipeline(command)
        gate.check_argv(pipeline.kubectl)
        return pipeline
    except Refused as refused:
        raise ShellRefusal(f"Error: Forbidden by AOI's command policy ({role or 'admin'} role): "
                           f"{one_line(str(refused))}") from None


def exec_shell(command: str, run_kubectl: Callable[[list[str], float], tuple[str, str, int, bool]], now: float,
               timeout: float = 30.0, role: str | None = None) -> str:
    """Run one exec_shell command as a role and return AIOpsLab's observation text (kind host flavour)."""
    try:
        pipeline = plan(command, role)
    except ShellRefusal as refusal:
        return str(refusal)
    stdout, stderr, code, timed_out = run_kubectl(pipeline.kubectl, timeout)
    if timed_out:
        return (f"Failed to execute command in Docker container: kind-control-plane\n"
                f"Error: Command '{command}' timed out after {int(timeout)} seconds")
    if len(stdout) > MAX_OUTPUT:
        return (f"Error: the command printed {len(stdout)} characters, more than exec_shell handles "
                f"({MAX_OUTPUT}) — narrow it with -n, -l, --field-selector, -o jsonpath or --tail.")
    out, err = stdout.encode(), stderr.encode()
    if pipeline.filters:
        out, filter_err, code = run_filters(out, pipeline.filters, now)
        err += filter_err
    if code != 0:
        return f"[ERROR] Docker command execution failed: {err.decode(errors='replace')}"
    return out.decode(errors="replace")  # whole, as AIOpsLab returns it: the agents cap what they read
