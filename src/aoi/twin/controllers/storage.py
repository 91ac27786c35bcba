"""Storage helpers for the volume controller: quantities, matching, default classes and provisioned volumes."""

from __future__ import annotations

import re

BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
PROVISIONED_BY = "pv.kubernetes.io/provisioned-by"
DEFAULT_CLASS = "storageclass.kubernetes.io/is-default-class"
NO_PROVISIONER = "kubernetes.io/no-provisioner"
# Provisioners the twin runs: name -> (namespace, label, value) of the provisioner's pod (its event source).
PROVISIONERS = {"rancher.io/local-path": ("local-path-storage", "app", "local-path-provisioner"),
                "openebs.io/local": ("openebs", "openebs.io/component-name", "openebs-localpv-provisioner")}
TERMINAL = ("Succeeded", "Failed")
_UNITS = {"": 1, "m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18,
          "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}


def quantity(text) -> float:
    """Parse a resource quantity such as '10Gi' or '500M' into a number.

    Example:
        >>> quantity("1Ki"), quantity("1G") > quantity("1Gi")
        (1024.0, False)
    """
    m = re.fullmatch(r"\s*([0-9.]+(?:[eE][-+]?[0-9]+)?)\s*([a-zA-Z]*)\s*", str(text or "0"))
    return float(m.group(1)) * _UNITS.get(m.group(2), 1) if m else 0.0


def requested(pvc: dict) -> float:
    """Return the storage a claim requests."""
    return quantity(((pvc["spec"].get("resources") or {}).get("requests") or {}).get("storage"))


def fits(pv: dict, pvc: dict) -> bool:
    """Check size, volume mode and access modes of a volume against a claim."""
    spec, want = pv["spec"], pvc["spec"]
    return (quantity((spec.get("capacity") or {}).get("storage")) >= requested(pvc)
            and spec.get("volumeMode", "Filesystem") == want.get("volumeMode", "Filesystem")
            and set(want.get("accessModes") or []) <= set(spec.get("accessModes") or []))


def names_claim(pv: dict, pvc: dict) -> bool:
    """Tell whether the volume's claimRef points at this claim (a missing uid matches any)."""
    ref = pv["spec"].get("claimRef") or {}
    meta = pvc["metadata"]
    return (ref.get("namespace"), ref.get("name")) == (meta["namespace"], meta["name"]) and \
        ref.get("uid") in (None, "", meta["uid"])


def claim_ref(pvc: dict) -> dict:
    """Return the object reference a bound volume keeps to its claim."""
    meta = pvc["metadata"]
    return {"kind": "PersistentVolumeClaim", "namespace": meta["namespace"], "name": meta["name"], "uid": meta["uid"],
            "apiVersion": "v1", "resourceVersion": meta.get("resourceVersion", "")}


def default_class(twin) -> dict | None:
    """Return the default StorageClass (the newest when several are marked, ties by name)."""
    marked = [c for c in twin.list("storageclasses")
              if (c["metadata"].get("annotations") or {}).get(DEFAULT_CLASS) == "true"]
    newest = max((c["metadata"].get("creationTimestamp", "") for c in marked), default=None)
    return next((c for c in marked if c["metadata"].get("creationTimestamp", "") == newest), None)


def consumer(twin, pvc: dict) -> dict | None:
    """Return a live pod that mounts the claim, if any."""
    ns, name = pvc["metadata"]["namespace"], pvc["metadata"]["name"]
    for pod in twin.list("pods", ns):
        if pod["metadata"].get("deletionTimestamp") or (pod.get("status") or {}).get("phase") in TERMINAL:
            continue
        claims = [(v.get("persistentVolumeClaim") or {}).get("claimName") for v in pod["spec"].get("volumes") or []]
        if name in claims:
            return pod
    return None


def pick_node(twin, pod: dict | None, reason) -> str | None:
    """Pick the node the scheduler would choose for the pod (fewest pods, then name); any untainted node without one."""
    probe = pod or {"spec": {}}
    nodes = [n for n in twin.list("nodes") if reason(probe, n) is None]
    load = {n["metadata"]["name"]: 0 for n in nodes}
    for p in twin.list("pods"):
        if p["spec"].get("nodeName") in load:
            load[p["spec"]["nodeName"]] += 1
    return min(load, key=lambda n: (load[n], n), default=None)


def provisioner_identity(twin, provisioner: str) -> str:
    """Return the event source a provisioner reports: <name>_<its pod>_<an id>, as the sig-storage library does."""
    ns, label, value = PROVISIONERS[provisioner]
    pods = twin.list("pods", ns, lambda p: (p["metadata"].get("labels") or {}).get(label) == value)
    return f"{provisioner}_{pods[0]['metadata']['name']}_{pods[0]['metadata']['uid']}" if pods else provisioner


def provisioned_volume(pvc: dict, cls: dict, node: str | None) -> dict:
    """Return the PersistentVolume a local provisioner creates for a claim on a node."""
    meta, uid = pvc["metadata"], pvc["metadata"]["uid"]
    provisioner = cls["provisioner"]
    annotations, labels = {PROVISIONED_BY: provisioner}, {}
    if provisioner == "openebs.io/local":
        labels["openebs.io/cas-type"] = "local-hostpath"
        source = {"local": {"fsType": "", "path": f"/var/openebs/local/pvc-{uid}"}}
    else:
        annotations["local.path.provisioner/selected-node"] = node or ""
        source = {"hostPath": {"path": f"/var/local-path-provisioner/pvc-{uid}_{meta['namespace']}_{meta['name']}",
                               "type": "DirectoryOrCreate"}}
    spec = {"accessModes": list(pvc["spec"].get("accessModes") or []),
            "capacity": {"storage": ((pvc["spec"].get("resources") or {}).get("requests") or {}).get("storage", "0")},
            "claimRef": claim_ref(pvc), "persistentVolumeReclaimPolicy": cls.get("reclaimPolicy", "Delete"),
            "storageClassName": cls["metadata"]["name"], "volumeMode": pvc["spec"].get("volumeMode", "Filesystem"),
            **source}
    if node:
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "kubernetes.io/hostname", "operator": "In", "values": [node]}]}]}}
    pv_meta = {"name": f"pvc-{uid}", "annotations": annotations, **({"labels": labels} if labels else {})}
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": pv_meta, "spec": spec}
