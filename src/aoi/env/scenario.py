"""Faults in an episode: a registry problem's aoi.faults injector, or a scenario's operations applied as admin.

One code path for every backend: kubectl operations go through the backend's admin kubectl runner, API operations
through its admin client (`aoi.kube.Kube`). A scenario's mitigation is judged by the strict health of its namespace
plus "no symptom pattern matches any more"; on a real cluster, closing the episode runs its solution as admin.
"""

from __future__ import annotations

import shlex

from kubernetes.client.exceptions import ApiException

from aoi.env import shell
from aoi.env.outcome import Outcome
from aoi.faults import FaultError
from aoi.faults import get as get_injector
from aoi.kube import Kube
from aoi.problems.model import Problem
from aoi.problems.oracles import OracleResult, strict_check
from aoi.problems.scenario_schema import API_KINDS
from aoi.problems.scenarios import MECHANISM

OP_TIMEOUT = 120.0  # wall seconds one fault operation may run
SYMPTOM_TIMEOUT = 30.0


def is_scenario(problem: Problem) -> bool:
    """Tell whether a problem comes from a scenario (its fault is a list of operations)."""
    return problem.fault.mechanism == MECHANISM


def inject(problem: Problem, kube: Kube, admin) -> None:
    """Put the problem's fault in place: its injector, or each scenario operation in order (FaultError on failure)."""
    fault = problem.fault
    if not is_scenario(problem):
        get_injector(fault.mechanism).inject(kube, fault.namespace, fault.target, **dict(fault.params))
        return
    for i, op in enumerate(fault.params["operations"]):
        if "kubectl" in op:
            _kubectl(op, admin, i)
        else:
            _api(op["api"], kube, fault.namespace, i)


def _kubectl(op: dict, admin, i: int) -> None:
    """Run one kubectl operation as admin; raise FaultError naming it when it fails."""
    words = shlex.split(op["kubectl"])
    if not words or words[0] != "kubectl":
        raise FaultError(f"fault/{i}: {op['kubectl']!r} is not a kubectl command line; start it with kubectl")
    stdin = op.get("stdin")
    done = admin.run(words[1:], stdin=None if stdin is None else stdin.encode(), timeout=OP_TIMEOUT)
    if done.returncode != 0 or done.timed_out:
        how = "timed out" if done.timed_out else f"exited {done.returncode}"
        raise FaultError(f"fault/{i}: `{op['kubectl']}` {how}: {' '.join(done.stderr.split())[:300]}; fix the "
                         "operation (docs/scenarios.md)")


def _api(api: dict, kube: Kube, namespace: str, i: int) -> None:
    """Do one API operation as admin; raise FaultError naming it when the server refuses it."""
    resource, ns = API_KINDS[api["kind"]], api.get("namespace", namespace)
    name = api.get("name") or (api.get("body") or {}).get("metadata", {}).get("name")
    try:
        if api["verb"] == "create":
            kube.create(resource, ns, api["body"])
        elif api["verb"] == "replace":
            kube.replace(resource, ns, name, api["body"])
        elif api["verb"] == "delete":
            kube.delete(resource, ns, name)
        else:
            how = api.get("patch_type") or ("json" if isinstance(api["patch"], list) else "merge")
            kube.patch(resource, ns, name, api["patch"], how=how)
    except ApiException as exc:
        raise FaultError(f"fault/{i}: {api['verb']} {api['kind']} {ns}/{name} failed: {exc.status} {exc.reason}; "
                         "fix the operation (docs/scenarios.md)") from exc


def _shell(backend, command: str) -> Outcome:
    """Run one command line through exec_shell as admin and return its outcome."""
    runner = backend.runner(None)

    def kubectl(args: list[str], stdin: bytes | None, limit: float):
        done = runner.run(args, stdin=stdin, timeout=limit)
        return done.stdout, done.stderr, done.returncode, done.timed_out

    return shell.exec_shell(command, kubectl, backend.now(), SYMPTOM_TIMEOUT, role=None)


def symptoms_showing(problem: Problem, backend) -> list[str]:
    """Return a reason per symptom whose pattern still matches its command's output.

    Example (sketch; needs a started backend):
        symptoms_showing(env.problem, env.backend)  # ['symptom still shows: geo wants no replicas (...)']
    """
    found = []
    for symptom in problem.fault.expect["symptoms"]:
        if symptom.shows(_shell(backend, symptom.command).observation):
            found.append(f"symptom still shows: {symptom.description or symptom.command} (`{symptom.command}` "
                         f"matches /{symptom.pattern}/)")
    return found


def judge(problem: Problem, backend) -> tuple[OracleResult, float]:
    """Return a scenario's mitigation verdict (strict health plus no symptom; parity is the same) and the wait."""
    ended = backend.now()
    backend.settle()
    reasons = [*strict_check(problem, backend.kube).reasons, *symptoms_showing(problem, backend)]
    return OracleResult(not reasons, tuple(reasons), not reasons), round(backend.now() - ended, 3)


def recover(problem: Problem, backend) -> list[str]:
    """Run a scenario's solution commands as admin (closing an episode on a real cluster); return the failures."""
    failed = []
    for command in problem.fault.expect["solution"]:
        outcome = _shell(backend, command)
        if outcome.exit_status != 0:
            failed.append(f"{command}: {' '.join(outcome.observation.split())[:200]}")
    return failed
