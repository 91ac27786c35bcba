"""MongoDB faults: revoke the app user's role or drop the user (mounted scripts), require TLS in mongod.conf."""

from __future__ import annotations

from dataclasses import dataclass

import yaml

from aoi.faults.base import FaultError, Injector
from aoi.kube import Kube

SCRIPTS_DIR = "/scripts"


@dataclass(frozen=True)
class ExecResult:
    """What one script run inside a MongoDB pod returned."""

    pod: str
    exit_code: int
    stdout: str
    stderr: str


def _running(pods: list[dict]) -> list[dict]:
    """Return the pods that are Running and not being deleted."""
    return [p for p in pods if p.get("status", {}).get("phase") == "Running"
            and not p["metadata"].get("deletionTimestamp")]


def _dependent_pods(kube: Kube, namespace: str, deployment: str) -> list[dict]:
    """Return the pods of the service that uses a store (none when that Deployment does not exist)."""
    if deployment not in {d["metadata"]["name"] for d in kube.list("deployments", namespace)}:
        return []
    return kube.pods_of("deployments", namespace, deployment)


class MongoScript(Injector):
    """Run a mounted fault script in a MongoDB pod, then restart the service that logs in to it.

    The script names follow AIOpsLab's ConfigMaps failure-admin-<x> mounted at /scripts, where <x> is the target
    without its `mongodb-` prefix (mongodb-geo -> geo); the dependent service is the Deployment named <x>.
    """

    inject_script = "revoke-admin-{x}-mongo.sh"
    recover_script = "revoke-mitigate-admin-{x}-mongo.sh"

    def targets(self, kube, namespace):
        return sorted(d["metadata"]["name"] for d in kube.list("deployments", namespace)
                      if d["metadata"]["name"].startswith("mongodb-") and _mounts_scripts(d))

    def inject(self, kube, namespace, target, check: bool = True, **options) -> list[ExecResult]:
        """Run the fault script, then delete the dependent service's pods; return the script runs."""
        return self._run(kube, namespace, target, self.inject_script, check)

    def recover(self, kube, namespace, target, check: bool = True, **options) -> list[ExecResult]:
        """Run the mitigation script, then delete the dependent service's pods; return the script runs."""
        return self._run(kube, namespace, target, self.recover_script, check)

    def _run(self, kube: Kube, namespace: str, target: str, script: str, check: bool) -> list[ExecResult]:
        """Exec /bin/bash <script> in every running pod of the target, then restart the dependent pods."""
        self.check_target(kube, namespace, target)
        x = target.removeprefix("mongodb-")
        path = f"{SCRIPTS_DIR}/{script.format(x=x)}"
        mongo = _running(kube.pods_of("deployments", namespace, target))
        if not mongo:
            raise FaultError(f"{self.name}: deployment {namespace}/{target} has no running pod to exec {path} in; "
                             f"check `kubectl get pods -n {namespace}` and retry once it runs")
        results = []
        for pod in mongo:
            name, container = pod["metadata"]["name"], pod["spec"]["containers"][0]["name"]
            results.append(ExecResult(name, *kube.exec(namespace, name, container, ["/bin/bash", path])))
            if check and results[-1].exit_code != 0:
                raise FaultError(f"{self.name}: /bin/bash {path} in {namespace}/{name} exited "
                                 f"{results[-1].exit_code}: {results[-1].stderr.strip()}")
        kube.delete_pods(namespace, _dependent_pods(kube, namespace, x))
        return results


def _mounts_scripts(deployment: dict) -> bool:
    """Tell whether a Deployment's containers mount the fault scripts directory."""
    containers = deployment["spec"]["template"]["spec"]["containers"]
    return any(m.get("mountPath") == SCRIPTS_DIR for c in containers for m in c.get("volumeMounts") or [])


class MongoRevoke(MongoScript):
    """Revoke readWrite on the service's database from user admin (AIOpsLab revoke_auth)."""

    name = "mongo_revoke"
    summary = "exec /scripts/revoke-admin-<x>-mongo.sh in mongodb-<x>, delete <x> pods; recover revoke-mitigate-..."


