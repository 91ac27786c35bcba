"""exec_shell as a shell: the twin's POSIX shell on a simulated cluster host, with kubectl as one of its programs.

AIOpsLab runs each command with `sh -c` on the kind control-plane node. Here the twin's shell (aoi.shellsim)
parses and runs the whole script in memory: pipes, loops, `$(...)`, heredocs and redirections reach only the
simulated host's files. kubectl is the one program that leaves it: each invocation, after expansion, is judged by
the role's enforcement point (aoi.safety.gate.judge) and then runs the real kubectl with the role's kubeconfig, fed
the pipe's bytes on stdin.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from aoi.env.outcome import OUTPUT_LIMIT, TIMEOUT, Outcome
from aoi.safety import gate
from aoi.safety.shellwords import Refused
from aoi.shellsim.context import ExecContext, ExecResult
from aoi.shellsim.registry import default_registry
from aoi.shellsim.shell import sh_program

HOST = "kind-control-plane"
# AIOpsLab refuses these before running anything (substring match), with these short answers.
BLOCKED = (("kubectl edit", "Error: Cannot use `kubectl edit`. Use `kubectl patch` instead."),
           ("edit svc", "Error: Cannot use `kubectl edit`. Use `kubectl patch` instead."),
           ("kubectl port-forward", "Error: Cannot use `kubectl port-forward` because it is an interactive command."),
           ("docker logs -f", "Error: Cannot use `docker logs -f`. Use `docker logs` instead."),
           ("kubectl logs -f", "Error: Cannot use `kubectl logs -f`. Use `kubectl logs` instead."))
MAX_OUTPUT = 8 * 1024 * 1024  # the hard bound: one kubectl printing more is an error, not an observation
HOST_ENV = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/root",
            "HOSTNAME": HOST, "USER": "root"}
NO_JQ = (b"sh: 1: jq: not found (the cluster host has no jq: select fields with kubectl -o jsonpath='{...}' or "
         b"-o go-template='...', and filter text with grep, sed or awk)\n")
FILENAME = ("-f", "--filename")
# (argv without "kubectl", stdin or None, timeout) -> (stdout, stderr, exit code, timed out)
RunKubectl = Callable[[list[str], bytes | None, float], tuple[str, str, int, bool]]


class ShellRefusal(ValueError):
    """A command exec_shell ends without finishing; the message is the observation, `cut` says why when no policy
    refused it (outcome.TIMEOUT, outcome.OUTPUT_LIMIT)."""

    def __init__(self, message: str, cut: str | None = None):
        super().__init__(message)
        self.cut = cut


class HostKubectl:
    """kubectl on the simulated host: the gate judges each argv for the role, then the real binary runs it."""

    def __init__(self, run_kubectl: RunKubectl, role: str | None, command: str, timeout: float):
        self.run_kubectl, self.role, self.command, self.timeout = run_kubectl, role, command, timeout
        self.deadline = time.monotonic() + timeout  # the wall budget of the whole command, as AIOpsLab's timeout

    def check(self) -> None:
        """End the script once the command's wall budget is spent (the shell asks before every command)."""
        if time.monotonic() > self.deadline:
            raise self.timed_out()

    def timed_out(self) -> ShellRefusal:
        """Return AIOpsLab's timeout answer for this command."""
        return ShellRefusal(f"Failed to execute command in Docker container: {HOST}\n"
                            f"Error: Command '{self.command}' timed out after {int(self.timeout)} seconds", TIMEOUT)

    def __call__(self, argv: list[str], ctx: ExecContext) -> ExecResult:
        """Run one kubectl invocation of the script; end the script on a refusal, a timeout or a flood of output."""
        args, stdin = from_host_file(argv[1:], ctx)
        try:
            gate.judge(args, self.role, stdin)
        except Refused as refused:
            raise ShellRefusal(forbidden(self.role, refused)) from None
        left = self.deadline - time.monotonic()
        out, err, code, timed_out = self.run_kubectl(args, stdin or None, left) if left > 0 else ("", "", -1, True)
        if timed_out:
            raise self.timed_out()
        if len(out) > MAX_OUTPUT:
            raise ShellRefusal(f"Error: the command printed {len(out)} characters, more than exec_shell handles "
                               f"({MAX_OUTPUT}) — narrow it with -n, -l, --field-selector, -o jsonpath or --tail.",
                               OUTPUT_LIMIT)
        return ExecResult(out.encode(), err.encode(), code)


