"""The roles' tools as declared data: what each runs in the environment, behind policy, approval and audit.

Commands are judged by aoi.safety.gate.check, the same enforcement point env.step applies again on arrival: a refusal
here only saves the step. The Probe's commands, scripts included (loops, substitutions, chaining, xargs), go straight
to the environment's shell, which judges every kubectl they run as the probe (read-only by credentials first); the
Executor's changes stay single commands, since each is previewed by a server dry run and approved on its own."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from aoi.agents import filereader
from aoi.agents.actions import env_action
from aoi.agents.loop import Tool
from aoi.safety.approval import ApprovalPolicy
from aoi.safety.audit import AuditLog
from aoi.safety.exports import REFUSED, Exports
from aoi.safety.gate import FORBIDDEN, check, screen
from aoi.safety.shellwords import Refused

NEXT = "\nPlease take the next action"
DRY_RUN_VERBS = ("patch", "scale", "set", "label", "annotate", "delete", "create", "apply", "replace")


@dataclass
class Channel:
    """How tools reach the environment: one env.step per action, as a given role."""

    step: Callable[[str, str | None], str]  # (action text, role) -> observation
    episode: str = ""
    exports: Exports = field(default_factory=Exports)  # the telemetry files read_file may open

    def act(self, action: str, role: str) -> str:
        """Run one environment action and return its observation without the next-action prompt."""
        observation = self.step(action, role)
        return observation[: -len(NEXT)] if observation.endswith(NEXT) else observation


def _shell(channel: Channel, role: str, command: str) -> tuple[str, str, str]:
    """Run a command the role's policy allows; the Probe's run in the environment's shell, judged kubectl by kubectl."""
    if role == "probe":
        try:
            screen(command)
        except Refused as refused:
            return f"Refused: {refused}", "refused", ""
        action = env_action("exec_shell", command)
        observation = channel.act(action, role)
        return observation, "refused" if FORBIDDEN in observation else "ok", action
    verdict = check(command, role)
    if not verdict.allowed:
        return f"Refused: {verdict.reason}", "refused", ""
    action = env_action("exec_shell", command)
    return channel.act(action, role), "ok", action


def _env(channel: Channel, role: str, api: str, *args) -> tuple[str, str, str]:
    action = env_action(api, *args)
    observation = channel.act(action, role)
    if api in ("get_metrics", "get_traces"):
        channel.exports.note(observation)
    return observation, "ok", action


def _read(channel: Channel, path, op: str = "summary", **args) -> tuple[str, str, str]:
    """Page through an exported telemetry file; any other host file is refused."""
    if not channel.exports.allows(path):
        return REFUSED, "refused", ""
    return filereader.read(path, op, **args), "ok", ""


def read_tools(channel: Channel, role: str) -> dict[str, Tool]:
    """Return the investigation tools (the probe's whole set; the executor uses them to verify)."""
    return {
        "exec_shell": Tool("exec_shell", lambda command: _shell(channel, role, command)),
        "get_logs": Tool("get_logs", lambda namespace, service: _env(channel, role, "get_logs", namespace, service)),
        "get_metrics": Tool("get_metrics", lambda namespace, duration=5: _env(channel, role, "get_metrics",
                                                                               namespace, int(duration))),
        "get_traces": Tool("get_traces", lambda namespace, duration=5: _env(channel, role, "get_traces",
                                                                             namespace, int(duration))),
        "read_file": Tool("read_file", lambda path, op="summary", **args: _read(channel, path, op, **args)),
    }


def _preview(channel: Channel, command: str, verb: str) -> str | None:
    """Ask the server for a dry run of a change kubectl can dry-run; None when it cannot."""
    if verb not in DRY_RUN_VERBS:
        return None
    return channel.act(env_action("exec_shell", f"{command} --dry-run=server"), "executor")


def _verb(command: str) -> str:
    """Return the kubectl verb of a command (the first word after kubectl that is not a flag)."""
    words = [w for w in command.split()[1:] if not w.startswith("-")]
    return words[0] if words else ""


def write_tools(channel: Channel, approval: ApprovalPolicy, audit: AuditLog | None) -> dict[str, Tool]:
    """Return the executor's tools: reads, plus changes through preview, approval and audit."""

    def shell(command: str) -> tuple[str, str, str]:
        verdict = check(command, "executor")
        if not verdict.allowed:
            return f"Refused: {verdict.reason}", "refused", ""
        if verdict.kind == "read":
            return _shell(channel, "executor", command)
        preview = _preview(channel, command, _verb(command))
        decision = approval.decide(command, preview)
        if decision.status != "approved":
            _audit(audit, channel, command, verdict, decision, preview, "", None)
            return f"Not approved: {decision.reason}", "approval_denied", ""
        action = env_action("exec_shell", command)
        outcome = channel.act(action, "executor")
        _audit(audit, channel, command, verdict, decision, preview, outcome, not outcome.startswith(("[ERROR]", "Error")))
        return outcome, "ok", action

    tools = read_tools(channel, "executor")
    tools["exec_shell"] = Tool("exec_shell", shell)
    return {k: v for k, v in tools.items() if k in ("exec_shell", "get_logs")}


def _audit(audit, channel, command, verdict, decision, preview, outcome, ok) -> None:
    """Record a change attempt in the audit log."""
    if audit is not None:
        audit.record("executor", command, verdict, decision, preview, outcome,
                     exit_status=None if ok is None else (0 if ok else 1), episode=channel.episode)
