"""Faults in Kubernetes objects: Service targetPort, replicas, nodeSelector, container image and command, no-op."""

from __future__ import annotations

from aoi.faults.base import Injector, container_of, recreate_deployment
from aoi.kube import Kube

BAD_IMAGES = {"geo": "yinfangchen/geo:app3"}  # the buggy images AIOpsLab ships, by deployment
HEALTHY_IMAGE = "yinfangchen/hotelreservation:latest"  # what AIOpsLab's recovery sets


def _deployment_names(kube: Kube, namespace: str) -> list[str]:
    """Return the Deployment names of a namespace, sorted."""
    return sorted(d["metadata"]["name"] for d in kube.list("deployments", namespace))


class TargetPort(Injector):
    """Point a Service's targetPort at a port nothing listens on (AIOpsLab k8s_target_port-misconfig).

    Nothing is written into the cluster to remember the original (agents would read it); inject returns the
    originals and recover takes them (default: AIOpsLab's 9090).
    """

    name = "target_port"
    summary = "Service spec.ports[*].targetPort -> 9999; recover sets them back (AIOpsLab: 9090)"

    def targets(self, kube, namespace):
        return sorted(s["metadata"]["name"] for s in kube.list("services", namespace)
                      if s["spec"].get("selector") and s["spec"].get("ports"))

    def inject(self, kube, namespace, target, port: int = 9999, **options) -> dict:
        """Set every targetPort of the Service to `port`; return the original targetPorts."""
        svc = kube.get("services", namespace, self.check_target(kube, namespace, target))
        ports = svc["spec"]["ports"]
        kube.patch("services", namespace, target, {"spec": {"ports": [{**p, "targetPort": port} for p in ports]}},
                   how="merge")
        return {"original": [p.get("targetPort", p["port"]) for p in ports]}

    def recover(self, kube, namespace, target, original: int | list | None = 9090, **options):
        """Set the targetPorts back to `original` (one port for all, or a list per port)."""
        svc = kube.get("services", namespace, self.check_target(kube, namespace, target))
        ports = svc["spec"]["ports"]
        values = original if isinstance(original, list) else [original] * len(ports)
        body = {"spec": {"ports": [{**p, "targetPort": t} for p, t in zip(ports, values)]}}
        kube.patch("services", namespace, target, body, how="merge")


class ScaleZero(Injector):
    """Scale a Deployment to zero replicas (AIOpsLab scale_pod_zero)."""

    name = "scale_zero"
    summary = "Deployment spec.replicas -> 0; recover sets the count back (AIOpsLab: 1)"

    def targets(self, kube, namespace):
        return _deployment_names(kube, namespace)

    def inject(self, kube, namespace, target, **options) -> dict:
        """Set replicas to 0; return the original count."""
        dep = kube.get("deployments", namespace, self.check_target(kube, namespace, target))
        kube.patch("deployments", namespace, target, {"spec": {"replicas": 0}}, how="merge")
        return {"replicas": dep["spec"].get("replicas", 1)}

    def recover(self, kube, namespace, target, replicas: int = 1, **options):
        """Set replicas back to `replicas`."""
        self.check_target(kube, namespace, target)
        kube.patch("deployments", namespace, target, {"spec": {"replicas": replicas}}, how="merge")


class MissingNode(Injector):
    """Pin a Deployment to a missing node by delete and re-create (AIOpsLab assign_to_non_existent_node)."""

    name = "missing_node"
    summary = "pod template nodeSelector {kubernetes.io/hostname: extra-node}, deployment deleted and re-created"

    def targets(self, kube, namespace):
        return _deployment_names(kube, namespace)

    def inject(self, kube, namespace, target, node: str = "extra-node", **options) -> dict:
        """Re-create the Deployment with a nodeSelector for `node`; return the nodeSelector it had."""
        dep = kube.get("deployments", namespace, self.check_target(kube, namespace, target))
        pod_spec = dep["spec"]["template"]["spec"]
        original = pod_spec.get("nodeSelector") or {}
        if original.get("kubernetes.io/hostname") != node:
            pod_spec["nodeSelector"] = {"kubernetes.io/hostname": node}
            recreate_deployment(kube, namespace, dep)
        return {"original": original}

    def recover(self, kube, namespace, target, original: dict | None = None, **options):
        """Re-create the Deployment without the nodeSelector (or with `original`)."""
        dep = kube.get("deployments", namespace, self.check_target(kube, namespace, target))
        pod_spec = dep["spec"]["template"]["spec"]
        pod_spec.pop("nodeSelector", None)
        if original:
            pod_spec["nodeSelector"] = original
        recreate_deployment(kube, namespace, dep)


class ContainerField(Injector):
    """Swap one field of a Deployment's container."""

    field = "image"

    def targets(self, kube, namespace):
        return _deployment_names(kube, namespace)

    def faulty(self, target: str, current):
        """Return the default faulty value for a target (subclasses)."""
        raise NotImplementedError

    def healthy(self, target: str):
        """Return the value recover sets when none is given (subclasses)."""
        raise NotImplementedError

    def apply(self, kube, namespace, dep: dict) -> None:
        """Write the changed Deployment (subclasses choose update or re-create)."""
        kube.replace("deployments", namespace, dep["metadata"]["name"], dep)

    def inject(self, kube, namespace, target, container: str | None = None, value=None, **options) -> dict:
        """Set the container's field to `value` (default: the mechanism's faulty value); return the original."""
        dep = kube.get("deployments", namespace, self.check_target(kube, namespace, target))
        c = container_of(dep, container)
        original = c.get(self.field)
        c[self.field] = value if value is not None else self.faulty(target, original)
        if c[self.field] != original:
            self.apply(kube, namespace, dep)
        return {"container": c["name"], "original": original}

    def recover(self, kube, namespace, target, container: str | None = None, value=None, **options):
        """Set the container's field back to `value` (default: the healthy value AIOpsLab restores)."""
        dep = kube.get("deployments", namespace, self.check_target(kube, namespace, target))
        c = container_of(dep, container)
        c[self.field] = value if value is not None else self.healthy(target)
        self.apply(kube, namespace, dep)


class Image(ContainerField):
    """Run a buggy image in a Deployment (AIOpsLab misconfig_app: geo -> yinfangchen/geo:app3)."""

    name = "image"
    summary = "container image swap by replacing the deployment, e.g. geo -> yinfangchen/geo:app3"

    def faulty(self, target, current):
        if target not in BAD_IMAGES:
            raise ValueError(f"image: no known buggy image for {target!r} (known: {', '.join(BAD_IMAGES)}); "
                             "pass value='<image>'")
        return BAD_IMAGES[target]

    def healthy(self, target):
        return HEALTHY_IMAGE


class Command(ContainerField):
    """Start the wrong binary in a Deployment by delete and re-create (AIOpsLab wrong_bin_usage: profile -> geo)."""

    name = "command"
    summary = "container command swap with delete + re-create, e.g. profile ['profile'] -> ['geo']"
    field = "command"

    def faulty(self, target, current):
        return ["profile"] if target == "geo" else ["geo"]

    def healthy(self, target):
        return [target]

    def apply(self, kube, namespace, dep):
        recreate_deployment(kube, namespace, dep)


class Noop(Injector):
    """Inject nothing (AIOpsLab noop_detection_*): the healthy baseline."""

    name = "noop"
    summary = "nothing; any target is accepted"

    def targets(self, kube, namespace):
        return []

    def inject(self, kube, namespace, target=None, **options):
        return None

    def recover(self, kube, namespace, target=None, **options):
        return None
