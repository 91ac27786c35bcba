"""AOIAgent: AOI's Observer/Probe/Executor team behind AIOpsLab's agent contract (init_context, async get_action)."""

from __future__ import annotations

import asyncio
import queue
import threading
import time
from collections.abc import Callable

from aoi.agents.actions import submit_action
from aoi.aiopslab.bridge import END, ENV_VERSION, BridgeEnv, clean, task_info
from aoi.config import RunConfig
from aoi.models.base import Model
from aoi.safety.approval import ApprovalPolicy
from aoi.safety.audit import AuditLog
from aoi.trajectory import Policy, Step, Trajectory

ACTION_TIMEOUT = 900.0  # seconds get_action waits for the team's next action (model calls included)


class AOIAgent:
    """Drive AOI's multi-agent runtime one AIOpsLab action at a time.

    `init_context` sets up a BridgeEnv; the first `get_action` starts `aoi.agents.runtime.run_episode` on it in a
    worker thread. Each action the runtime takes (`env.step(text, role)`) is what `get_action` returns, and the
    observation AIOpsLab passes to the next `get_action` (its "\\nPlease take the next action" suffix stripped)
    becomes that step's result. Every action is one fenced block with positional arguments, as AIOpsLab's parser
    requires; the Observer alone submits.

    Read-only enforcement: AIOpsLab runs every action with full rights (one shell, one kubeconfig), so the per-role
    credentials that make the Probe read-only on the twin and on a cluster backend do not exist there. The roles'
    command policy is the only guard: the BridgeEnv applies aoi.safety.gate.check to every exec_shell (the admin
    baseline for the Observer) and lets read_metrics/read_traces name only files AIOpsLab exported, before anything
    reaches AIOpsLab's shell (a refused one reaches AIOpsLab as a note its parser rejects: charged, never run); the
    Executor's approval gate and audit log stay on.

    The trajectory is recorded as the team works and returned by `finish(results)` after the episode, with
    AIOpsLab's results; `exchanges` lists every action AIOpsLab played and what it answered.

    Example:
        >>> agent = AOIAgent(load_config(overrides={"model": "expert"}))  # doctest: +SKIP
        >>> orch.register_agent(agent, name="aoi")  # doctest: +SKIP
        >>> agent.init_context(*orch.init_problem(pid), problem_id=pid)  # doctest: +SKIP
        >>> out = asyncio.run(orch.start_problem(max_steps=30))  # doctest: +SKIP
        >>> trajectory = agent.finish(out["results"])  # doctest: +SKIP
    """

    def __init__(self, config: RunConfig, models: dict[str, Model] | None = None, *, max_steps: int | None = None,
                 approval: ApprovalPolicy | None = None, audit: AuditLog | None = None,
                 timeout: float = ACTION_TIMEOUT, on_step: Callable[[Step], None] | None = None):
        self.config, self.models, self.approval, self.audit = config, models, approval, audit
        self.max_steps = max_steps or config.env.max_steps
        self.timeout, self.on_step = timeout, on_step
        self.env: BridgeEnv | None = None
        self.trajectory: Trajectory | None = None

    # --- AIOpsLab's contract ---
    def init_context(self, problem_desc: str, instructions: str, apis: dict, problem_id: str | None = None) -> None:
        """Take the task AIOpsLab's init_problem returned; `problem_id` (optional) names it for the trajectory."""
        from aoi.agents.runtime import models_from_config

        self.models = self.models or models_from_config(self.config)
        problem = task_info(problem_id, problem_desc, apis)
        self.env = BridgeEnv(problem, problem_desc, instructions, apis, self.max_steps, self.timeout)
        self.system_message, self.task_message = "AOI (Observer, Probe, Executor)", f"{problem_desc}\n\n{instructions}"
        self.trajectory, self.steps, self.error = None, [], None
        self._worker, self._awaiting, self._started = None, False, None

    async def get_action(self, observation) -> str:
        """Return the team's next action; `observation` answers the previous one."""
        if self.env is None:
            raise RuntimeError("call init_context(problem_desc, instructions, apis) before get_action")
        if self._awaiting:
            self._awaiting = False
            self.env.inbox.put(clean(observation))
        self._start()
        action, self._awaiting = await asyncio.to_thread(self._next_action)
        return action

    # --- after the episode ---
    def finish(self, results: dict | None = None, timeout: float = 60.0) -> Trajectory:
        """End the episode, wait for the team, and return the trajectory carrying AIOpsLab's results."""
        if self.env is None:
            raise RuntimeError("call init_context(...) and run the episode before finish()")
        self.env.close()
        if self._worker is not None:
            self._worker.join(timeout)
        traj = self.trajectory or self._partial(timeout)
        traj.backend, traj.results = "aiopslab", dict(results or {})
        traj.strict_success = None  # AIOpsLab judges parity only
        traj.ended_at = traj.ended_at or time.time()
        return traj

    @property
    def exchanges(self) -> list[dict]:
        """Return every reply AIOpsLab took, as {role, action, sent (what reached it), observation}."""
        return list(self.env.exchanges) if self.env else []

    # --- the worker ---
    def _start(self) -> None:
        """Start the runtime's worker thread once."""
        if self._worker is None:
            self._started = time.time()
            self._worker = threading.Thread(target=self._work, name="aoi-aiopslab-runtime", daemon=True)
            self._worker.start()

    def _work(self) -> None:
        """Run the episode; always leave END in the outbox so get_action never waits on a finished team."""
        from aoi.agents.runtime import run_episode

        try:
            approval = self.approval or ApprovalPolicy(self.config.approval.mode, self.config.approval.rules)
            self.trajectory = run_episode(self.env, self.config, self.models, approval=approval, audit=self.audit,
                                          on_step=self._record)
        except Exception as exc:  # noqa: BLE001 - kept for finish(); the orchestrator gets a final submit
            self.error = f"{type(exc).__name__}: {exc}"
        finally:
            self.env.outbox.put(END)

    def _record(self, step: Step) -> None:
        """Keep a copy of each step (for a partial trajectory) and pass it on."""
        self.steps.append(step)
        if self.on_step:
            self.on_step(step)

    def _next_action(self) -> tuple[str, bool]:
        """Wait for the runtime's next action; return it and whether an observation must come back for it."""
        try:
            item = self.env.outbox.get(timeout=self.timeout)
        except queue.Empty:
            item, self.error = END, f"the team took no action within {self.timeout:.0f} s"
        if item is END:  # the team is done (or stuck) without submitting: end AIOpsLab's loop for it
            self.env.outbox.put(END)
            self.env.close()
            return submit_action(self.env.problem.task_type, None), False
        return item, not self.env.done

    def _partial(self, waited: float) -> Trajectory:
        """Build the trajectory from the recorded steps when the runtime did not return one."""
        problem = self.env.problem
        traj = Trajectory(problem.id, problem.task_type, family=problem.family, target=problem.target,
                          backend="aiopslab", seed=self.config.env.seed,
                          policy=Policy(getattr(self.models.get("observer"), "name", "model")),
                          steps=list(self.steps), started_at=self._started or time.time())
        traj.env_version = ENV_VERSION
        traj.error = self.error or (f"the team did not finish within {waited:.0f} s of the episode's end"
                                    if self._worker is not None else "get_action was never called")
        return traj
