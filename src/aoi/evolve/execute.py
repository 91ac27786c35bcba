"""Execute one fault scenario in a fresh twin and record the evidence its rewards are computed from.

The order is the scenario's life: the healthy system (its symptom commands before injection), each fault operation
applied as admin (applied, or the error), the symptoms on the faulty system and the strict health check there, the
diagnostic commands as the probe (read-only), the solution commands as the executor, then (after the system settles)
the strict health check and the symptoms again. Nothing runs for a scenario that fails its schema or its scope
check: a scenario reaching outside its namespace is refused before any of it touches a twin.
"""

from __future__ import annotations

import contextlib
import json
import shlex
from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace

from aoi.env.core import Env, shell_kubectl
from aoi.env.scenario import inject
from aoi.env.shell import ShellRefusal
from aoi.env.shell import run as run_shell
from aoi.env.twin_backend import INJECT_BUDGET, sim_budget
from aoi.faults import FaultError
from aoi.problems import scenarios
from aoi.problems.model import Fault
from aoi.problems.strict import health
from aoi.tasks import TaskType

STEP_SECONDS = 15.0  # simulated seconds each command costs, as an env step does
INJECT_SETTLE = 36.0  # the twin backend's after-inject pause plus the agent's first look (AFTER_INJECT + FIRST_LOOK)
TIMEOUT = 30.0  # wall seconds one command may run
MAX_RUNS = 60  # commands one scenario may run in all: a generated scenario cannot hold a GRPO step for long


@dataclass(frozen=True, kw_only=True)
class Run:
    """One command's evidence: who ran it, what it printed, how it ended (`refused`: the policy's answer)."""

    command: str
    role: str
    stdout: str = ""
    stderr: str = ""
    exit_code: int = 0
    refused: str = ""

    @property
    def ok(self) -> bool:
        """Return whether the command ran to a zero exit status without being refused."""
        return self.exit_code == 0 and not self.refused

    @property
    def text(self) -> str:
        """Return everything the command showed (output, errors, the refusal)."""
        return "".join((self.stdout, self.stderr, self.refused))


@dataclass(frozen=True, kw_only=True)
class Record:
    """The evidence of one scenario; `scenario` is None when the candidate failed its schema (`format_errors`).

    `faulty_health` and `fixed_health` are the strict health check's reasons (empty = healthy) after injection and
    after the solution; `error` says why a scenario that passed its checks could still not be executed.
    """

    scenario: scenarios.Scenario | None
    format_errors: tuple[str, ...] = ()
    scope_errors: tuple[str, ...] = ()
    healthy: tuple[Run, ...] = ()
    fault: tuple[Run, ...] = ()
    faulty: tuple[Run, ...] = ()
    faulty_health: tuple[str, ...] = ()
    diagnostics: tuple[Run, ...] = ()
    solution: tuple[Run, ...] = ()
    fixed_health: tuple[str, ...] = ()
    after: tuple[Run, ...] = ()
    error: str = ""
    seed: int = 0

    @property
    def executed(self) -> bool:
        """Return whether the scenario ran in a twin (valid, in scope, and the twin started)."""
        return self.scenario is not None and not self.scope_errors and not self.error

    def to_dict(self) -> dict:
        """Return the record as JSON-ready data (the scenario as its JSON object)."""
        data = asdict(replace(self, scenario=None))
        data["scenario"] = json.loads(scenarios.dumps(self.scenario)) if self.scenario is not None else None
        return data


def parse_candidate(candidate) -> tuple[scenarios.Scenario | None, list[str]]:
    """Return (scenario, []) for a valid candidate, else (None, why): a model's text, a dict or a Scenario.

    Example:
        >>> parse_candidate("not json")[1]
        ['the text is not one JSON object (it holds none); write one scenario as a JSON object']
    """
    if isinstance(candidate, scenarios.Scenario):
        return candidate, []
    if isinstance(candidate, str):
        candidate, why = scenarios.parse_text(candidate)
        if candidate is None:
            return None, [why]
    errors = scenarios.format_errors(candidate)
    return (None, errors) if errors else (scenarios.Scenario.from_dict(candidate), [])


def execute(candidate, seed: int = 0) -> Record:
    """Run one scenario candidate in a fresh twin and return its evidence (nothing runs when it is invalid).

    Example:
        >>> execute('{"id": 3}').format_errors[:1]  # doctest: +SKIP
        ['...']
    """
    scenario, errors = parse_candidate(candidate)
    if scenario is None:
        return Record(scenario=None, format_errors=tuple(errors), seed=seed)
    refused = scenarios.scope_errors(scenario)
    if refused:
        return Record(scenario=scenario, scope_errors=tuple(refused), seed=seed)
    count = len(scenario.fault) + len(scenario.diagnostic_commands) + len(scenario.solution_commands)
    if count + 3 * len(scenario.symptoms) > MAX_RUNS:
        return Record(scenario=scenario, seed=seed, error=f"the scenario would run {count} operations and commands "
                      f"plus {len(scenario.symptoms)} symptoms three times, over {MAX_RUNS}; write fewer")
    try:
        with Env(healthy_problem(scenario), seed=seed) as env:
            env.reset()
            return Record(scenario=scenario, seed=seed, **_play(env, scenario))
    except (ValueError, KeyError, OSError, RuntimeError) as exc:  # the twin could not host it: say so, never crash
        return Record(scenario=scenario, seed=seed, error=f"{type(exc).__name__}: {exc}")


