"""Faults in Kubernetes objects: Service targetPort, replicas, nodeSelector, container image and command, no-op."""

from __future__ import annotations

from aoi.faults.base import (ANNOTATION_PREFIX, FaultError, Injector, container_of, memo_patch, recreate_deployment,
                             remembered)
from aoi.faults.client import Kube

BAD_IMAGES = {"geo": "yinfangchen/geo:app3"}  # the buggy images AIOpsLab ships, by deployment


def _deployment_names(kube: Kube, namespace: str) -> list[str]:
    """Return the Deployment names of a namespace, sorted."""
    return sorted(d["metadata"]["name"] for d in kube.deployments(namespace))


class TargetPort(Injector):
    """Point a Service's targetPort at a port nothing listens on (AIOpsLab k8s_target_port-misconfig)."""

    name = "target_port"
    summary = "Service spec.ports[*].targetPort -> 9999; the original kept in annotation aoi.dev/original-target-port"
    key = "original-target-port"

    def targets(self, kube, namespace):
        return sorted(s["metadata"]["name"] for s in kube.services(namespace)
                      if s["spec"].get("selector") and s["spec"].get("ports"))

    def inject(self, kube, namespace, target, port: int = 9999, **options):
        """Set every targetPort of the Service to `port`, remembering the originals once."""
        svc = kube.service(namespace, self.check_target(kube, namespace, target))
        ports = svc["spec"]["ports"]
        original = remembered(svc, self.key) or [p.get("targetPort", p["port"]) for p in ports]
        body = memo_patch(self.key, original)
        body["spec"] = {"ports": [{**p, "targetPort": port} for p in ports]}
        kube.patch(kube.core.patch_namespaced_service, target, namespace, body=body, kind="merge")

    def recover(self, kube, namespace, target, original: int | None = None, **options):
        """Restore the remembered targetPorts (or set all to `original`) and drop the annotation."""
        svc = kube.service(namespace, self.check_target(kube, namespace, target))
        ports = svc["spec"]["ports"]
        saved = remembered(svc, self.key)
        if original is not None:
            saved = [original] * len(ports)
        if saved is None:
            raise FaultError(f"service {namespace}/{target} has no annotation aoi.dev/{self.key}; pass original=<port>")
        body = memo_patch(self.key, None)
        body["spec"] = {"ports": [{**p, "targetPort": t} for p, t in zip(ports, saved)]}
        kube.patch(kube.core.patch_namespaced_service, target, namespace, body=body, kind="merge")


class ScaleZero(Injector):
    """Scale a Deployment to zero replicas (AIOpsLab scale_pod_zero)."""

    name = "scale_zero"
    summary = "Deployment spec.replicas -> 0; recover restores the remembered count (default 1)"
    key = "original-replicas"

    def targets(self, kube, namespace):
        return _deployment_names(kube, namespace)

    def inject(self, kube, namespace, target, **options):
        """Set replicas to 0, remembering the original count once."""
        dep = kube.deployment(namespace, self.check_target(kube, namespace, target))
        original = remembered(dep, self.key)
        body = memo_patch(self.key, dep["spec"].get("replicas", 1) if original is None else original)
        body["spec"] = {"replicas": 0}
        kube.patch(kube.apps.patch_namespaced_deployment, target, namespace, body=body, kind="merge")

    def recover(self, kube, namespace, target, replicas: int | None = None, **options):
        """Set replicas back to `replicas`, else the remembered count, else 1."""
        dep = kube.deployment(namespace, self.check_target(kube, namespace, target))
        count = replicas if replicas is not None else (remembered(dep, self.key) or 1)
        body = memo_patch(self.key, None)
        body["spec"] = {"replicas": count}
        kube.patch(kube.apps.patch_namespaced_deployment, target, namespace, body=body, kind="merge")


