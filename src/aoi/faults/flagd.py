"""Astronomy Shop feature flags: set a flagd flag's defaultVariant in its ConfigMap, then restart flagd."""

from __future__ import annotations

import json

from kubernetes.client.rest import ApiException

from aoi.faults.base import Injector
from aoi.kube import Kube

FAULT_VARIANTS = {"paymentFailure": "100%", "imageSlowLoad": "10sec"}  # every other flag turns "on"
OFF = "off"


def fault_variant(flag: str) -> str:
    """Return the variant AIOpsLab's OTel injector turns a flag to.

    Example:
        >>> fault_variant("paymentFailure"), fault_variant("adFailure")
        ('100%', 'on')
    """
    return FAULT_VARIANTS.get(flag, "on")


class FlagdFlag(Injector):
    """Turn an OpenTelemetry-demo failure flag on (AIOpsLab astronomy_shop_* problems).

    Edits ConfigMap `flagd-config`, key `demo.flagd.json` (`flags.<flag>.defaultVariant`), then does what
    `kubectl rollout restart deployment flagd` does. Recovery sets the variant to "off".
    """

    name = "flagd_flag"
    summary = "flagd-config demo.flagd.json flags.<flag>.defaultVariant -> fault variant, rollout restart flagd"

    def __init__(self, config_map: str = "flagd-config", key: str = "demo.flagd.json", deployment: str = "flagd"):
        self.config_map, self.key, self.deployment = config_map, key, deployment

    def targets(self, kube, namespace):
        try:
            return sorted(self._flags(kube, namespace)["flags"])
        except (ApiException, KeyError, TypeError, ValueError):  # no ConfigMap, key or readable JSON
            return []

    def check_target(self, kube, namespace, target):
        valid = self.targets(kube, namespace)
        if target not in valid:
            raise ValueError(f"{self.name}: unknown flag {target!r} in ConfigMap {namespace}/{self.config_map} "
                             f"({self.key}); known flags: {', '.join(valid) or 'none (is the demo deployed?)'}")
        return target

    def inject(self, kube, namespace, target, variant: str | None = None, **options):
        """Set the flag's defaultVariant to `variant` (default: its fault variant) and restart flagd."""
        self._set(kube, namespace, target, variant or fault_variant(target))

    def recover(self, kube, namespace, target, **options):
        """Set the flag's defaultVariant back to "off" and restart flagd."""
        self._set(kube, namespace, target, OFF)

    def _flags(self, kube: Kube, namespace: str) -> dict:
        """Return the parsed flag file."""
        return json.loads(kube.get("configmaps", namespace, self.config_map)["data"][self.key])

    def _set(self, kube: Kube, namespace: str, flag: str, variant: str) -> None:
        """Write the new defaultVariant and restart flagd so it rereads the file."""
        self.check_target(kube, namespace, flag)
        data = self._flags(kube, namespace)
        variants = data["flags"][flag].get("variants") or {}
        if variant not in variants:
            raise ValueError(f"{self.name}: flag {flag} has no variant {variant!r}; "
                             f"choose one of: {', '.join(variants)}")
        data["flags"][flag]["defaultVariant"] = variant
        kube.patch("configmaps", namespace, self.config_map, {"data": {self.key: json.dumps(data, indent=2)}},
                   how="merge")
        kube.restart_deployment(namespace, self.deployment)
