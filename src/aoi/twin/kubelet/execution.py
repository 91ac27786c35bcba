"""`kubectl exec` inside the twin: build the container's files, environment and programs, then run argv."""

from __future__ import annotations

import functools
import shlex

from aoi.shellsim.context import ExecContext, ExecResult
from aoi.shellsim.registry import default_registry, run
from aoi.twin.kubelet.env import build_env
from aoi.twin.kubelet.files import build_files

LOOKUP_RESOURCES = {"ConfigMap": "configmaps", "Secret": "secrets"}


def register_program(twin, name: str, program) -> None:
    """Make `name` runnable in every container; program(twin, argv, ctx) -> ExecResult (the extension point)."""
    twin.extensions.programs[name] = program


def _main_process(pod: dict, container: str) -> str:
    """Return the command line of the container's PID 1."""
    spec = next(c for c in pod["spec"]["containers"] + (pod["spec"].get("initContainers") or [])
                if c["name"] == container)
    argv = (spec.get("command") or []) + (spec.get("args") or [])
    return shlex.join(argv) if argv else spec.get("image", "").rsplit("/", 1)[-1].split(":")[0]


def exec_context(twin, pod: dict, container: str, stdin: bytes = b"") -> ExecContext:
    """Return what a process started in the container sees."""
    ns = pod["metadata"]["namespace"]
    lookup = lambda kind, namespace, name: twin.get(LOOKUP_RESOURCES[kind], namespace, name)  # noqa: E731
    services = twin.list("services", ns) if pod["spec"].get("enableServiceLinks", True) else []
    registry = default_registry()
    for name, program in twin.extensions.programs.items():
        registry.register(name, functools.partial(program, twin))
    node = twin.get("nodes", "", pod["spec"].get("nodeName", ""))
    return ExecContext(pod, container, build_env(pod, container, lookup, services), build_files(pod, container, lookup),
                       [(1, "root", _main_process(pod, container))], twin.clock.now(), stdin, registry, node=node)


def run_in_container(twin, pod: dict, container: str, argv: list[str], stdin: bytes = b"") -> ExecResult:
    """Run argv in a container of a pod, as `kubectl exec` would."""
    return run(argv, exec_context(twin, pod, container, stdin))