class MissingNode(Injector):
    """Pin a Deployment to a missing node by delete and re-create (AIOpsLab assign_to_non_existent_node)."""

    name = "missing_node"
    summary = "pod template nodeSelector {kubernetes.io/hostname: extra-node}, deployment deleted and re-created"
    key = "original-node-selector"

    def targets(self, kube, namespace):
        return _deployment_names(kube, namespace)

    def inject(self, kube, namespace, target, node: str = "extra-node", **options):
        """Re-create the Deployment with a nodeSelector for `node`."""
        dep = kube.deployment(namespace, self.check_target(kube, namespace, target))
        pod_spec = dep["spec"]["template"]["spec"]
        if (pod_spec.get("nodeSelector") or {}).get("kubernetes.io/hostname") == node:
            return
        annotations = dep["metadata"].setdefault("annotations", {})
        annotations.update(memo_patch(self.key, pod_spec.get("nodeSelector") or {})["metadata"]["annotations"])
        pod_spec["nodeSelector"] = {"kubernetes.io/hostname": node}
        recreate_deployment(kube, namespace, dep)

    def recover(self, kube, namespace, target, **options):
        """Re-create the Deployment without the nodeSelector (or with the one it had before the fault)."""
        dep = kube.deployment(namespace, self.check_target(kube, namespace, target))
        saved = remembered(dep, self.key)
        pod_spec = dep["spec"]["template"]["spec"]
        if saved is None and not pod_spec.get("nodeSelector"):
            return
        (dep["metadata"].get("annotations") or {}).pop(ANNOTATION_PREFIX + self.key, None)
        pod_spec.pop("nodeSelector", None)
        if saved:
            pod_spec["nodeSelector"] = saved
        recreate_deployment(kube, namespace, dep)


class ContainerField(Injector):
    """Swap one field of a Deployment's container, remembering the original value."""

    field = "image"
    key = "original-image"

    def targets(self, kube, namespace):
        return _deployment_names(kube, namespace)

    def faulty(self, target: str, current):
        """Return the default faulty value for a target (subclasses)."""
        raise NotImplementedError

    def apply(self, kube, namespace, dep: dict) -> None:
        """Write the changed Deployment (subclasses choose update or re-create)."""
        kube.call(kube.apps.replace_namespaced_deployment, dep["metadata"]["name"], namespace, dep)

    def inject(self, kube, namespace, target, container: str | None = None, value=None, **options):
        """Set the container's field to `value` (default: the mechanism's faulty value)."""
        dep = kube.deployment(namespace, self.check_target(kube, namespace, target))
        c = container_of(dep, container)
        value = value if value is not None else self.faulty(target, c.get(self.field))
        saved = remembered(dep, self.key) or {}
        if c["name"] in saved and c.get(self.field) == value:
            return
        saved.setdefault(c["name"], c.get(self.field))
        dep["metadata"].setdefault("annotations", {}).update(memo_patch(self.key, saved)["metadata"]["annotations"])
        c[self.field] = value
        self.apply(kube, namespace, dep)

    def recover(self, kube, namespace, target, container: str | None = None, value=None, **options):
        """Set the container's field back to `value`, else the remembered original."""
        dep = kube.deployment(namespace, self.check_target(kube, namespace, target))
        c = container_of(dep, container)
        saved = remembered(dep, self.key) or {}
        if value is None and c["name"] not in saved:
            raise FaultError(f"deployment {namespace}/{target} has no remembered {self.field} for container "
                             f"{c['name']} (annotation aoi.dev/{self.key}); pass value=...")
        value = value if value is not None else saved[c["name"]]
        (dep["metadata"].get("annotations") or {}).pop(ANNOTATION_PREFIX + self.key, None)
        c.pop(self.field, None)
        if value is not None:
            c[self.field] = value
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


class Command(ContainerField):
    """Start the wrong binary in a Deployment by delete and re-create (AIOpsLab wrong_bin_usage: profile -> geo)."""

    name = "command"
    summary = "container command swap with delete + re-create, e.g. profile ['profile'] -> ['geo']"
    field = "command"
    key = "original-command"

    def faulty(self, target, current):
        return ["profile"] if target == "geo" else ["geo"]

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
