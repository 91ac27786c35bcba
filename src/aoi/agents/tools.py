"""The roles' tools: the declarations of tools.yaml bound to what they run in the environment, behind policy,
approval and audit.

Commands are judged by aoi.safety.gate.check, the same enforcement point env.step applies again on arrival: a refusal
here only saves the step. The Probe's commands, scripts included (loops, substitutions, chaining, xargs), go straight
to the environment's shell, which judges every kubectl they run as the probe (read-only by credentials first); the
Executor's changes stay single commands, since each is previewed by a server dry run and approved on its own."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import yaml

from aoi.agents import filereader
from aoi.agents.actions import ToolCall, env_action
from aoi.models.expert import contract
from aoi.models.schemas import NEXT_STEPS
from aoi.protocols import Role, Status, Tool, ToolResult
from aoi.safety.approval import ApprovalPolicy
from aoi.safety.audit import AuditLog
from aoi.safety.exports import REFUSED, Exports
from aoi.safety.gate import check, screen
from aoi.safety.shellwords import Refused

TOOLS = Path(__file__).with_name("tools.yaml")
FINISH = "finish"  # the sub-agents' last call: the loop ends the role with its arguments as the report
SUB_AGENTS = {"probe": Role.PROBE, "execute": Role.EXECUTOR}  # the Observer's tools that dispatch a sub-agent
MAY_MUTATE = (Role.OBSERVER, Role.EXECUTOR)  # the Probe cannot even declare a tool that changes the system
DRY_RUN_VERBS = ("patch", "scale", "set", "label", "annotate", "delete", "create", "apply", "replace")


@lru_cache(maxsize=4)
def declared(path: Path = TOOLS) -> dict[Role, tuple[Tool, ...]]:
    """Load the declared tools of each role, in the order its prompt lists them."""
    tools = {Role(role): tuple(Tool(roles=frozenset({Role(role)}), **entry) for entry in entries)
             for role, entries in yaml.safe_load(path.read_text()).items()}
    for role, toolset in tools.items():
        for tool in toolset:
            if tool.mutating and role not in MAY_MUTATE:
                raise ValueError(f"{path}: {role} declares the mutating tool {tool.name}; only "
                                 f"{', '.join(MAY_MUTATE)} may hold one: drop `mutating` or move the tool")
    observer = tuple(t.name for t in tools.get(Role.OBSERVER, ()))
    if observer != NEXT_STEPS:  # the decision's "next" is one of these: its schema and parser read NEXT_STEPS
        raise ValueError(f"{path}: the observer's tools ({', '.join(observer)}) must be aoi.models.schemas.NEXT_STEPS "
                         f"({', '.join(NEXT_STEPS)}), in that order: change both together")
    return tools


@lru_cache(maxsize=8)
def render_tools(role: str) -> str:
    """Return a role's tool list as its prompt shows it.

    Example:
        >>> print(render_tools("executor").splitlines()[-2])
        - get_logs {"namespace": "...", "service": "..."}
    """
    return "\n".join(tool.line() for tool in declared()[Role(role)])


@lru_cache(maxsize=1)
def render_team() -> str:
    """Return the Observer's team block: its tools that dispatch a sub-agent, under that sub-agent's name.

    Example:
        >>> render_team().splitlines()[0][:40]
        '- probe: investigates with read-only acc'
    """
    tools = [t for t in declared()[Role.OBSERVER] if t.name in SUB_AGENTS]
    return "\n".join(f"- {SUB_AGENTS[t.name]}: " + t.description.replace("\n", "\n  ") for t in tools)


@dataclass
class Toolset:
    """A role's declared tools bound to what they run: keyword arguments in, a ToolResult out."""

    role: Role
    handlers: dict[str, Callable[..., ToolResult]]

    def __post_init__(self):
        names = {t.name for t in declared()[self.role]} - {FINISH}
        if set(self.handlers) != names:
            raise ValueError(f"the {self.role}'s handlers ({', '.join(sorted(self.handlers))}) must match its tools "
                             f"declared in {TOOLS} ({', '.join(sorted(names))})")

    def names(self) -> list[str]:
        """Return the names the role may call, in declaration order (finish included)."""
        return [t.name for t in declared()[self.role]]

    def run(self, call: ToolCall) -> ToolResult:
        """Run one call; wrong arguments become an error the model reads, never a crash."""
        try:
            return self.handlers[call.tool](**call.args)
        except TypeError as exc:
            return ToolResult(f"{contract.ERROR}: wrong arguments for {call.tool}: {exc}", Status.ERROR)


