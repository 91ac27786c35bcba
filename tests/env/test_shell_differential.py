"""exec_shell's shell against real bash: each script of shell_scripts.yaml runs through the twin's shell on the
simulated host and through /bin/bash with the real kubectl pointed at the same twin (the episode's admin kubeconfig);
stdout and exit status must be the same."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from aoi.env import make, shell
from aoi.env.core import shell_kubectl
from aoi.twin.kubectl import kubectl_env

NS = "test-social-network"
SCRIPTS = yaml.safe_load((Path(__file__).parent / "shell_scripts.yaml").read_text())


@pytest.fixture(scope="module")
def backend():
    episode = make("k8s_target_port-misconfig-localization-1", max_steps=10)
    episode.reset()
    yield episode.backend
    episode.close()


def bash(script: str, kubeconfig: Path, folder: Path) -> tuple[bytes, int]:
    """Run a script with the real bash and kubectl against the twin, in a scratch folder."""
    env = kubectl_env(kubeconfig, folder / "cache") | {"HOME": str(folder)}
    done = subprocess.run(["/bin/bash", "-c", script], cwd=folder, env=env, capture_output=True, timeout=120)
    return done.stdout, done.returncode


def test_the_scripts_are_many_and_named_once():
    assert len(SCRIPTS) >= 60
    assert len({s["name"] for s in SCRIPTS}) == len(SCRIPTS)


@pytest.mark.parametrize("case", SCRIPTS, ids=[s["name"] for s in SCRIPTS])
def test_exec_shell_matches_bash(backend, case, tmp_path):
    script = f"NS={NS}\n{case['script']}"
    ours = shell.run(script, shell_kubectl(backend.runner(None)), backend.now())
    theirs = bash(script, backend.admin_kubeconfig(), tmp_path)
    assert (ours.stdout.decode(), ours.exit_code) == (theirs[0].decode(), theirs[1]), ours.stderr.decode()