class MongoDropUser(MongoScript):
    """Drop user admin as root (AIOpsLab storage_user_unregistered)."""

    name = "mongo_drop_user"
    summary = "exec /scripts/remove-admin-mongo.sh in mongodb-<x>, delete <x> pods; recover remove-mitigate-admin-..."
    inject_script = "remove-admin-mongo.sh"
    recover_script = "remove-mitigate-admin-{x}-mongo.sh"


class MongoTls(Injector):
    """Make mongod require TLS its clients do not speak (AIOpsLab auth_miss_mongodb on url-shorten-mongodb).

    AIOpsLab does this with `helm upgrade`; the effect is the same ConfigMap change (`mongod.conf` gets
    net.tls.mode requireTLS with the mounted `mongodb-tls` Secret's files), then the client service's pods are
    deleted and the MongoDB Deployment is restarted.
    """

    name = "mongo_tls"
    summary = "mongod.conf net.tls.mode requireTLS in the store's ConfigMap, delete client pods, rollout restart"
    conf_key = "mongod.conf"

    def targets(self, kube, namespace):
        deployments = {d["metadata"]["name"] for d in kube.list("deployments", namespace)}
        maps = kube.list("configmaps", namespace)
        return sorted(m["metadata"]["name"] for m in maps
                      if self.conf_key in (m.get("data") or {}) and m["metadata"]["name"] in deployments)

    def inject(self, kube, namespace, target, certificate_key_file: str = "/etc/tls/tls.pem",
               ca_file: str = "/etc/tls/ca.crt", secret: str = "mongodb-tls", **options):
        """Set requireTLS with the certificate files (mounting the Secret when the store lacks it), then restart."""
        tls = {"mode": "requireTLS", "certificateKeyFile": certificate_key_file, "CAFile": ca_file}
        target = self.check_target(kube, namespace, target)
        self._mount_certificates(kube, namespace, target, secret, certificate_key_file.rsplit("/", 1)[0])
        self._configure(kube, namespace, target, tls)

    def _mount_certificates(self, kube: Kube, namespace: str, target: str, secret: str, folder: str) -> None:
        """Mount the TLS Secret into the store's container, as the chart does when TLS is on (idempotent)."""
        dep = kube.get("deployments", namespace, target)
        spec = dep["spec"]["template"]["spec"]
        container = spec["containers"][0]
        if any(m.get("mountPath") == folder for m in container.get("volumeMounts") or []):
            return
        body = {"spec": {"template": {"spec": {
            "volumes": [{"name": "tls-cert", "secret": {"secretName": secret}}],
            "containers": [{"name": container["name"],
                            "volumeMounts": [{"name": "tls-cert", "mountPath": folder, "readOnly": True}]}]}}}}
        kube.patch("deployments", namespace, target, body)

    def recover(self, kube, namespace, target, **options):
        """Set TLS mode back to disabled, then restart the clients and the store."""
        self._configure(kube, namespace, target, {"mode": "disabled"})

    def _configure(self, kube: Kube, namespace: str, target: str, tls: dict) -> None:
        """Write net.tls into mongod.conf, restart the store, then delete the client service's pods."""
        cm = kube.get("configmaps", namespace, self.check_target(kube, namespace, target))
        conf = yaml.safe_load(cm["data"][self.conf_key]) or {}
        conf.setdefault("net", {})["tls"] = tls
        text = yaml.safe_dump(conf, sort_keys=False, default_flow_style=False)
        kube.patch("configmaps", namespace, target, {"data": {self.conf_key: text}}, how="merge")
        kube.restart_deployment(namespace, target)
        kube.wait_rollout(namespace, target)  # the clients restart against the reconfigured store
        kube.delete_pods(namespace, _dependent_pods(kube, namespace, client_of(target)))


def client_of(store: str) -> str:
    """Return the service that uses a SocialNetwork store.

    Example:
        >>> client_of("url-shorten-mongodb")
        'url-shorten-service'
    """
    return store.removesuffix("-mongodb") + "-service"
