"""Run one episode with the AOI team: environment, models per role, safety, memory, trajectory."""

from __future__ import annotations

import time
from collections.abc import Callable

from aoi.agents.actions import submit_action
from aoi.agents.compressor import Compressor
from aoi.agents.guidance import guide_of
from aoi.agents.loop import Guards, Recorder, SubAgent
from aoi.agents.memory import Memory
from aoi.agents.observer import Episode, Observer, Team, decision_format
from aoi.agents.tools import Channel, executor_tools, probe_tools
from aoi.config import RunConfig, resolved
from aoi.models.base import Completion, Model
from aoi.protocols import MODEL_ROLES, FatalEpisodeError, Role
from aoi.safety.approval import ApprovalPolicy
from aoi.safety.audit import AuditLog
from aoi.tasks import TaskType
from aoi.trajectory import Policy, Step, Trajectory


def models_from_config(config: RunConfig) -> dict[str, Model]:
    """Build one model per role from the configuration (a role without an override shares the main model)."""
    from aoi.models.registry import load_model

    built: dict[str, Model] = {}
    cache: dict[str, Model] = {}
    for role in MODEL_ROLES:
        cfg = config.model_for(role)
        key = cfg.model_dump_json()
        if key not in cache:
            cache[key] = load_model(cfg.spec, **_options(cfg))
        built[role] = cache[key]
    return built


def check_models(config: RunConfig) -> None:
    """Check each role's model once before any episode (aoi.models.check: key, spec, local files, a server on this
    machine listening); raise ModelError or ValueError saying what to fix. `aoi run` and `aoi eval` both call it."""
    from aoi.models.check import check_model

    checked = set()
    for role in MODEL_ROLES:
        cfg = config.model_for(role)
        if (key := cfg.model_dump_json()) not in checked:
            checked.add(key)
            check_model(cfg.spec, **_options(cfg))


def _options(cfg) -> dict:
    """Return the keyword options a model spec takes from its config (None values left out)."""
    options = {"base_url": cfg.base_url, "api_key": cfg.api_key.get_secret_value() if cfg.api_key else None,
               "temperature": cfg.temperature, "max_tokens": cfg.max_tokens, "timeout": cfg.timeout,
               "max_retry_wait": cfg.max_retry_wait}
    return {k: v for k, v in options.items() if v is not None}


class RoleModel:
    """A model as one role sees it: the role's configured max_tokens (a ceiling) and temperature on every call."""

    def __init__(self, inner: Model, max_tokens: int | None = None, temperature: float | None = None):
        self.inner, self.max_tokens, self.temperature = inner, max_tokens, temperature

    @property
    def name(self) -> str:
        """Return the inner model's name (the trajectory's policy)."""
        return getattr(self.inner, "name", "model")

    def __getattr__(self, attribute: str):
        """Read anything else (a replay script's requests, a local model's tokenizer) from the inner model."""
        if attribute == "inner":  # not set yet (a copy being built): no recursion
            raise AttributeError(attribute)
        return getattr(self.inner, attribute)

    def complete(self, messages: list[dict], *, role: str, max_tokens: int | None = None,
                 temperature: float | None = None, **call) -> Completion:
        """Answer through the inner model with the role's settings (the call's schema and context passed on); a
        caller may ask for fewer tokens, not more."""
        if self.max_tokens is not None:
            max_tokens = min(max_tokens, self.max_tokens) if max_tokens else self.max_tokens
        temperature = self.temperature if temperature is None else temperature
        return self.inner.complete(messages, role=role, max_tokens=max_tokens, temperature=temperature, **call)


def role_models(models: dict[str, Model], config: RunConfig) -> dict[str, Model]:
    """Give each role's model the max_tokens and temperature its config sets (a role with none keeps its model).

    Example:
        >>> from aoi.models.replay import ReplayModel
        >>> config = RunConfig(models={"probe": {"max_tokens": 64}})
        >>> models = role_models(dict.fromkeys(MODEL_ROLES, ReplayModel([])), config)
        >>> models["probe"].max_tokens, models["observer"].__class__.__name__
        (64, 'ReplayModel')
    """
    out = {}
    for role, model in models.items():
        settings = config.call_settings(role) if role in MODEL_ROLES else {}
        out[role] = RoleModel(model, **settings) if settings and model is not None else model
    return out


def compressor(config: RunConfig, model: Model | None, recorder: Recorder) -> Compressor:
    """Build the episode's Compressor; the expert (or no model) condenses deterministically, without model calls."""
    if model is None or getattr(model, "name", "") == "expert":
        model = None
    record = lambda messages, completion, **kw: recorder.record("compressor", messages, completion, **kw)  # noqa: E731
    return Compressor(config.agent.compress_budget_tokens, model, record)


