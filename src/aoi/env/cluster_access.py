"""Reach a user's cluster as AOI's roles: the admin kubeconfig given, probe/executor kubeconfigs from TokenRequests."""

from __future__ import annotations

import subprocess
from pathlib import Path

import yaml
from kubernetes.client.rest import ApiException
from urllib3.exceptions import HTTPError

from aoi import runtime_dirs
from aoi.kube import Kube
from aoi.protocols import CREDENTIAL_ROLES, Role
from aoi.rbac import IDENTITY_NAMESPACE
from aoi.twin.kubectl import Completed, kubectl_binary, kubectl_env, spawn, stop

MANIFESTS = Path(__file__).resolve().parents[1] / "apps"
TOKEN_SECONDS = 3600
RBAC_HINT = "apply AOI's identities first: `aoi rbac --namespace {namespace} | kubectl apply -f -`"
# (role, verb, resource, expected answer of `kubectl auth can-i ... -n <app namespace>`)
EXPECTED = ((Role.PROBE, "get", "pods", True), (Role.PROBE, "delete", "pods", False),
            (Role.EXECUTOR, "patch", "deployments", True), (Role.EXECUTOR, "delete", "nodes", False))
TOKEN_ROLES = tuple(role for role in CREDENTIAL_ROLES if role is not Role.ADMIN)  # service accounts AOI mints for


class ClusterError(RuntimeError):
    """The cluster is not ready for AOI; the message says what is missing and what to run."""


def admin_client(kubeconfig: Path) -> Kube:
    """Return an admin client from a kubeconfig (its current context), or say why it cannot be loaded."""
    try:
        return Kube.from_kubeconfig(kubeconfig)
    except Exception as exc:
        raise ClusterError(f"cannot load kubeconfig {kubeconfig} ({exc}); pass an admin kubeconfig whose "
                           "current context is the cluster (kubectl config use-context NAME)") from exc


def check_namespace(kube: Kube, namespace: str, app: str) -> None:
    """Raise ClusterError unless the app's namespace exists on the cluster."""
    try:
        kube.get("namespaces", None, namespace)
    except ApiException as exc:
        if exc.status != 404:
            raise ClusterError(f"reading namespace {namespace} failed ({exc.status} {exc.reason}); the kubeconfig "
                               "must be an admin's") from exc
        raise ClusterError(f"namespace {namespace} does not exist: deploy {app} first with `kubectl apply -f "
                           f"{MANIFESTS / app / 'manifests'}` (or AIOpsLab's deployment of it)") from None
    except (HTTPError, OSError) as exc:
        raise ClusterError(f"cannot reach the cluster ({exc}); check the kubeconfig's server and that the "
                           "cluster is up") from exc


def request_token(kube: Kube, account: str, namespace: str, seconds: int = TOKEN_SECONDS) -> str:
    """Return a bearer token for aoi/<account> from the TokenRequest API (what `kubectl create token` does)."""
    body = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"expirationSeconds": seconds}}
    try:
        made = kube.create("serviceaccounts/token", IDENTITY_NAMESPACE, body, name=account)
    except ApiException as exc:
        if exc.status == 404:
            raise ClusterError(f"service account {IDENTITY_NAMESPACE}/{account} does not exist: "
                               + RBAC_HINT.format(namespace=namespace)) from None
        raise ClusterError(f"creating a token for {IDENTITY_NAMESPACE}/{account} failed ({exc.status} "
                           f"{exc.reason}); the kubeconfig must be an admin's") from exc
    return made["status"]["token"]


def cluster_entry(kubeconfig: Path) -> dict:
    """Return the cluster entry (server, CA) of a kubeconfig's current context, CA file paths made absolute."""
    config = yaml.safe_load(kubeconfig.read_text()) or {}
    try:
        context = next(c["context"] for c in config["contexts"] if c["name"] == config["current-context"])
        cluster = dict(next(c["cluster"] for c in config["clusters"] if c["name"] == context["cluster"]))
    except (KeyError, StopIteration, TypeError):
        raise ClusterError(f"kubeconfig {kubeconfig} has no usable current context; set one with "
                           "`kubectl config use-context NAME`") from None
    ca = cluster.get("certificate-authority")
    if ca and not Path(ca).is_absolute():
        cluster["certificate-authority"] = str((kubeconfig.parent / ca).resolve())
    return cluster


def write_kubeconfig(path: Path, cluster: dict, role: str, token: str) -> Path:
    """Write a token kubeconfig for one role (readable by this user only)."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    config = {"apiVersion": "v1", "kind": "Config", "clusters": [{"name": "aoi", "cluster": cluster}],
              "users": [{"name": f"aoi-{role}", "user": {"token": token}}],
              "contexts": [{"name": f"aoi-{role}", "context": {"cluster": "aoi", "user": f"aoi-{role}"}}],
              "current-context": f"aoi-{role}"}
    return runtime_dirs.write_private(path, yaml.safe_dump(config, sort_keys=False).encode())  # 0600 from the start


def role_kubeconfigs(kube: Kube, admin: Path, folder: Path, namespace: str) -> dict[str, Path]:
    """Return role -> kubeconfig: the admin's as given, probe and executor with fresh service-account tokens."""
    cluster = cluster_entry(admin)
    paths = {Role.ADMIN: admin}
    for role in TOKEN_ROLES:
        paths[role] = write_kubeconfig(folder / f"{role}.yaml", cluster, role, request_token(kube, role, namespace))
    return paths


class KubectlAs:
    """Run the real kubectl with one role's kubeconfig (no shell); the outcome has the twin runner's shape."""

    def __init__(self, kubeconfig: Path, cache: Path):
        self.binary = kubectl_binary()
        self.env = kubectl_env(kubeconfig, cache)

    def run(self, args: list[str], stdin: bytes | None = None, timeout: float = 30.0) -> Completed:
        """Run `kubectl ARGS...` and return its output; at the timeout its whole group dies."""
        proc = spawn([self.binary, *args], self.env, stdin)
        try:
            out, err = proc.communicate(input=stdin, timeout=timeout)
            code, timed_out = proc.returncode, False
        except subprocess.TimeoutExpired:
            (out, err), code, timed_out = stop(proc), -1, True
        return Completed(args, code, out.decode(errors="replace"), err.decode(errors="replace"), timed_out)


def verify(runners: dict[str, KubectlAs], namespace: str, expected=EXPECTED) -> None:
    """Check with `kubectl auth can-i` that each identity may do what it must and nothing it must not."""
    for role, verb, resource, allowed in expected:
        done = runners[role].run(["auth", "can-i", verb, resource, "-n", namespace])
        out, err = done.stdout, done.stderr
        if (out.strip() == "yes") != allowed:
            fix = RBAC_HINT.format(namespace=namespace) if allowed else "remove the extra bindings that grant it"
            raise ClusterError(f"the {role} identity {'cannot' if allowed else 'can'} {verb} {resource} in "
                               f"{namespace} ({(out or err).strip()}): {fix}")

