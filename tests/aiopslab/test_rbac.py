"""`aoi rbac` manifests validated by the twin: applied with kubectl, then checked with `kubectl auth can-i`."""

from __future__ import annotations

import pytest
import typer
import yaml
from typer.testing import CliRunner

from aoi.aiopslab.cli import rbac_command
from aoi.env.cluster_access import cluster_entry, write_kubeconfig
from aoi.twin.kubectl import KubectlRunner

APP_NS = "test-hotel-reservation"
PART_OF = "app.kubernetes.io/part-of=aoi"


def printed(*namespaces: str) -> str:
    """Run `aoi rbac --namespace ...` and return what it printed."""
    app = typer.Typer()
    app.command()(rbac_command)
    result = CliRunner().invoke(app, [arg for ns in namespaces for arg in ("--namespace", ns)])
    assert result.exit_code == 0, result.output
    return result.output


def test_the_command_prints_one_rolebinding_per_namespace():
    docs = list(yaml.safe_load_all(printed("a", "b", "a")))
    assert [d["metadata"]["namespace"] for d in docs if d["kind"] == "RoleBinding"] == ["a", "b"]
    assert {d["kind"] for d in docs} == {"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding",
                                         "RoleBinding"}


@pytest.fixture
def bare(hotel):
    """A served twin from which every aoi identity object was deleted (as on a fresh cluster)."""
    hotel.ok(["delete", "clusterrolebinding,clusterrole", "-l", PART_OF])
    hotel.ok(["delete", "rolebinding", "-A", "-l", PART_OF])
    hotel.ok(["delete", "namespace", "aoi", "--wait=true"])
    assert hotel.kubectl("get namespace aoi").returncode != 0
    return hotel


def identity(served, tmp_path, account: str) -> KubectlRunner:
    """Create a token for aoi/<account> with `kubectl create token` and return kubectl running as it."""
    token = served.ok(["create", "token", account, "-n", "aoi"]).strip()
    path = write_kubeconfig(tmp_path / f"{account}.yaml", cluster_entry(served.kubeconfigs["admin"]), account, token)
    return KubectlRunner(served.twin, path, tmp_path / "cache")


def can_i(runner: KubectlRunner, *args: str) -> str:
    return runner.run(["auth", "can-i", *args]).stdout.strip()


def test_applied_manifests_give_the_probe_and_executor_their_rights(bare, tmp_path):
    assert bare.kubectl("create token probe -n aoi").returncode != 0  # nothing to mint a token for yet
    bare.ok(["apply", "-f", "-"], stdin=printed(APP_NS).encode())
    probe, executor = identity(bare, tmp_path, "probe"), identity(bare, tmp_path, "executor")
    assert can_i(probe, "get", "pods", "-n", APP_NS) == "yes"
    assert can_i(probe, "get", "deployments", "-A") == "yes"
    assert can_i(probe, "delete", "pods", "-n", APP_NS) == "no"
    assert can_i(probe, "create", "pods/exec", "-n", APP_NS) == "no"
    assert can_i(probe, "get", "secrets", "-n", APP_NS) == "no"
    assert can_i(executor, "patch", "deployments", "-n", APP_NS) == "yes"
    assert can_i(executor, "patch", "deployments", "-n", "default") == "no"  # only the namespaces it was given
    assert can_i(executor, "delete", "nodes") == "no"
    assert can_i(executor, "create", "clusterrolebindings") == "no"
    assert probe.run(["get", "pods", "-n", APP_NS]).returncode == 0
    denied = probe.run(["delete", "pod", "-l", "io.kompose.service=geo", "-n", APP_NS])
    assert denied.returncode != 0 and "forbidden" in denied.stderr
