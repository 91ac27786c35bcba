"""The oracles' view of a cluster: Kubernetes API reads (and one exec) through the official Python client.

Nothing here knows about the twin: point a kubeconfig at a real cluster and the same reads work there.
"""

from __future__ import annotations

from pathlib import Path
from typing import Union

from kubernetes import client, config
from kubernetes.stream import stream


class Cluster:
    """Typed reads of the objects the mitigation oracles inspect."""

    def __init__(self, api: client.ApiClient):
        self.api = api
        self.core = client.CoreV1Api(api)
        self.apps = client.AppsV1Api(api)

    @classmethod
    def connect(cls, kube: "KubeLike") -> "Cluster":
        """Return a Cluster for a kubeconfig path, an ApiClient or an existing Cluster."""
        if isinstance(kube, Cluster):
            return kube
        if isinstance(kube, client.ApiClient):
            return cls(kube)
        return cls(config.new_client_from_config(config_file=str(kube)))

    def pods(self, namespace: str, selector: dict | None = None) -> list:
        """Return the pods of a namespace, optionally only those matching a label selector."""
        labels = ",".join(f"{k}={v}" for k, v in (selector or {}).items())
        return self.core.list_namespaced_pod(namespace, label_selector=labels or None).items

    def deployment(self, namespace: str, name: str):
        """Return one Deployment."""
        return self.apps.read_namespaced_deployment(name, namespace)

    def deployments(self, namespace: str) -> list:
        """Return the Deployments of a namespace."""
        return self.apps.list_namespaced_deployment(namespace).items

    def deployment_pods(self, namespace: str, name: str) -> list:
        """Return the pods a Deployment's selector matches."""
        return self.pods(namespace, self.deployment(namespace, name).spec.selector.match_labels or {})

    def service(self, namespace: str, name: str):
        """Return one Service."""
        return self.core.read_namespaced_service(name, namespace)

    def config_map(self, namespace: str, name: str):
        """Return one ConfigMap."""
        return self.core.read_namespaced_config_map(name, namespace)

    def claims(self, namespace: str) -> list:
        """Return the PersistentVolumeClaims of a namespace."""
        return self.core.list_namespaced_persistent_volume_claim(namespace).items

    def exec(self, namespace: str, pod: str, container: str | None, argv: list[str]) -> str:
        """Run a command in a container (no TTY, no stdin) and return its stdout and stderr."""
        api = client.CoreV1Api(self.api)  # stream() swaps the request method of the api it is given
        return stream(api.connect_get_namespaced_pod_exec, pod, namespace, container=container, command=argv,
                      stderr=True, stdin=False, stdout=True, tty=False)


KubeLike = Union[Cluster, client.ApiClient, str, Path]
