"""Run one episode with the AOI team: environment, models per role, safety, memory, trajectory."""

from __future__ import annotations

import time
from typing import Callable

from aoi.agents.actions import submit_action
from aoi.agents.compressor import Compressor
from aoi.agents.loop import Recorder, RoleLoop, render
from aoi.agents.memory import Memory
from aoi.agents.observer import Observer, Team
from aoi.agents.tools import Channel, read_tools, write_tools
from aoi.config import RunConfig, resolved
from aoi.models.base import Model
from aoi.safety.approval import ApprovalPolicy
from aoi.safety.audit import AuditLog
from aoi.trajectory import Policy, Step, Trajectory

ROLES = ("observer", "probe", "executor", "compressor")


def models_from_config(config: RunConfig) -> dict[str, Model]:
    """Build one model per role from the configuration (a role without an override shares the main model)."""
    from aoi.models.registry import load_model

    built: dict[str, Model] = {}
    cache: dict[str, Model] = {}
    for role in ROLES:
        cfg = config.model_for(role)
        key = cfg.model_dump_json()
        if key not in cache:
            cache[key] = load_model(cfg.spec, **_options(cfg))
        built[role] = cache[key]
    return built


def _options(cfg) -> dict:
    """Return the keyword options a model spec takes from its config (None values left out)."""
    options = {"base_url": cfg.base_url, "api_key": cfg.api_key.get_secret_value() if cfg.api_key else None,
               "temperature": cfg.temperature, "max_tokens": cfg.max_tokens, "timeout": cfg.timeout,
               "max_retry_wait": cfg.max_retry_wait}
    return {k: v for k, v in options.items() if v is not None}


def summarizer(model: Model | None, recorder: Recorder) -> Callable[[str, int], str] | None:
    """Return the Compressor's model summary function (None: deterministic fallback only)."""
    if model is None or getattr(model, "name", "") == "expert":
        return None

    def summarize(text: str, budget: int) -> str:
        messages = [{"role": "system", "content": render("compressor", "system", budget=budget)},
                    {"role": "user", "content": render("compressor", "user", command="", output=text)}]
        completion = model.complete(messages, role="compressor", max_tokens=budget)
        recorder.record("compressor", messages, completion)
        return completion.text

    return summarize


def _step(env, action: str, role: str | None) -> str:
    """Play one env action; once the environment has ended the episode, say so instead."""
    if env.done:
        return "Error: the environment has no steps left in this episode; finish or submit now."
    return env.step(action, role=role)[0]


def _submit_unanswered(env, task_type: str, recorder: Recorder) -> None:
    """Close an episode the team could not finish with an empty submission, so the environment still judges it
    (as AIOpsLab judges an agent that never submits: wrong, never a default answer)."""
    if env.done:
        return
    action = submit_action(task_type, None)
    try:
        observation = env.step(action, role=None)[0]
    except Exception:  # noqa: BLE001 - the environment itself failed; traj.error already says why the episode ended
        return
    recorder.record("observer", [], None, action=action, observation=observation)


def run_episode(env, config: RunConfig, models: dict[str, Model], *, attempt: int = 0,
                approval: ApprovalPolicy | None = None, audit: AuditLog | None = None,
                on_step: Callable[[Step], None] | None = None) -> Trajectory:
    """Reset the env, let the team work until it submits, and return the trajectory (env left open).

    A failure (model, environment) does not raise: it ends the episode and is kept in `trajectory.error`.
    """
    problem = env.problem
    backend = getattr(getattr(env, "backend", None), "name", "twin")
    traj = Trajectory(problem.id, problem.task_type, problem.family, problem.target, backend, config.env.seed, attempt,
                      Policy(getattr(models["observer"], "name", "model")), config=resolved(config))
    traj.started_at = time.time()
    env.reset()
    recorder = Recorder(traj, on_step=on_step)
    compress = Compressor(config.agent.compress_budget_tokens, summarizer(models.get("compressor"), recorder))
    channel = Channel(lambda action, role: _step(env, action, role), traj.id)
    steps_left = lambda: env.max_steps - env.steps  # noqa: E731
    approval = approval or ApprovalPolicy(config.approval.mode, config.approval.rules)
    guards = {"repeat_limit": config.agent.repeat_limit, "output_cap": config.agent.output_cap_chars}
    probe = RoleLoop("probe", models["probe"], read_tools(channel, "probe"), recorder, config.agent.probe_budget,
                     compress, steps_left, **guards)
    executor = None
    if problem.task_type == "mitigation":
        executor = RoleLoop("executor", models["executor"], write_tools(channel, approval, audit), recorder,
                            config.agent.executor_budget, compress, steps_left, **guards)
    observer = Observer(models["observer"], Team(probe, executor), recorder, compress,
                        Memory(config.agent.observer_context_tokens), config.agent.max_iterations,
                        lambda action: _step(env, action, None), steps_left)
    try:
        run = observer.run(problem.task_type, env.description)
        traj.submission = run.answer
    except KeyboardInterrupt as exc:  # the caller may save what happened so far: it rides on the exception
        traj.error = f"interrupted (Ctrl-C) after {len(traj.steps)} step(s); the trajectory is partial"
        exc.trajectory = traj
        raise
    except Exception as exc:  # noqa: BLE001 - the trajectory keeps what happened; callers read traj.error
        traj.error = f"{type(exc).__name__}: {exc}"
        _submit_unanswered(env, problem.task_type, recorder)
    finally:
        traj.results = dict(env.results or {})
        traj.strict_success = traj.results.get("strict_success")
        traj.ended_at = time.time()
    return traj
