"""The one enforcement point for exec_shell commands: every entry (env.step, serve-env, the agents' tools, the
AIOpsLab bridge) asks here before a command reaches kubectl or a shell: exec_shell's simulated shell asks `judge` for
each kubectl it runs; callers that judge a whole command before it runs elsewhere ask `check`."""

from __future__ import annotations

from aoi.protocols import SHELL_ROLES, Role
from aoi.safety import baseline, policy
from aoi.safety.kubeargs import parse
from aoi.safety.shellwords import Refused

MAX_COMMAND = 64 * 1024  # characters: a large ConfigMap patch fits; more is a payload, refused before any parsing
FORBIDDEN = "Error: Forbidden by AOI's command policy"  # how every entry words a refusal; tools read it back
LIMITED = SHELL_ROLES  # probe, executor: their own credentials plus the full command policy
ADMIN = (None, Role.OBSERVER, Role.ADMIN)
ADMIN_VERDICT = policy.Verdict(True, "The command keeps kubectl's identity, cluster and host files, so it may run.",
                               "admin")  # AIOpsLab parity: admin credentials, the baseline only


def screen(command: object) -> None:
    """Refuse, in linear time, what no parser should see: non-text, NUL bytes and oversized commands.

    Example:
        >>> screen("kubectl get pods")
        >>> screen("kubectl get pods\\x00")
        Traceback (most recent call last):
        aoi.safety.shellwords.Refused: The command contains a NUL byte — remove it and send plain text.
    """
    if not isinstance(command, str):
        raise Refused(f"exec_shell takes one command string, not {type(command).__name__} — quote the command.")
    if len(command) > MAX_COMMAND:
        raise Refused(f"A command of {len(command)} characters is refused (at most {MAX_COMMAND}) — shorten it or "
                      "change objects in smaller patches.")
    if "\x00" in command:
        raise Refused("The command contains a NUL byte — remove it and send plain text.")


def forbidden(role: str | None, reason: str) -> str:
    """Word a policy refusal as the observation every entry returns.

    Example:
        >>> forbidden("probe", "kubectl delete is a write")
        "Error: Forbidden by AOI's command policy (probe role): kubectl delete is a write"
    """
    return f"{FORBIDDEN} ({role or 'admin'} role): {policy.one_line(reason)}"


def check_argv(argv: list[str]) -> None:
    """Raise Refused if kubectl's arguments (without `kubectl`) break the baseline that binds the admin role too.

    Example:
        >>> check_argv(["get", "pods", "--kubeconfig=/tmp/admin.yaml"])  # doctest: +NORMALIZE_WHITESPACE
        Traceback (most recent call last):
        aoi.safety.shellwords.Refused: The flag --kubeconfig is refused because it points kubectl at other credentials
        or another cluster — drop it; the environment already targets the right cluster.
    """
    call = parse(argv)
    baseline.check(call)
    if call.problems:
        raise Refused(call.problems[0])


def judge(args: list[str], role: str | None, stdin: bytes | None = None) -> policy.Verdict:
    """Judge one kubectl invocation of exec_shell's shell (its argv after expansion, without `kubectl`); raise Refused.

    The probe and the executor get their policy, the admin roles the baseline: every kubectl a script runs is judged
    here, at the moment it runs, so the policy sees exactly what runs (`stdin`: the bytes the pipe feeds kubectl).

    Example:
        >>> judge(["get", "pods", "-n", "shop"], "probe").kind
        'read'
        >>> judge(["delete", "pod", "x"], "probe")  # doctest: +NORMALIZE_WHITESPACE
        Traceback (most recent call last):
        aoi.safety.shellwords.Refused: kubectl delete is a write; the probe is read-only — describe what should change
        in your findings so the executor can do it.
    """
    if role in LIMITED:
        verdict = policy.check_args(args, role, stdin)
        if not verdict.allowed:
            raise Refused(verdict.reason)
        return verdict
    if role not in ADMIN:
        raise Refused(f"unknown role {role!r}; use None, 'observer', 'admin', 'probe' or 'executor'")
    check_argv(args)
    return ADMIN_VERDICT


def check(command: str, role: str | None) -> policy.Verdict:
    """Judge a command for any role without running it: the probe's and executor's policy, or the admin baseline.

    For the admin roles it also refuses shell syntax and filters' file operands, as the probe's policy does: its
    callers (the AIOpsLab bridge) may hand the command to a real shell.

    Example:
        >>> check("kubectl get pods --token=abc", None).allowed
        False
        >>> check("kubectl delete pod x -n shop", None).kind
        'admin'
    """
    try:
        if role in LIMITED:
            screen(command)
            return policy.check(command, role)
        if role not in ADMIN:
            raise Refused(f"unknown role {role!r}; use None, 'observer', 'admin', 'probe' or 'executor'")
        screen(command)
        call = policy.kubectl_call(command)  # shell syntax, non-kubectl programs and filter file operands refused
        baseline.check(call)
        if call.problems:
            raise Refused(call.problems[0])
    except Refused as refused:
        return policy.Verdict(False, policy.one_line(str(refused)), "refused")
    return ADMIN_VERDICT
