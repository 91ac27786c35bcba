"""The environment: Gymnasium-style reset/step over one AIOpsLab problem, with AIOpsLab's actions and scoring.

`Env` is the episode itself (actions, trace, clock, scoring); `make()` wraps it in `StepLimit` (aoi.env.limits),
which holds the step budget as Gymnasium's TimeLimit does.
"""

from __future__ import annotations

import logging
import time
from dataclasses import replace
from pathlib import Path

from aoi import runtime_dirs
from aoi.env import shell, submission, telemetry
from aoi.env.limits import StepLimit
from aoi.env.outcome import Outcome
from aoi.env.parser import ParseError, parse
from aoi.env.prompts import task_prompt
from aoi.env.roles import ROLES, SUBMITTERS
from aoi.env.version import ENV_VERSION
from aoi.problems.model import Problem
from aoi.problems.registry import make as make_problem
from aoi.problems.scenarios import register as register_scenarios
from aoi.safety.gate import MAX_COMMAND
from aoi.safety.policy import one_line
from aoi.tasks import SUBMITTED, TaskType, succeeded

SECONDS_PER_STEP = 15.0
MAX_ACTION = 2 * MAX_COMMAND  # characters of reply text parsed per step; longer replies are refused unparsed
MAX_TIMEOUT = 120.0  # wall seconds one exec_shell command may run
MAX_NAME = 253  # characters of a Kubernetes name (DNS subdomain)
BACKENDS = ("twin", "cluster")
RESET_OPTIONS = ("target",)
log = logging.getLogger(__name__)


def make(problem_id: str, backend: str = "twin", seed: int = 0, target: str | None = None, max_steps: int = 30,
         workdir: str | Path | None = None, scenarios: list | None = None, **backend_options) -> StepLimit:
    """Create the environment of one problem: an Env inside its step budget.

    `seed` is the default of every reset(); `scenarios` names scenario files whose `scenario:<id>-<task>` problems
    `problem_id` may be (aoi.problems.scenarios); `backend_options` go to the backend: for "cluster", kubeconfig
    (required), prometheus_url, jaeger_url, settle_limit, after_inject, workload (see
    aoi.env.cluster_backend.ClusterBackend); None values are ignored.

    Example:
        >>> with make("k8s_target_port-misconfig-detection-1") as env:  # doctest: +SKIP
        ...     observation, info = env.reset(seed=3)
        >>> env = make("wrong_bin_usage-mitigation-1", backend="cluster", kubeconfig="admin.yaml")  # doctest: +SKIP
    """
    for path in scenarios or ():
        register_scenarios(path)
    problem = make_problem(problem_id, target)
    if backend not in BACKENDS:
        raise ValueError(f"backend {backend!r} is not available here; use 'twin' or 'cluster' (AIOpsLab itself runs "
                         f"AOI through `aoi aiopslab run`)")
    _require_twin(problem)
    env = Env(problem, seed=seed, workdir=workdir, backend=backend, **backend_options)
    return StepLimit(env, max_steps)


def _require_twin(problem: Problem) -> None:
    """Refuse a problem the twin cannot run (the cluster backend runs the twin's Kubernetes problems, no others)."""
    if problem.backend != "twin":
        problem.require_backend("twin")


def backend_options(env_config) -> dict:
    """Return make()'s backend keyword arguments from a config's `env` section (EnvConfig).

    Example:
        >>> from aoi.config import EnvConfig
        >>> backend_options(EnvConfig())
        {'backend': 'twin', 'kubeconfig': None, 'prometheus_url': None, 'jaeger_url': None, 'scenarios': None}
    """
    return {"backend": env_config.backend, "kubeconfig": env_config.kubeconfig,
            "prometheus_url": env_config.prometheus_url, "jaeger_url": env_config.jaeger_url,
            "scenarios": env_config.scenarios}


def _backend(name: str, workdir: Path, options: dict):
    """Build the named backend for one episode folder."""
    options = {k: v for k, v in options.items() if v is not None}
    if name == "cluster":
        from aoi.env.cluster_backend import ClusterBackend

        return ClusterBackend(workdir, **options)
    if options:
        raise ValueError(f"backend {name!r} takes no options ({', '.join(options)}); they belong to backend='cluster'")
    from aoi.env.twin_backend import TwinBackend

    return TwinBackend(workdir)


def reset_options(options: dict | None) -> dict:
    """Return reset()'s options, refusing unknown keys so a typo never runs the wrong episode.

    Example:
        >>> reset_options({"target": "geo"}), reset_options(None)
        ({'target': 'geo'}, {})
    """
    unknown = sorted(set(options or {}) - set(RESET_OPTIONS))
    if unknown:
        raise ValueError(f"unknown reset option(s) {', '.join(unknown)}; reset() takes {', '.join(RESET_OPTIONS)}")
    return dict(options or {})


