"""Chaos Mesh faults: PodChaos (pod-failure, container-kill, pod-kill) and NetworkChaos (loss, delay) objects."""

from __future__ import annotations

from aoi.faults.base import Injector
from aoi.kube import Kube, tolerate

# AIOpsLab's object names per action; recovery deletes the object by the same name.
DEFAULT_NAMES = {"pod-failure": "pod-failure-experiment", "container-kill": "container-kill", "pod-kill": "pod-kill",
                 "loss": "loss", "delay": "delay"}
NAMESPACED_SELECTOR = {"loss"}  # AIOpsLab's loss object alone lists selector.namespaces


class ChaosObject(Injector):
    """Create a Chaos Mesh object that selects one pod of the target service; recover deletes it."""

    kind, resource, actions = "PodChaos", "podchaos", ("pod-failure", "container-kill", "pod-kill")

    def targets(self, kube, namespace):
        return sorted(s["metadata"]["name"] for s in kube.list("services", namespace) if s["spec"].get("selector"))

    def spec(self, kube: Kube, namespace: str, target: str, action: str, options: dict) -> dict:
        """Return the action-specific part of the spec (subclasses)."""
        raise NotImplementedError

    def manifest(self, kube: Kube, namespace: str, target: str, action: str, duration: str, name: str | None,
                 options: dict) -> dict:
        """Return the object AIOpsLab's SymptomFaultInjector applies for this action."""
        if action not in self.actions:
            raise ValueError(f"{self.name}: unknown action {action!r}; choose one of: {', '.join(self.actions)}")
        selector = {"labelSelectors": dict(kube.get("services", namespace, target)["spec"]["selector"])}
        if action in NAMESPACED_SELECTOR:
            selector = {"namespaces": [namespace], **selector}
        spec = {"action": action, "mode": "one", "duration": duration, "selector": selector}
        spec.update(self.spec(kube, namespace, target, action, options))
        return {"apiVersion": "chaos-mesh.org/v1alpha1", "kind": self.kind,
                "metadata": {"name": name or DEFAULT_NAMES[action], "namespace": namespace}, "spec": spec}

    def inject(self, kube, namespace, target, action: str | None = None, duration: str = "200s",
               name: str | None = None, **options) -> dict:
        """Create the chaos object (an existing one of the same name is left alone); return the manifest."""
        self.check_target(kube, namespace, target)
        body = self.manifest(kube, namespace, target, action or self.actions[0], duration, name, options)
        with tolerate(409):
            kube.create(self.resource, namespace, body)
        return body

    def recover(self, kube, namespace, target=None, action: str | None = None, name: str | None = None, **options):
        """Delete the chaos object (already gone is fine); Chaos Mesh then restores the pods."""
        name = name or DEFAULT_NAMES[action or self.actions[0]]
        with tolerate(404):
            kube.delete(self.resource, namespace, name)


class PodChaos(ChaosObject):
    """PodChaos pod-failure (AIOpsLab pod_failure / pod_kill), container-kill (container_kill) or pod-kill."""

    name = "pod_chaos"
    summary = "Chaos Mesh PodChaos pod-failure | container-kill | pod-kill, mode one, on the service's pods"

    def spec(self, kube, namespace, target, action, options):
        if action != "container-kill":
            return {}
        names = options.get("container_names")
        if not names:
            pods = kube.pods_of("services", namespace, target)
            if not pods:
                raise ValueError(f"{self.name}: service {namespace}/{target} selects no pod to take a container "
                                 "name from; pass container_names=[...]")
            names = [pods[0]["spec"]["containers"][0]["name"]]
        return {"containerNames": list(names)}


class NetworkChaos(ChaosObject):
    """NetworkChaos loss (99%, correlation 100) or delay (10s, jitter 0ms, correlation 100) on the service's pods."""

    name = "network_chaos"
    summary = "Chaos Mesh NetworkChaos loss 99% | delay 10s, mode one, on the service's pods"
    kind, resource, actions = "NetworkChaos", "networkchaos", ("loss", "delay")

    def spec(self, kube, namespace, target, action, options):
        correlation = str(options.get("correlation", "100"))
        if action == "loss":
            return {"loss": {"loss": str(options.get("loss", "99")), "correlation": correlation}}
        return {"delay": {"latency": options.get("latency", "10s"), "correlation": correlation,
                          "jitter": options.get("jitter", "0ms")}}
