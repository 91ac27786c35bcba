"""Count escape attempts that get through, per entry point, with tests/safety's escape table and checks.

Run it on this checkout, or on another with PYTHONPATH=/path/to/src (only aoi.env, aoi.problems and aoi.agents.tools
are used, so an older AOI works too). Every attempt is judged against a snapshot taken just before it, so one escape
that changes the cluster or a kubeconfig does not count the attempts after it twice; an attempt that raises counts
as crashed, one that takes over 20 s as slow.

    .venv/bin/python benchmarks/escape_figures.py
"""

from __future__ import annotations

import functools
import importlib.util
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aoi
from aoi.agents.actions import ToolCall
from aoi.agents.tools import Channel, probe_tools
from aoi.env import make
from aoi.problems import solutions

TESTS = Path(__file__).resolve().parents[1] / "tests" / "safety"
SLOW = 20.0


def load(name: str):
    """Load a module that sits in tests/safety (tests/ is not a package)."""
    spec = importlib.util.spec_from_file_location(name, TESTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


suite, table = load("test_escapes"), load("escape_table")


def judge(world: dict, run, sent: str) -> str:
    """Return escaped, crashed, slow or contained for one attempt."""
    world["before"] = (suite.objects(world["env"]), suite.host_files(world))
    started = time.monotonic()
    try:
        observation = run()
    except Exception:  # noqa: BLE001 - a crash is a figure here
        return "crashed"
    try:
        suite.assert_contained(world, world["before"], observation, sent)
    except AssertionError:
        return "escaped"
    return "slow" if time.monotonic() - started > SLOW else "contained"


def kubectl_probe(world: dict, command: str) -> str:
    """Run a command with the real kubectl and probe.yaml, no policy."""
    argv = ["kubectl", *command.replace("'", "").split()[1:]]
    env = {"PATH": "/usr/bin:/bin", "KUBECONFIG": str(world["kc"] / "probe.yaml"),
           "KUBECACHEDIR": str(world["canary"].parent / "kubecache")}  # not ./.kube: there is no HOME here
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60, stdin=subprocess.DEVNULL)
    return done.stdout + done.stderr


def entries(world: dict) -> dict:
    """Return entry point -> (attempts, run(sent) -> observation)."""
    env = world["env"]

    def act(action: str, role: str) -> tuple[str, dict]:
        """Play one action as the runtime does; return its observation and info."""
        observation, _, _, _, info = env.step(action, role=role)
        return observation, info

    tools = probe_tools(Channel(act))

    def tool(name: str, **args) -> str:
        """Run one probe tool, return its observation."""
        return tools.run(ToolCall(name, args)).observation

    return {
        "env.step probe": (table.PROBE, lambda sent: env.step(solutions.shell(sent), role="probe")[0]),
        "env.step None": (table.ADMIN, lambda sent: env.step(solutions.shell(sent), role=None)[0]),
        "env.step file actions (probe)": ([p for _, p in table.FILE_ACTIONS],
                                          lambda sent: env.step(solutions.action("read_metrics", sent), "probe")[0]),
        "kubectl + probe.yaml (writes)": (table.WRITES, lambda sent: kubectl_probe(world, sent)),
        "Probe tool exec_shell": (table.PROBE, lambda sent: tool("exec_shell", command=sent)),
        "Probe tool read_file": (["{kc}/admin.yaml", "{kc}/probe.yaml", "/etc/passwd", "{canary}"],
                                 lambda sent: tool("read_file", path=sent, op="page")),
    }


def main() -> None:
    print(f"aoi from {Path(aoi.__file__).parent}")
    for name in entries({"env": None, "kc": None}):
        env = make("k8s_target_port-misconfig-localization-1", max_steps=100_000)  # a fresh episode per entry
        env.reset()
        host = Path(tempfile.mkdtemp(prefix="aoi-escapes-"))
        canary = host / "canary.txt"
        canary.write_text(f"canary-{secrets.token_hex(16)}\n")
        world = {"env": env, "kc": env.backend.kubeconfigs["probe"].parent, "canary": canary, "out": host / "out",
                 "ns": suite.NS}
        attempts, run = entries(world)[name]
        counts: dict[str, int] = {}
        started = time.monotonic()
        for template in attempts:
            sent = suite.fill(template, world)
            verdict = judge(world, functools.partial(run, sent), sent)
            counts[verdict] = counts.get(verdict, 0) + 1
        env.close()
        shutil.rmtree(host, ignore_errors=True)
        print(f"{name}: {len(attempts)} attempts, {counts} ({time.monotonic() - started:.0f} s)", flush=True)


if __name__ == "__main__":
    sys.exit(main())
