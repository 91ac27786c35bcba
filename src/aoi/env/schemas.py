"""The environment server's request and response bodies (pydantic), which its OpenAPI docs describe."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

ROLE_DOC = ("Who acts: null is AIOpsLab parity (admin credentials); 'probe' is read-only; 'executor' may change the "
            "app namespaces; 'observer' (or 'admin') may submit. Only null, 'observer' and 'admin' may submit.")


class ErrorBody(BaseModel):
    """Every error the server returns: what went wrong and how to fix it."""

    error: str = Field(description="One sentence: what went wrong and how to fix it.")
    details: list[Any] | None = Field(None, description="Field-level validation errors, when the body was invalid.")


class Health(BaseModel):
    """Liveness and load (the one route that needs no token)."""

    status: str = "ok"
    version: str
    active_sessions: int
    max_sessions: int


class ProblemInfo(BaseModel):
    """One problem id as the registry resolves it."""

    id: str
    task_type: str = Field(description="detection, localization, analysis or mitigation.")
    app: str
    namespace: str = Field(description="Where the app runs, e.g. test-hotel-reservation.")
    family: str
    target: str | None = Field(description="The faulted component by default; pass another valid target to move it.")
    backend: str = Field(description="'twin' runs here; 'aiopslab' ids need AIOpsLab and a real cluster.")
    valid_targets: list[str]


class CreateSession(BaseModel):
    """Start an episode: its own twin with the problem's app deployed and the fault injected."""

    problem_id: str = Field(description="An id from GET /problems.", examples=["k8s_target_port-misconfig-detection-1"])
    seed: int = Field(0, ge=0, description="Seed of names, IPs and workload: same seed and actions, same episode.")
    target: str | None = Field(None, description="Override the faulted component (one of the problem's valid_targets).")
    max_steps: int = Field(30, ge=1, le=1000, description="Step budget; the episode is truncated after it.")


class Session(BaseModel):
    """A created session: its id and the task text reset() returned."""

    session_id: str
    problem_id: str
    problem: ProblemInfo
    seed: int
    max_steps: int
    task: str = Field(description="The task description, instructions and available actions (Env.reset()'s "
                                  "observation).")
    info: dict[str, Any] = Field(description="Env.reset()'s info: problem_id, task_type, app, namespace, family, "
                                             "target, seed, backend, env_version, description, max_steps.")
    created_at: str = Field(description="Creation time, ISO 8601 UTC.")


class StepRequest(BaseModel):
    """One action in AIOpsLab's format: one fenced block holding one call."""

    action: str = Field(description="The agent's reply, e.g. '```\\nexec_shell(\"kubectl get pods -n x\")\\n```'.")
    role: str | None = Field(None, description=ROLE_DOC)


class SubmitRequest(BaseModel):
    """A submission; the server renders it as submit(<answer>) with a positional argument and steps it."""

    answer: Any = Field(None, description="'Yes'/'No' (detection), a list of components (localization), "
                                          "{'system_level': ..., 'fault_type': ...} (analysis), null (mitigation).",
                        examples=["Yes", ["user-service"], None])
    role: str | None = Field(None, description=ROLE_DOC)


class StepResult(BaseModel):
    """What Env.step returned."""

    observation: str
    reward: float
    terminated: bool = Field(description="The task ended (a submission).")
    truncated: bool = Field(description="The step budget ran out.")
    info: dict[str, Any] = Field(description="steps, role, sim_time, refused, exit_status, cut, accepted, suffix "
                                             "(Env.step's docstring); results and wall_seconds when the episode ends.")


class SessionStatus(BaseModel):
    """Where a session stands."""

    session_id: str
    problem: ProblemInfo
    seed: int
    steps: int
    max_steps: int
    done: bool
    results: dict[str, Any] | None = Field(
        description="AIOpsLab's result keys plus strict_success (and, for mitigation, strict_settle_seconds: how long "
                    "the strict verdict let the system settle after the episode), once done.")
    trace_length: int
    created_at: str
    idle_seconds: float


class TraceEntry(BaseModel):
    """One message of the recorded trace: the agent's action or the environment's observation."""

    role: str
    content: str