def tool_result(observation: str, info: dict, action: str) -> ToolResult:
    """Return the ToolResult of one env step: refused when env.step's info says the command policy refused it.

    Example:
        >>> tool_result("Error: Forbidden ...", {"refused": True}, "a").status, tool_result("x", {}, "a").status
        (<Status.REFUSED: 'refused'>, <Status.OK: 'ok'>)
    """
    return ToolResult(observation, Status.REFUSED if info.get("refused") else Status.OK, action)


@dataclass
class Channel:
    """How tools reach the environment: one env.step per action, as a given role."""

    step: Callable[[str, str | None], tuple[str, dict]]  # (action text, role) -> env.step's (observation, info)
    episode: str = ""
    exports: Exports = field(default_factory=Exports)  # the telemetry files read_file may open

    def act(self, action: str, role: str) -> tuple[str, dict]:
        """Run one environment action; return its own observation (less the `suffix` info names) and the info."""
        observation, info = self.step(action, role)
        return observation.removesuffix(info.get("suffix", "")), info

    def call(self, role: str, api: str, *args) -> ToolResult:
        """Run one environment API (noting telemetry exports read_file may open later)."""
        action = env_action(api, *args)
        observation, info = self.act(action, role)
        if api in ("get_metrics", "get_traces"):
            self.exports.note(observation)
        return tool_result(observation, info, action)


def probe_tools(channel: Channel) -> Toolset:
    """Return the Probe's tools: read-only investigation."""

    def exec_shell(command: str) -> ToolResult:
        try:
            screen(command)
        except Refused as refused:
            return ToolResult(contract.refused(str(refused)), Status.REFUSED)
        return channel.call(Role.PROBE, "exec_shell", command)

    def read_file(path, op: str = "summary", **args) -> ToolResult:
        if not channel.exports.allows(path):  # only the exported telemetry files; any other host file is refused
            return ToolResult(REFUSED, Status.REFUSED)
        return ToolResult(filereader.read(path, op, **args))

    return Toolset(Role.PROBE, {
        "exec_shell": exec_shell,
        "get_logs": lambda namespace, service: channel.call(Role.PROBE, "get_logs", namespace, service),
        "get_metrics": lambda namespace, duration=5: channel.call(Role.PROBE, "get_metrics", namespace, int(duration)),
        "get_traces": lambda namespace, duration=5: channel.call(Role.PROBE, "get_traces", namespace, int(duration)),
        "read_file": read_file})


def executor_tools(channel: Channel, approval: ApprovalPolicy, audit: AuditLog | None) -> Toolset:
    """Return the Executor's tools: reads, and changes through preview, approval and audit."""

    def exec_shell(command: str) -> ToolResult:
        verdict = check(command, Role.EXECUTOR)
        if not verdict.allowed:
            return ToolResult(contract.refused(verdict.reason), Status.REFUSED)
        if verdict.kind == "read":
            return channel.call(Role.EXECUTOR, "exec_shell", command)
        preview = _preview(channel, command, _verb(command))
        decision = approval.decide(command, preview)
        if decision.status != "approved":
            _audit(audit, channel, command, verdict, decision, preview, "", None)
            return ToolResult(contract.not_approved(decision.reason), Status.APPROVAL_DENIED)
        action = env_action("exec_shell", command)
        observation, info = channel.act(action, Role.EXECUTOR)
        _audit(audit, channel, command, verdict, decision, preview, observation, info.get("exit_status"))
        return tool_result(observation, info, action)

    return Toolset(Role.EXECUTOR, {
        "exec_shell": exec_shell,
        "get_logs": lambda namespace, service: channel.call(Role.EXECUTOR, "get_logs", namespace, service)})


def _preview(channel: Channel, command: str, verb: str) -> str | None:
    """Ask the server for a dry run of a change kubectl can dry-run; None when it cannot."""
    if verb not in DRY_RUN_VERBS:
        return None
    return channel.act(env_action("exec_shell", f"{command} --dry-run=server"), Role.EXECUTOR)[0]


def _verb(command: str) -> str:
    """Return the kubectl verb of a command (the first word after kubectl that is not a flag)."""
    words = [w for w in command.split()[1:] if not w.startswith("-")]
    return words[0] if words else ""


def _audit(audit, channel, command, verdict, decision, preview, outcome, exit_status) -> None:
    """Record a change attempt in the audit log (exit_status None: the command did not run to its end)."""
    if audit is not None:
        audit.record("executor", command, verdict, decision, preview, outcome, exit_status=exit_status,
                     episode=channel.episode)