def components(app: str) -> tuple[str, ...]:
    """Return an app's components in catalogue order (what a localization answer may name); () for an unknown app.

    Example:
        >>> components("hotel-reservation")[:3], components("nowhere")
        (('frontend', 'search', 'geo'), ())
    """
    from aoi.apps.catalog import load_app

    try:
        return tuple(load_app(app).components)
    except ValueError:
        return ()


def _step(env, action: str, role: str | None) -> tuple[str, dict]:
    """Play one env action and return its observation and info; once the environment has ended the episode, say so
    instead (with an empty info: nothing ran)."""
    if env.done:
        return "Error: the environment has no steps left in this episode; finish or submit now.", {}
    observation, _, _, _, info = env.step(action, role=role)
    return observation, info


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


def policy_of(model: Model) -> Policy:
    """Return which model made a trajectory: its name, and a local model's LoRA adapter and the adapter's version.

    Example:
        >>> from aoi.models.replay import ReplayModel
        >>> policy_of(ReplayModel([]))
        Policy(model='replay', adapter=None, version=None)
    """
    adapter = getattr(model, "adapter", None)
    return Policy(getattr(model, "name", "model"), adapter=str(adapter) if adapter else None,
                  version=getattr(model, "adapter_version", None))


def run_episode(env, config: RunConfig, models: dict[str, Model], *, attempt: int = 0,
                approval: ApprovalPolicy | None = None, audit: AuditLog | None = None,
                on_step: Callable[[Step], None] | None = None) -> Trajectory:
    """Reset the env, let the team work until it submits, and return the trajectory (env left open).

    A failure (model, environment) does not raise: it ends the episode and is kept in `trajectory.error`; a
    FatalEpisodeError (aoi.protocols) is re-raised, the episode left unjudged.
    """
    problem = env.problem
    backend = getattr(getattr(env, "backend", None), "name", "twin")
    traj = Trajectory(problem.id, problem.task_type, family=problem.family, target=problem.target, backend=backend,
                      seed=config.env.seed, attempt=attempt, config=resolved(config),
                      policy=policy_of(models["observer"]))
    traj.started_at = time.time()
    traj.env_version = env.reset()[1]["env_version"]
    recorder = Recorder(traj, on_step=on_step)
    models = role_models(models, config)
    compress = compressor(config, models.get("compressor"), recorder)
    channel = Channel(lambda action, role: _step(env, action, role), traj.id)
    steps_left = lambda: env.max_steps - env.steps  # noqa: E731
    approval = approval or ApprovalPolicy(config.approval.mode, config.approval.rules)
    guards = {"fit": compress, "steps_left": steps_left, "repeat_limit": config.agent.repeat_limit,
              "output_cap": config.agent.output_cap_chars}
    probe = SubAgent(Role.PROBE, models["probe"], probe_tools(channel), recorder,
                     Guards(budget=config.agent.probe_budget, **guards))
    executor = None
    if problem.task_type == TaskType.MITIGATION:
        executor = SubAgent(Role.EXECUTOR, models["executor"], executor_tools(channel, approval, audit), recorder,
                            Guards(budget=config.agent.executor_budget, **guards))
    episode = Episode(task_type=problem.task_type, description=env.description,
                      max_iterations=config.agent.max_iterations, submit=lambda action: _step(env, action, None)[0],
                      steps_left=steps_left, namespace=getattr(problem, "namespace", "") or "",
                      decision_format=decision_format(config.agent.decision_format, models["observer"]),
                      components=components(getattr(problem, "app", "")))
    observer = Observer(models["observer"], Team(probe, executor), recorder, compress,
                        Memory(config.agent.observer_context_tokens), episode, guide=guide_of(config.agent.guidance))
    try:
        traj.submission = observer.run()
    except KeyboardInterrupt as exc:  # the caller may save what happened so far: it rides on the exception
        traj.error = f"interrupted (Ctrl-C) after {len(traj.steps)} step(s); the trajectory is partial"
        exc.trajectory = traj
        raise
    except FatalEpisodeError:  # judging this episode would mislead the caller (a replay that missed its state)
        raise
    except Exception as exc:  # noqa: BLE001 - the trajectory keeps what happened; callers read traj.error
        traj.error = f"{type(exc).__name__}: {exc}"
        _submit_unanswered(env, problem.task_type, recorder)
    finally:
        traj.results = dict(env.results or {})
        traj.strict_success = traj.results.get("strict_success")
        traj.ended_at = time.time()
    return traj
