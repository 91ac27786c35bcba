"""PersistentVolume controller: bind claims to volumes, release and reclaim volumes, provision through classes."""

from __future__ import annotations

from aoi.twin.controllers.base import Controller
from aoi.twin.controllers.scheduler import node_reason
from aoi.twin.controllers.storage import (
    BIND_COMPLETED,
    BOUND_BY_CONTROLLER,
    NO_PROVISIONER,
    PROVISIONERS,
    claim_ref,
    consumer,
    default_class,
    fits,
    names_claim,
    pick_node,
    provisioned_volume,
    provisioner_identity,
    quantity,
)
from aoi.twin.core import operations
from aoi.twin.core.clock import rfc3339
from aoi.twin.core.selectors import selector_matches

COMPONENT = "persistentvolume-controller"
RESYNC_SECONDS = 15.0  # --pvclaimbinder-sync-period: pending claims are looked at (and evented) this often
STORAGE_PROVISIONER = ("volume.beta.kubernetes.io/storage-provisioner", "volume.kubernetes.io/storage-provisioner")
SELECTED_NODE = "volume.kubernetes.io/selected-node"


class PersistentVolumeController(Controller):
    """Keep claims and volumes bound to each other, as kube-controller-manager's persistentvolume-controller."""

    name = "persistentvolume"
    watches = ("persistentvolumes", "persistentvolumeclaims", "storageclasses", "pods")

    def __init__(self):
        self._due: dict = {}  # claim key -> time of its next resync
        self._noted: dict = {}  # (claim uid, reason) -> last time that event was recorded

    def keys_for(self, twin, kind, res, obj):
        meta = obj["metadata"]
        if res.kind == "PersistentVolume":
            ref = obj["spec"].get("claimRef") or {}
            keys = [("", meta["name"])] + ([(ref["namespace"], ref["name"])] if ref.get("namespace") else [])
            free = kind != "DELETED" and not ref and (obj.get("status") or {}).get("phase") == "Available"
            return keys + (self._pending(twin) if free else [])
        if res.kind == "PersistentVolumeClaim":
            keys = [(meta["namespace"], meta["name"])]
            volumes = twin.list("persistentvolumes", None, lambda pv: names_claim(pv, obj)) if kind == "DELETED" else []
            names = {obj["spec"].get("volumeName")} | {v["metadata"]["name"] for v in volumes}
            return keys + [("", n) for n in sorted(n for n in names if n)]
        if res.kind == "StorageClass":
            return self._pending(twin)
        if kind == "DELETED" or obj["spec"].get("nodeName"):
            return []
        return [(meta["namespace"], v["persistentVolumeClaim"]["claimName"])
                for v in obj["spec"].get("volumes") or [] if (v.get("persistentVolumeClaim") or {}).get("claimName")]

    def _pending(self, twin) -> list:
        """Return the keys of all Pending claims."""
        return [(c["metadata"]["namespace"], c["metadata"]["name"]) for c in twin.list("persistentvolumeclaims")
                if (c.get("status") or {}).get("phase", "Pending") == "Pending"]

    def reconcile(self, twin, key):
        if key[0] == "":
            pv = twin.get("persistentvolumes", "", key[1])
            if pv is not None and not pv["metadata"].get("deletionTimestamp"):
                self._sync_volume(twin, pv)
            return
        pvc = twin.get("persistentvolumeclaims", *key)
        if pvc is not None and not pvc["metadata"].get("deletionTimestamp"):
            self._sync_claim(twin, pvc, key)

    # --- volumes ---
    def _sync_volume(self, twin, pv) -> None:
        """Make a free volume Available, a bound one Bound, and release one whose claim is gone."""
        ref = pv["spec"].get("claimRef")
        if not ref or not ref.get("uid"):
            self._phase(twin, "persistentvolumes", pv, "Available")
            return
        pvc = twin.get("persistentvolumeclaims", ref.get("namespace", ""), ref.get("name", ""))
        if pvc is None or pvc["metadata"]["uid"] != ref["uid"]:
            self._phase(twin, "persistentvolumes", pv, "Released")
            if pv["spec"].get("persistentVolumeReclaimPolicy") == "Delete":
                operations.delete(twin, twin.resource("persistentvolumes"), "", pv["metadata"]["name"])
        elif pvc["spec"].get("volumeName") == pv["metadata"]["name"]:
            self._phase(twin, "persistentvolumes", pv, "Bound")
        elif pvc["spec"].get("volumeName") and (pv["metadata"].get("annotations") or {}).get(BOUND_BY_CONTROLLER):
            self._unbind(twin, pv)  # the claim went to another volume: undo our half of the binding

    def _unbind(self, twin, pv) -> None:
        """Free a volume the controller had reserved for a claim that got bound elsewhere."""
        pv["spec"].pop("claimRef", None)
        pv["metadata"]["annotations"].pop(BOUND_BY_CONTROLLER, None)
        pv["status"] = {"phase": "Available", "lastPhaseTransitionTime": rfc3339(twin.clock.now())}
        twin.update("persistentvolumes", pv)

    def _phase(self, twin, resource, obj, phase: str) -> None:
        """Set a volume's phase and its transition time."""
        if (obj.get("status") or {}).get("phase") != phase:
            obj["status"] = {"phase": phase, "lastPhaseTransitionTime": rfc3339(twin.clock.now())}
            twin.update(resource, obj)

    # --- claims ---
    def _sync_claim(self, twin, pvc, key) -> None:
        """Check a bound claim, or find, provision or wait for a volume for a pending one."""
        annotations = pvc["metadata"].get("annotations") or {}
        if pvc["spec"].get("volumeName") and annotations.get(BIND_COMPLETED):
            self._check_bound(twin, pvc)
            return
        self._assign_default_class(twin, pvc)
        pv = self._find(twin, pvc)
        if pv is not None:
            self._bind(twin, pvc, pv)
            return
        self._unbound(twin, pvc)
        now = twin.clock.now()
        if self._due.get(key, -1.0) <= now:  # one pending resync per claim
            self._due[key] = now + RESYNC_SECONDS
            twin.schedule(RESYNC_SECONDS, self.name, key)

    def _check_bound(self, twin, pvc) -> None:
        """Re-bind a claim whose volume lost its claimRef; mark it Lost when the volume is gone or taken."""
        pv = twin.get("persistentvolumes", "", pvc["spec"]["volumeName"])
        if pv is not None and not pv["spec"].get("claimRef"):
            self._bind(twin, pvc, pv)
        elif (pv is None or not names_claim(pv, pvc)) and (pvc.get("status") or {}).get("phase") != "Lost":
            pvc["status"] = {"phase": "Lost"}
            twin.update("persistentvolumeclaims", pvc)
            message = ("Bound claim has lost its PersistentVolume. Data on the volume is lost!" if pv is None
                       else "Two claims are bound to the same volume, this one is bound incorrectly")
            twin.record(pvc, "Warning", "ClaimLost" if pv is None else "ClaimMisbound", message, COMPONENT)

    def _assign_default_class(self, twin, pvc) -> None:
        """Give a claim without storageClassName the default class (retroactive default assignment)."""
        if pvc["spec"].get("storageClassName") is None:
            cls = default_class(twin)
            if cls is not None:
                pvc["spec"]["storageClassName"] = cls["metadata"]["name"]
                twin.update("persistentvolumeclaims", pvc)

    def _find(self, twin, pvc) -> dict | None:
        """Return the volume to bind: one pre-bound to the claim, else the smallest free match."""
        name = pvc["spec"].get("volumeName")
        if name:
            pv = twin.get("persistentvolumes", "", name)
            free = pv is not None and (not pv["spec"].get("claimRef") or names_claim(pv, pvc))
            return pv if free and fits(pv, pvc) else None
        volumes = [v for v in twin.list("persistentvolumes")
                   if not v["metadata"].get("deletionTimestamp") and fits(v, pvc)]
        pre = [v for v in volumes if v["spec"].get("claimRef") and names_claim(v, pvc)]
        if pre:
            return pre[0]
        cls_name = pvc["spec"].get("storageClassName") or ""
        cls = twin.get("storageclasses", "", cls_name) if cls_name else None
        if cls and cls.get("volumeBindingMode") == "WaitForFirstConsumer" and consumer(twin, pvc) is None:
            return None  # delayed binding: only once a pod uses the claim
        free = [v for v in volumes if self._free_for(v, pvc, cls_name)]
        return min(free, key=lambda v: (quantity(v["spec"]["capacity"].get("storage")), v["metadata"]["name"]),
                   default=None)

    def _free_for(self, pv, pvc, cls_name: str) -> bool:
        """Tell whether an unclaimed Available volume suits the claim's class and selector."""
        selector = pvc["spec"].get("selector")
        return (not pv["spec"].get("claimRef") and (pv.get("status") or {}).get("phase") == "Available"
                and (pv["spec"].get("storageClassName") or "") == cls_name
                and (not selector or selector_matches(selector, pv["metadata"].get("labels"))))

    def _bind(self, twin, pvc, pv) -> None:
        """Point the volume at the claim and the claim at the volume, both Bound."""
        if not names_claim(pv, pvc):
            pv["metadata"].setdefault("annotations", {})[BOUND_BY_CONTROLLER] = "yes"
        pv["spec"]["claimRef"] = claim_ref(pvc)
        pv["status"] = {"phase": "Bound", "lastPhaseTransitionTime": rfc3339(twin.clock.now())}
        twin.update("persistentvolumes", pv)
        annotations = pvc["metadata"].setdefault("annotations", {})
        if not pvc["spec"].get("volumeName"):
            pvc["spec"]["volumeName"] = pv["metadata"]["name"]
            annotations[BOUND_BY_CONTROLLER] = "yes"
        annotations[BIND_COMPLETED] = "yes"
        pvc["status"] = {"phase": "Bound", "accessModes": list(pv["spec"].get("accessModes") or []),
                         "capacity": dict(pv["spec"].get("capacity") or {})}
        twin.update("persistentvolumeclaims", pvc)

    # --- no volume yet ---
    def _unbound(self, twin, pvc) -> None:
        """Provision a volume for the claim, or record why it keeps waiting."""
        cls_name = pvc["spec"].get("storageClassName") or ""
        cls = twin.get("storageclasses", "", cls_name) if cls_name else None
        if not cls_name:
            self._note(twin, pvc, "Normal", "FailedBinding",
                       "no persistent volumes available for this claim and no storage class is set")
        elif cls is None:
            self._note(twin, pvc, "Warning", "ProvisioningFailed",
                       f'storageclass.storage.k8s.io "{cls_name}" not found')
        elif cls.get("volumeBindingMode") == "WaitForFirstConsumer" and (
                consumer(twin, pvc) is None or cls.get("provisioner") == NO_PROVISIONER):
            self._note(twin, pvc, "Normal", "WaitForFirstConsumer",
                       "waiting for first consumer to be created before binding")
        elif cls.get("provisioner") == NO_PROVISIONER:
            self._note(twin, pvc, "Warning", "ProvisioningFailed", f"no volume plugin matched name: {NO_PROVISIONER}")
        else:
            self._external(twin, pvc, cls)

    def _external(self, twin, pvc, cls) -> None:
        """Hand the claim to its external provisioner; the twin runs the provisioners it knows at once."""
        provisioner = cls.get("provisioner", "")
        annotations = pvc["metadata"].setdefault("annotations", {})
        if any(annotations.get(a) != provisioner for a in STORAGE_PROVISIONER):
            annotations.update(dict.fromkeys(STORAGE_PROVISIONER, provisioner))
            twin.update("persistentvolumeclaims", pvc)
        self._note(twin, pvc, "Normal", "ExternalProvisioning", "Waiting for a volume to be created either by the "
                   f"external provisioner '{provisioner}' or manually by the system administrator. If volume creation "
                   "is delayed, please verify that the provisioner is running and correctly registered.")
        if provisioner in PROVISIONERS:
            self._provision(twin, pvc, cls)

    def _provision(self, twin, pvc, cls) -> None:
        """Create the claim's volume pvc-<uid> as the provisioner would, then bind it."""
        node = ((pvc["metadata"].get("annotations") or {}).get(SELECTED_NODE)
                or pick_node(twin, consumer(twin, pvc), node_reason))
        if cls.get("volumeBindingMode") == "WaitForFirstConsumer" and node:
            pvc["metadata"]["annotations"][SELECTED_NODE] = node
        source = provisioner_identity(twin, cls["provisioner"])
        ref = f"{pvc['metadata']['namespace']}/{pvc['metadata']['name']}"
        twin.record(pvc, "Normal", "Provisioning", f'External provisioner is provisioning volume for claim "{ref}"',
                    source)
        pv = operations.create(twin, twin.resource("persistentvolumes"), "", provisioned_volume(pvc, cls, node))
        twin.record(pvc, "Normal", "ProvisioningSucceeded", f"Successfully provisioned volume {pv['metadata']['name']}",
                    source)
        self._bind(twin, pvc, pv)

    def _note(self, twin, pvc, type_: str, reason: str, message: str) -> None:
        """Record a claim event at most once per resync period, as the periodic sync does."""
        key, now = (pvc["metadata"]["uid"], reason), twin.clock.now()
        if now - self._noted.get(key, -RESYNC_SECONDS) >= RESYNC_SECONDS - 1e-6:
            self._noted[key] = now
            twin.record(pvc, type_, reason, message, COMPONENT)