def healthy_problem(scenario: scenarios.Scenario):
    """Return the scenario's problem with nothing injected at reset (execute() injects op by op, recording each)."""
    problem = scenarios.problem_of(scenario, TaskType.MITIGATION)
    return replace(problem, fault=Fault(mechanism="noop", namespace=problem.namespace, target=None))


def _play(env: Env, scenario: scenarios.Scenario) -> dict:
    """Run the scenario's life on a healthy episode and return the Record's evidence fields."""
    evidence = {"healthy": _symptoms(env, scenario)}
    evidence["fault"] = tuple(_inject(env, scenario, op) for op in scenario.fault)
    env.backend.tick(INJECT_SETTLE)
    evidence["faulty"] = _symptoms(env, scenario)
    evidence["faulty_health"] = _health(env, scenario)
    evidence["diagnostics"] = tuple(_run(env, command, "probe") for command in scenario.diagnostic_commands)
    evidence["solution"] = tuple(_run(env, command, "executor") for command in scenario.solution_commands)
    env.backend.settle()
    evidence["fixed_health"] = _health(env, scenario)
    evidence["after"] = _symptoms(env, scenario)
    return evidence


def _symptoms(env: Env, scenario: scenarios.Scenario) -> tuple[Run, ...]:
    """Run each symptom command as the probe (symptoms are read-only observations)."""
    return tuple(_run(env, symptom.command, "probe") for symptom in scenario.symptoms)


def _health(env: Env, scenario: scenarios.Scenario) -> tuple[str, ...]:
    """Return the strict health check's reasons for the scenario's namespace (empty = healthy)."""
    return tuple(health(env.backend.kube, scenario.namespace))


def _run(env: Env, command: str, role: str) -> Run:
    """Run one command line with the twin's shell as a role; a refusal or a timeout is evidence, not an exception."""
    kubectl = shell_kubectl(env.backend.runner(role))
    try:
        done = run_shell(command, kubectl, env.backend.now(), TIMEOUT, role=role)
    except ShellRefusal as refusal:
        return Run(command=command, role=role, refused=str(refusal), exit_code=1)
    finally:
        env.backend.tick(STEP_SECONDS)
    return Run(command=command, role=role, stdout=done.stdout.decode(errors="replace"),
               stderr=done.stderr.decode(errors="replace"), exit_code=done.exit_code)


def _inject(env: Env, scenario: scenarios.Scenario, op: Mapping) -> Run:
    """Apply one fault operation as admin, as an episode's reset does, and return its evidence."""
    problem = scenarios.problem_of(replace(scenario, fault=(op,)), TaskType.MITIGATION)
    try:
        with _inject_budget(env):
            inject(problem, env.backend.kube, env.backend.runner("admin"))
    except FaultError as exc:
        return Run(command=_summary(op, scenario.namespace), role="admin", stderr=str(exc), exit_code=1)
    except Exception as exc:  # noqa: BLE001 - any failure of a generated operation is evidence about it
        return Run(command=_summary(op, scenario.namespace), role="admin", stderr=f"{type(exc).__name__}: {exc}",
                   exit_code=1)
    finally:
        env.backend.tick(STEP_SECONDS)
    return Run(command=_summary(op, scenario.namespace), role="admin")


def _inject_budget(env: Env):
    """Return the context reset() injects in: on the twin, API waits may pull its clock forward."""
    twin = getattr(env.backend, "twin", None)
    return sim_budget(twin, INJECT_BUDGET) if twin is not None else contextlib.nullcontext()


def _summary(op: Mapping, namespace: str) -> str:
    """Return a fault operation as one line: its kubectl command, or `api VERB KIND NAMESPACE/NAME`."""
    if "kubectl" in op:
        return op["kubectl"]
    call = op["api"]
    name = call.get("name") or ((call.get("body") or {}).get("metadata") or {}).get("name", "")
    return f"api {call.get('verb')} {call.get('kind')} {call.get('namespace', namespace)}/{name}"


def kubectl_argv(command: str) -> list[str] | None:
    """Return a kubectl command line's arguments after `kubectl`, or None when it does not parse as one.

    Example:
        >>> kubectl_argv("kubectl get pods -n 'x y'"), kubectl_argv("kubectl get 'pods"), kubectl_argv("ls")
        (['get', 'pods', '-n', 'x y'], None, None)
    """
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    return words[1:] if len(words) > 1 and words[0] == "kubectl" else None