def from_host_file(args: list[str], ctx: ExecContext) -> tuple[list[str], bytes]:
    """Return the arguments with `-f FILE` of a simulated host file turned into `-f -`, and the stdin to feed.

    Example:
        >>> ctx = ExecContext({"metadata": {"name": "h"}}, "h", {}, {"/tmp/a.yaml": b"kind: X"}, [], 0.0, stdin=b"")
        >>> from_host_file(["apply", "-f", "/tmp/a.yaml"], ctx)
        (['apply', '-f', '-'], b'kind: X')
    """
    args = list(args)
    if "logs" in args:  # there -f is --follow
        return args, ctx.stdin
    for i, arg in enumerate(args):
        separate = arg in FILENAME and i + 1 < len(args)  # `-f FILE`, else perhaps `-f=FILE` / `--filename=FILE`
        name, _, value = (arg, "", args[i + 1]) if separate else arg.partition("=")
        if name in FILENAME and value not in ("", "-") and ctx.is_file(value):
            args[i + 1 if separate else i] = "-" if separate else f"{name}=-"
            return args, ctx.read(value)
    return args, ctx.stdin


def forbidden(role: str | None, refused: Refused) -> str:
    """Word a policy refusal as the observation."""
    return gate.forbidden(role, str(refused))


def no_jq(argv: list[str], ctx: ExecContext) -> ExecResult:
    """Answer as the kind node does: it has no jq (say what to use instead)."""
    return ExecResult(b"", NO_JQ, 127)


def host(kubectl: HostKubectl, now: float) -> ExecContext:
    """Return a fresh simulated control-plane host: root's shell, the userland, kubectl, an empty /root and /tmp."""
    programs = default_registry()
    programs.register("kubectl", kubectl)
    programs.register("jq", no_jq)
    return ExecContext({"metadata": {"name": HOST}}, HOST, dict(HOST_ENV), {"/root/": b"", "/tmp/": b""},
                       [(1, "root", "/sbin/init")], now, programs=programs, cwd="/root", watchdog=kubectl.check)


def screen(command: str, role: str | None) -> None:
    """Refuse before running: the gate's screen for everyone, AIOpsLab's blocked commands for the admin roles."""
    try:
        gate.screen(command)
    except Refused as refused:
        raise ShellRefusal(forbidden(role, refused)) from None
    if role not in gate.LIMITED:
        for needle, answer in BLOCKED:
            if needle in command:
                raise ShellRefusal(answer)


def run(command: str, run_kubectl: RunKubectl, now: float, timeout: float = 30.0,
        role: str | None = None) -> ExecResult:
    """Run a command with `sh -c` on a fresh simulated host; raise ShellRefusal when it is refused or cut short.

    Example:
        >>> run("echo a | tr a b; exit 3", None, 0.0)
        ExecResult(stdout=b'b\\n', stderr=b'', exit_code=3)
    """
    screen(command, role)
    return sh_program(["sh", "-c", command], host(HostKubectl(run_kubectl, role, command, timeout), now))


def exec_shell(command: str, run_kubectl: RunKubectl, now: float, timeout: float = 30.0,
               role: str | None = None) -> Outcome:
    """Run one exec_shell command as a role; return AIOpsLab's observation text (kind host flavour) and its facts.

    Example:
        >>> def kubectl(args, stdin, timeout):
        ...     return "web-1\\nweb-2\\n", "", 0, False
        >>> exec_shell("for p in $(kubectl get pods -o name); do echo ${p%-*}; done | uniq -c", kubectl, 0.0)
        Outcome(observation='      2 web\\n', refused=False, exit_status=0, cut=None, accepted=None)
    """
    try:
        result = run(command, run_kubectl, now, timeout, role)
    except ShellRefusal as refusal:
        return Outcome(str(refusal), refused=refusal.cut is None, cut=refusal.cut)
    if result.exit_code != 0:
        return Outcome(f"[ERROR] Docker command execution failed: {result.stderr.decode(errors='replace')}",
                       exit_status=result.exit_code)
    # whole, as AIOpsLab returns it: the agents cap what they read
    return Outcome(result.stdout.decode(errors="replace"), exit_status=0)

