"""The three apps' strict health checks as one callable, for the twin's soak (test and benchmark) to run each step."""

from __future__ import annotations

from typing import Any

from aoi.apps.catalog import APP_NAMES, load_app
from aoi.kube import Kube
from aoi.problems import strict


class AppHealth:
    """Evaluate every app's strict health check as the soak's current clone's admin; return what raised."""

    def __init__(self):
        self.kube, self.sequence = None, 0
        self.namespaces = [load_app(name).namespace for name in APP_NAMES]

    def __call__(self, soak: Any) -> list[str]:
        """Return one line per health check that raised (a check that only finds the app unhealthy is fine)."""
        from kubernetes import config

        if self.kube is None or self.sequence != soak.sequence:  # a new sequence runs on a new clone
            if self.kube is not None:
                self.kube.close()
            self.kube, self.sequence = Kube(config.new_client_from_config_dict(soak.kubeconfig())), soak.sequence
        found = []
        for namespace in self.namespaces:
            try:
                strict.health(self.kube, namespace)
            except Exception as exc:  # noqa: BLE001 - any exception is the finding
                found.append(f"the health check of {namespace} raised {type(exc).__name__}: {exc}")
        return found