def shell_kubectl(runner) -> shell.RunKubectl:
    """Return a backend's kubectl runner as exec_shell's shell calls it: (args, stdin, timeout) -> 4-tuple."""
    def run(args: list[str], stdin: bytes | None, limit: float):
        done = runner.run(args, stdin=stdin, timeout=limit)
        return done.stdout, done.stderr, done.returncode, done.timed_out

    return run


class Env:
    """One problem on one backend: reset() starts an episode, step() plays one action, close() (or `with`) ends it.

    The episode goes on until an accepted submit (terminated) or end(); the step budget is StepLimit's.
    """

    def __init__(self, problem: Problem, *, seed: int = 0, workdir: str | Path | None = None,
                 seconds_per_step: float = SECONDS_PER_STEP, backend: str = "twin", **backend_options):
        self.problem = problem
        self.seed = seed
        self.seconds_per_step = seconds_per_step
        self._owns_dir = workdir is None
        self.workdir = Path(workdir) if workdir else runtime_dirs.private_dir("episode")  # 0700, gone at exit
        self.backend = _backend(backend, self.workdir, backend_options)
        self.trace: list[dict] = []
        self.steps = 0
        self.done = False
        self.results: dict | None = None
        self.description = ""
        self.solution, self.accepted = None, False  # AIOpsLab's stored solution; whether a submit ended the episode

    # --- Gymnasium API ---
    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[str, dict]:
        """Start a fresh episode (deploy, inject, start the workload); return the task text and the episode's info.

        `seed` replaces the env's seed from this episode on; `options` may hold {"target": component}.
        """
        self._apply(reset_options(options))  # checked first: a refused reset changes nothing
        if seed is not None:
            self.seed = seed
        self.backend.start(self.problem, self.seed)
        self.trace, self.steps, self.done, self.results = [], 0, False, None
        self.solution, self.accepted = None, False
        self.started_at = self.backend.now()
        self.wall_started = time.monotonic()
        description, instructions, actions = task_prompt(self.problem)
        self.description, self.instructions, self.actions = description, instructions, actions
        docs = "\n\n".join(f"{name}:\n{doc}" for name, doc in actions.items())
        return f"{description}\n\n{instructions}\n\nAvailable actions:\n\n{docs}", self.episode_info()

    def episode_info(self) -> dict:
        """Return what callers need to know of the episode: the problem, seed, backend and ENV_VERSION."""
        p = self.problem
        return {"problem_id": p.id, "task_type": p.task_type, "app": p.app, "namespace": p.namespace,
                "family": p.family, "target": p.target, "seed": self.seed, "backend": self.backend.name,
                "env_version": ENV_VERSION, "description": self.description}

    def _apply(self, options: dict) -> None:
        """Aim the episode at the target reset()'s options name, if any."""
        if "target" in options:
            problem = make_problem(self.problem.id, options["target"])
            _require_twin(problem)
            self.problem = problem

    def step(self, action_text: str, role: str | None = None) -> tuple[str, float, bool, bool, dict]:
        """Play one action; return (observation, reward, terminated, truncated, info); only a submit terminates.

        info holds `steps`, `role`, `sim_time` (simulated seconds since reset) and what the action gave, as data:
        `refused` (exec_shell refused a command before it ran: AOI's command policy for the role, or AIOpsLab's
        blocked commands), `exit_status` (exec_shell's exit status; None when no command ran to its end, and for
        other actions), `cut` (None, or why exec_shell ended the command early: "timeout", "output_limit") and
        `accepted` (a submit: True when it ended the episode, False when refused; None for other actions). The
        episode's end adds `results` and `wall_seconds`; StepLimit adds `suffix`.
        """
        if self.done:
            raise RuntimeError("the episode is over; call reset() to start another")
        if role not in ROLES:
            raise ValueError(f"unknown role {role!r}; use None, 'observer', 'probe' or 'executor'")
        self.steps += 1
        self.trace.append({"role": "assistant", "content": action_text})
        outcome = self._play(action_text, role)
        self.trace.append({"role": "env", "content": outcome.observation})
        info = {"steps": self.steps, "role": role, "sim_time": self.backend.now() - self.started_at, **outcome.info()}
        if not outcome.accepted:
            return outcome.observation, 0.0, False, False, info
        self.accepted = True
        return outcome.observation, self.end(info), True, False, info

    def end(self, info: dict) -> float:
        """End the episode now and judge it (a submit did, or a wrapper's budget ran out); return the reward.

        The results and wall seconds go into `info`; a refused submit's solution stays, as in AIOpsLab.
        """
        self.results = self._evaluate(self.solution)
        info["results"] = self.results
        info["wall_seconds"] = round(time.monotonic() - self.wall_started, 3)
        self.done = True
        return float(succeeded(self.results))

    def close(self) -> None:
        """Stop the backend and remove the episode folder when it was a temporary one."""
        self.backend.close()
        if self._owns_dir:
            runtime_dirs.remove(self.workdir)

    def __enter__(self) -> Env:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- actions ---
    def _play(self, action_text: str, role: str | None) -> Outcome:
        """Run one action and let its simulated time pass; a failure of the environment itself (a bug, never the
        agent's doing) is logged with its traceback and answers this step with an error, and the episode goes on."""
        try:
            outcome = self._act(action_text, role)
        except Exception as exc:  # noqa: BLE001 - one broken step must not end the episode or the session
            outcome = Outcome(self._failed("this action", exc))
        try:
            self.backend.tick(self.seconds_per_step)
        except Exception as exc:  # noqa: BLE001 - as above, for the step's simulated time
            failed = self._failed("the simulated time after this action", exc)
            outcome = replace(outcome, observation=f"{outcome.observation}\n{failed}")
        return outcome

    def _failed(self, what: str, exc: Exception) -> str:
        """Log an environment failure and return the observation that reports it."""
        log.error("env: %s failed at step %d of %s", what, self.steps, self.problem.id, exc_info=exc)
        return (f"Error: the environment failed on {what} ({type(exc).__name__}: {one_line(str(exc))[:200]}); "
                "the episode goes on: try again, or another action.")

    def _act(self, action_text: str, role: str | None) -> Outcome:
        """Parse and run one action; return its outcome."""
        if not isinstance(action_text, str) or len(action_text) > MAX_ACTION:
            size = f"{len(action_text)} characters" if isinstance(action_text, str) else type(action_text).__name__
            return Outcome(f"Error: an action of {size} is refused (at most {MAX_ACTION} characters of text) — send "
                           "one short fenced block.")
        try:
            action = parse(action_text)
        except ParseError as exc:
            return Outcome(str(exc))
        if action.api == "submit":
            return self._submit(action.args, action.kwargs, role)
        return self._run(action.api, action.args, action.kwargs, role)

    def _submit(self, args: list, kwargs: dict, role: str | None) -> Outcome:
        """Store the solution and end the episode, or answer AIOpsLab's error for arguments its submit refuses."""
        if role not in SUBMITTERS:
            return Outcome(f"Error: the {role} role cannot submit; only the observer submits.", accepted=False)
        self.solution = submission.solution(args)  # stored before the call, so a refused submit's stays too
        refused = submission.refusal(self.problem.task_type, args, kwargs)
        return Outcome(refused, accepted=False) if refused else Outcome(SUBMITTED, accepted=True)

    def _run(self, api: str, args: list, kwargs: dict, role: str | None) -> Outcome:
        """Run one non-submit action and return its outcome."""
        handler = getattr(self, f"_do_{api}", None)
        if handler is None:
            return Outcome(f"Invalid action: {api}")
        try:
            return handler(*args, role=role, **kwargs)
        except TypeError as exc:  # wrong arguments: answer like AIOpsLab, naming the action
            return Outcome(str(exc).replace("Env._do_", "").replace("_do_", ""))
        except (ValueError, ArithmeticError) as exc:  # duration="abc" or 1e999: say which argument, never crash
            return Outcome(f"Error: invalid argument for {api} ({one_line(str(exc))}); pass plain numbers.")

    def _do_exec_shell(self, command: str, timeout: int = 30, role=None) -> Outcome:
        limit = min(max(float(timeout), 1.0), MAX_TIMEOUT)  # inf or 1e9 would let a stuck command hold the session
        kubectl = shell_kubectl(self.backend.runner(role))
        return shell.exec_shell(command, kubectl, self.backend.now(), limit, role=role)

    def _do_get_logs(self, namespace: str, service: str, role=None) -> Outcome:
        if any(len(str(name)) > MAX_NAME or not str(name).isprintable() for name in (namespace, service)):
            return Outcome(f"Error: namespace and service must be printable names of at most {MAX_NAME} characters.")
        return Outcome(telemetry.service_logs(self.backend.runner(role), namespace, service))

    def _do_get_metrics(self, namespace: str, duration: int = 5, role=None) -> Outcome:
        return Outcome(self.backend.get_metrics(namespace, int(duration)))

    def _do_get_traces(self, namespace: str, duration: int = 5, role=None) -> Outcome:
        return Outcome(self.backend.get_traces(namespace, int(duration)))

    def _do_read_metrics(self, file_path: str, role=None) -> Outcome:
        return Outcome(telemetry.read_export(file_path, self.workdir, "metrics"))

    def _do_read_traces(self, file_path: str, role=None) -> Outcome:
        return Outcome(telemetry.read_export(file_path, self.workdir, "traces"))

    # --- scoring ---
    def _evaluate(self, solution) -> dict:
        """Judge the episode with AIOpsLab's rules plus the strict verdict (mitigation: aoi.env.verdict's timing)."""
        from aoi.env.scoring import score
        from aoi.env.verdict import judge_mitigation

        duration = self.backend.now() - self.started_at  # AIOpsLab ends the session before its eval runs
        if self.problem.task_type != TaskType.MITIGATION:
            return score(self.problem, solution, self.trace, duration, accepted=self.accepted)
        mitigation, settled = judge_mitigation(self.problem, self.backend)
        results = score(self.problem, solution, self.trace, duration, mitigation, accepted=self.accepted)
        return {**results, "strict_settle_seconds": settled}
