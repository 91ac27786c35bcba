"""Where the components meet: roles, step statuses, declared tools and their results, the model protocol, and the
error that voids an episode (FatalEpisodeError).

Every layer may import this module (it imports nothing of aoi), so a role or a status is one name everywhere.
`Role` and `Status` are `str` enums: they compare equal to, hash like and serialise as their plain values, so old
trajectories (plain strings) and new ones (enum members) read the same.

Example:
    >>> import json
    >>> json.dumps([Role.PROBE, Status.REFUSED]), Role.PROBE == "probe", Role("executor") in SHELL_ROLES
    ('["probe", "refused"]', True, True)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable

Message = dict  # {"role": "system" | "user" | "assistant", "content": str}


class Role(StrEnum):
    """Who acts: the agent roles, and the admin identity the environment and fault injectors act as."""

    OBSERVER = "observer"
    PROBE = "probe"
    EXECUTOR = "executor"
    COMPRESSOR = "compressor"
    FILE_READER = "file_reader"
    ADMIN = "admin"


# The roles that have a model of their own (config `models.<role>`, the runtime's models, the expert's parts).
MODEL_ROLES = (Role.OBSERVER, Role.PROBE, Role.EXECUTOR, Role.COMPRESSOR)
# The roles whose shell commands the command policy judges (the sub-agents that run tools).
SHELL_ROLES = (Role.PROBE, Role.EXECUTOR)
# The identities that hold credentials on a cluster (a bearer token and RBAC each).
CREDENTIAL_ROLES = (Role.ADMIN, Role.PROBE, Role.EXECUTOR)
# The roles env.step accepts; None is AIOpsLab parity (unrestricted, as admin).
ENV_ROLES = (None, Role.OBSERVER, Role.ADMIN, Role.PROBE, Role.EXECUTOR)


class Status(StrEnum):
    """How a step ended: the tool's outcome, a guard's verdict, or (Compressor) why its summary was replaced."""

    OK = "ok"
    ERROR = "error"  # the model call or the tool failed
    REFUSED = "refused"  # the policy or the credentials refused the command
    FORMAT_ERROR = "format_error"  # the reply was not a valid tool call or decision
    REPEATED = "repeated"  # the same call again in one instruction: not run
    BUDGET = "budget"  # no tool calls left: only finish is accepted
    APPROVAL_DENIED = "approval_denied"  # the approval gate refused a change
    UNGROUNDED = "ungrounded"  # Compressor: the summary named what its input does not
    OVERSIZED = "oversized"  # Compressor: the summary exceeded its budget
    EMPTY = "empty"  # Compressor: the summary was empty


@dataclass(frozen=True, kw_only=True)
class Tool:
    """A tool declared as data; the prompt lists it from these fields, so the two cannot drift.

    `parameters` maps each argument to the example value the prompt shows (JSON text); `more` says the tool takes
    further arguments its description names; `description` keeps its line breaks (the prompt wraps where it does).

    Example:
        >>> print(Tool(name="get_logs", parameters={"namespace": '"..."'}, description="a log.").line())
        - get_logs {"namespace": "..."}: a log.
    """

    name: str
    description: str = ""
    parameters: dict[str, str] = field(default_factory=dict)
    roles: frozenset[Role] = frozenset()
    mutating: bool = False
    more: bool = False

    def signature(self) -> str:
        """Return the argument object as the prompt shows it."""
        args = ", ".join(f'"{name}": {example}' for name, example in self.parameters.items())
        return "{" + args + (", ..." if self.more else "") + "}"

    def line(self) -> str:
        """Return the tool's entry in a prompt's tool list (continuation lines indented by two)."""
        head = f"- {self.name} {self.signature()}"
        return head + (": " + self.description.replace("\n", "\n  ") if self.description else "")


@dataclass(frozen=True)
class ToolResult:
    """What a tool call gave: the observation the model reads, its status, the env action text sent ("" if none)."""

    observation: str
    status: Status = Status.OK
    action: str = ""


class FatalEpisodeError(Exception):
    """An error that voids the episode: run_episode re-raises it instead of keeping it as `trajectory.error`.

    Raise a subclass (aoi.train.rollouts.ReplayMismatch) where judging the episode would mislead the caller.
    """


class Model(Protocol):
    """A chat model: messages in, one completion out. `role` names the agent asking (LLMs ignore it).

    `schema` is the JSON schema the reply must follow (aoi.models.schemas; None: free text): backends that can
    constrain decoding to it do, the others ignore it. `context` is what the caller's prompt says, as data (the
    Observer's: aoi.models.expert.contract.ObserverContext): the expert reads it, models that read text ignore it.
    """

    name: str

    def complete(self, messages: list[Message], *, role: str, max_tokens: int | None = None,
                 temperature: float | None = None, schema: dict | None = None, context: Any = None):
        """Answer the conversation with an aoi.models.base.Completion."""


@runtime_checkable
class Env(Protocol):
    """An episode of one problem, Gymnasium-style: aoi.env.make's env, aoi.env.client.RemoteEnv, the AIOpsLab bridge.

    `problem` is an aoi.problems.model.Problem (typed loosely: this module imports nothing of aoi); `description`
    is the task description of the last reset; `steps`, `max_steps`, `done`, `results` are the episode's bookkeeping.
    reset()'s info carries at least problem_id, task_type, backend, env_version and description.
    """

    problem: Any
    description: str
    steps: int
    max_steps: int
    done: bool
    results: dict | None

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[str, dict]:
        """Start a fresh episode; return (observation, info)."""

    def step(self, action: str, role: str | None = None) -> tuple[str, float, bool, bool, dict]:
        """Play one action; return (observation, reward, terminated, truncated, info)."""

    def close(self) -> None:
        """Release the episode (twin, session, folders)."""

    def __enter__(self) -> Env:
        """Return the env (`with make(...) as env:` closes it)."""

    def __exit__(self, *exc) -> None:
        """Close the env."""


class KubectlOutcome(Protocol):
    """What one kubectl run gave (aoi.twin.kubectl.Completed)."""

    stdout: str
    stderr: str
    returncode: int
    timed_out: bool


class Kubectl(Protocol):
    """kubectl as one identity: the twin's KubectlRunner and the cluster's KubectlAs both are one."""

    def run(self, args: list[str], stdin: bytes | None = None, timeout: float = 30.0) -> KubectlOutcome:
        """Run `kubectl ARGS...` and return its outcome."""


@runtime_checkable
class Backend(Protocol):
    """Where an Env's episode runs (aoi.env.twin_backend, aoi.env.cluster_backend): lifecycle, clock, kubectl.

    `kube` is the episode's admin Kubernetes client (aoi.kube.Kube, open from start() to close()): injectors and
    oracles use it.
    """

    name: str
    kube: Any

    def start(self, problem: Any, seed: int) -> None:
        """Deploy (or check) the app, inject the problem's fault and start the workload."""

    def close(self) -> None:
        """Stop the episode (recover the fault on a real cluster)."""

    def now(self) -> float:
        """Return the episode's clock (simulated on the twin, wall on a cluster)."""

    def tick(self, seconds: float) -> None:
        """Let an action's time pass."""

    def wait(self, seconds: float) -> None:
        """Wait while a verdict polls."""

    def settle(self) -> None:
        """Let the system settle (bounded) before the strict verdict."""

    def runner(self, role: str | None) -> Kubectl:
        """Return kubectl as the identity a role acts as."""

    def get_metrics(self, namespace: str, duration: int = 5) -> str:
        """Export recent metrics as CSV files; return the observation."""

    def get_traces(self, namespace: str, duration: int = 5) -> str:
        """Export recent traces as a CSV file; return the observation."""

    def admin_kubeconfig(self):
        """Return the admin kubeconfig's path (oracles read the cluster with it)."""
