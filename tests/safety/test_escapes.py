"""Escape attempts through every entry point: env.step (probe and role=None), the real kubectl with probe.yaml, and
the agents' Probe tools. After each one the cluster's objects, the host files and the observation are checked."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import secrets
import subprocess
from pathlib import Path

import pytest

from aoi.agents.actions import ToolCall
from aoi.agents.tools import Channel
from aoi.agents.tools import probe_tools as probe_toolset
from aoi.env import make
from aoi.problems import solutions


def _table():
    """Load the escape table that sits beside this file (tests/ is not a package)."""
    spec = importlib.util.spec_from_file_location("escape_table", Path(__file__).with_name("escape_table.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


escapes = _table()

NS = "test-social-network"
KINDS = ("deployments", "services", "configmaps", "secrets", "serviceaccounts", "roles", "rolebindings", "clusterroles",
         "clusterrolebindings", "namespaces", "persistentvolumes", "nodes", "replicasets")
STAMP = ("resourceVersion", "managedFields", "generation")
# kubectl's success lines: `deployment.apps/x scaled`, `pod "x" deleted`, `node/x cordoned`.
DONE = re.compile(r"^\S+( \"\S+\")? (created|deleted|configured|patched|scaled|labeled|annotated|restarted|cordoned|"
                  r"drained|tainted|rolled back|exposed|autoscaled|paused|image updated|env updated)$", re.MULTILINE)


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """One episode, a canary host file and an output folder that must never appear."""
    env = make("k8s_target_port-misconfig-localization-1", max_steps=100_000)
    env.reset()
    host = tmp_path_factory.mktemp("host")
    canary = host / "canary.txt"
    canary.write_text(f"canary-{secrets.token_hex(16)}\n")
    kc = env.backend.kubeconfigs["probe"].parent
    world = {"env": env, "kc": kc, "canary": canary, "out": host / "out", "ns": NS}
    world["before"] = (objects(env), host_files(world))  # nothing any attempt does may change either
    yield world
    env.close()


def fill(template: str, world: dict) -> str:
    """Put the world's paths into an attempt."""
    return template.format(kc=world["kc"], canary=world["canary"], out=world["out"], ns=world["ns"])


def objects(env) -> dict:
    """Return every object the attempts could change, minus what controllers keep updating (status, stamps)."""
    seen = {}
    for kind in KINDS:
        for obj in env.backend.twin.list(kind):
            meta = {k: v for k, v in obj["metadata"].items() if k not in STAMP}
            body = {k: v for k, v in obj.items() if k not in ("status", "metadata")}
            seen[(kind, meta.get("namespace"), meta["name"])] = json.dumps([meta, body], sort_keys=True, default=str)
    return seen


def host_files(world: dict) -> dict:
    """Return bytes and mtimes of the kubeconfig folder and the canary, and whether the output folder exists."""
    files = sorted(world["kc"].iterdir()) + [world["canary"]]
    state = {str(p): (p.read_bytes(), p.stat().st_mtime_ns) for p in files if p.is_file()}
    state["out exists"] = world["out"].exists()
    state["profiles"] = sorted(str(p) for p in Path.cwd().glob("*.pprof"))  # kubectl --profile writes here
    return state


def leaks(world: dict) -> list[str]:
    """Return what no observation may hold: bearer tokens, Secret data, the canary, the kubeconfig folder's path."""
    twin = world["env"].backend.twin
    found = list(twin.credentials.values()) + [world["canary"].read_text().strip(), str(world["kc"])]
    for secret in twin.list("secrets"):
        found += [value for value in (secret.get("data") or {}).values() if len(value) >= 8]
    return found


def assert_contained(world: dict, before: tuple, observation: str, sent: str) -> None:
    """Check the cluster, the host and the observation (minus what the attempt itself sent) after one attempt."""
    assert objects(world["env"]) == before[0], "the cluster changed"
    assert host_files(world) == before[1], "a host file changed"
    observation = observation.replace(sent, "")
    assert not [leak for leak in leaks(world) if leak not in sent and leak in observation], \
        f"leaked into: {observation[:300]}"


def attempt(world: dict, run, sent: str) -> str:
    """Run one attempt, compare the cluster and the host with the module's snapshot; return the observation."""
    observation = run()
    assert_contained(world, world["before"], observation, sent)
    return observation


def act(world: dict, action: str, role) -> tuple[str, dict]:
    observation, _, _, _, info = world["env"].step(action, role=role)
    return observation, info


def step(world: dict, action: str, role) -> str:
    return act(world, action, role)[0]


@pytest.mark.parametrize("command", escapes.PROBE)
def test_step_probe(world, command):
    sent = fill(command, world)
    attempt(world, lambda: step(world, solutions.shell(sent), "probe"), sent)


@pytest.mark.parametrize("command", escapes.ADMIN)
def test_step_admin(world, command):
    sent = fill(command, world)
    attempt(world, lambda: step(world, solutions.shell(sent), None), sent)


@pytest.mark.parametrize("api, path", escapes.FILE_ACTIONS)
@pytest.mark.parametrize("role", ["probe", None])
def test_step_file_actions(world, api, path, role):
    sent = fill(path, world)
    observation = attempt(world, lambda: step(world, solutions.action(api, sent), role), sent)
    assert "not found" in observation


@pytest.mark.parametrize("namespace, service", escapes.LOG_ACTIONS)
def test_step_log_actions(world, namespace, service):
    sent = [fill(namespace, world), fill(service, world)]
    attempt(world, lambda: step(world, solutions.action("get_logs", *sent), "probe"), " ".join(sent))


@pytest.mark.parametrize("command", escapes.WRITES + escapes.SECRETS[:3])
def test_kubectl_with_probe_credentials(world, command):
    """RBAC alone: the real kubectl with probe.yaml, no policy in front."""
    argv = ["kubectl", *fill(command, world).replace("'", "").split()[1:]]
    env = {**os.environ, "KUBECONFIG": str(world["kc"] / "probe.yaml")}

    def run() -> str:
        done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60, stdin=subprocess.DEVNULL)
        return done.stdout + done.stderr

    assert not DONE.search(attempt(world, run, " ".join(argv))), "kubectl reports a change"


@pytest.fixture(scope="module")
def probe_tools(world):
    return probe_toolset(Channel(lambda action, role: act(world, action, role)))


@pytest.mark.parametrize("command", escapes.PROBE)
def test_probe_tool(world, probe_tools, command):
    sent = fill(command, world)
    attempt(world, lambda: probe_tools.run(ToolCall("exec_shell", {"command": sent})).observation, sent)


@pytest.mark.parametrize("path", ["{kc}/admin.yaml", "{kc}/probe.yaml", "/etc/passwd", "{canary}",
                                  "{kc}/../kubeconfigs/admin.yaml"])
def test_probe_tool_read_file(world, probe_tools, path):
    sent = fill(path, world)
    read = ToolCall("read_file", {"path": sent, "op": "page"})
    observation = attempt(world, lambda: probe_tools.run(read).observation, sent)
    assert "Refused" in observation
