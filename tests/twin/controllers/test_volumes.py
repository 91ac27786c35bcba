"""Tests for the PersistentVolume controller: binding, release, reclaim, events and provisioning."""

from __future__ import annotations

import copy

import pytest

from aoi.twin.bootstrap import NodeLeases, bootstrap
from aoi.twin.controllers.lifecycle import GarbageCollector, NamespaceController
from aoi.twin.controllers.scheduler import Scheduler
from aoi.twin.controllers.volumes import PersistentVolumeController
from aoi.twin.core import operations
from aoi.twin.kubelet.controller import Kubelet
from aoi.twin.kubelet.runtime import PlainRuntime
from aoi.twin.twin import Twin

NS = "hotel"
NO_PROVISIONER_MESSAGE = "no volume plugin matched name: kubernetes.io/no-provisioner"


@pytest.fixture
def twin() -> Twin:
    twin = Twin(0, runtime=PlainRuntime())
    for controller in (NamespaceController(), PersistentVolumeController(), Scheduler(), Kubelet(),
                       GarbageCollector(), NodeLeases()):
        twin.add_controller(controller)
    with twin.lock:  # the store notifies watchers under the twin's lock
        bootstrap(twin)
        create(twin, "namespaces", {"metadata": {"name": NS}}, "")
        yield twin


def create(twin, resource: str, obj: dict, ns: str = NS) -> dict:
    """Create an object through the API semantics."""
    res = twin.resource(resource)
    return operations.create(twin, res, ns, {"apiVersion": res.api_version, "kind": res.kind, **copy.deepcopy(obj)})


def delete(twin, resource: str, name: str, ns: str = NS) -> None:
    operations.delete(twin, twin.resource(resource), ns, name)


def storage_class(name: str, provisioner: str = "kubernetes.io/no-provisioner", mode: str = "Immediate",
                  default: bool = False, **extra) -> dict:
    meta = {"name": name}
    if default:
        meta["annotations"] = {"storageclass.kubernetes.io/is-default-class": "true"}
    return {"metadata": meta, "provisioner": provisioner, "volumeBindingMode": mode, **extra}


def volume(name: str, size: str = "1Gi", cls: str = "geo-storage", modes=("ReadWriteOnce",), policy="Retain",
           **spec) -> dict:
    return {"metadata": {"name": name}, "spec": {"accessModes": list(modes), "capacity": {"storage": size},
                                                 "persistentVolumeReclaimPolicy": policy, "storageClassName": cls,
                                                 "hostPath": {"path": f"/data/{name}"}, **spec}}


def claim(name: str = "geo-pvc", size: str = "1Gi", cls: str | None = "geo-storage", **spec) -> dict:
    body = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": size}}, **spec}
    if cls is not None:
        body["storageClassName"] = cls
    return {"metadata": {"name": name}, "spec": body}


def pv(twin, name: str) -> dict:
    return twin.get("persistentvolumes", "", name)


def pvc(twin, name: str = "geo-pvc", ns: str = NS) -> dict:
    return twin.get("persistentvolumeclaims", ns, name)


def claim_events(twin, name: str = "geo-pvc") -> list[tuple[str, str, str, int]]:
    return [(e["type"], e["reason"], e["message"], e["count"]) for e in twin.list("events", NS)
            if e["involvedObject"]["kind"] == "PersistentVolumeClaim" and e["involvedObject"]["name"] == name]


# --- static binding -------------------------------------------------------------------------------------------

def test_a_volume_without_claim_ref_becomes_available(twin):
    create(twin, "persistentvolumes", volume("geo-pv"), "")
    assert pv(twin, "geo-pv")["status"]["phase"] == "Available"
    assert "lastPhaseTransitionTime" in pv(twin, "geo-pv")["status"]


def test_a_claim_binds_the_smallest_matching_volume(twin):
    for vol in (volume("big", "5Gi"), volume("small", "2Gi"), volume("tiny", "500Mi"),
                volume("shared", "1Gi", modes=("ReadWriteMany",)), volume("other", "1Gi", cls="profile-storage")):
        create(twin, "persistentvolumes", vol, "")
    create(twin, "persistentvolumeclaims", claim())
    bound = pvc(twin)
    assert bound["spec"]["volumeName"] == "small"
    assert bound["status"] == {"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "2Gi"}}
    assert bound["metadata"]["annotations"] == {"pv.kubernetes.io/bind-completed": "yes",
                                                "pv.kubernetes.io/bound-by-controller": "yes"}
    volume_ = pv(twin, "small")
    assert volume_["status"]["phase"] == "Bound"
    assert volume_["metadata"]["annotations"] == {"pv.kubernetes.io/bound-by-controller": "yes"}
    ref = volume_["spec"]["claimRef"]
    assert {k: ref[k] for k in ("kind", "namespace", "name", "uid", "apiVersion")} == {
        "kind": "PersistentVolumeClaim", "namespace": NS, "name": "geo-pvc", "uid": bound["metadata"]["uid"],
        "apiVersion": "v1"}
    assert ref["resourceVersion"]
    assert [pv(twin, n)["status"]["phase"] for n in ("big", "tiny", "shared", "other")] == ["Available"] * 4


def test_a_volume_pre_bound_by_claim_ref_takes_its_claim(twin):
    create(twin, "persistentvolumes", volume("small", "1Gi"), "")
    create(twin, "persistentvolumes", volume("reserved", "3Gi", claimRef={"namespace": NS, "name": "geo-pvc"}), "")
    create(twin, "persistentvolumeclaims", claim())
    assert pvc(twin)["spec"]["volumeName"] == "reserved"
    assert pv(twin, "reserved")["spec"]["claimRef"]["uid"] == pvc(twin)["metadata"]["uid"]
    assert "annotations" not in pv(twin, "reserved")["metadata"]  # the user set the claimRef, not the controller
    assert pv(twin, "small")["status"]["phase"] == "Available"


def test_a_claim_naming_its_volume_binds_it(twin):
    create(twin, "persistentvolumes", volume("chosen", "4Gi"), "")
    create(twin, "persistentvolumeclaims", claim(volumeName="chosen"))
    assert pvc(twin)["status"]["phase"] == "Bound"
    assert pvc(twin)["metadata"]["annotations"] == {"pv.kubernetes.io/bind-completed": "yes"}
    assert pv(twin, "chosen")["metadata"]["annotations"] == {"pv.kubernetes.io/bound-by-controller": "yes"}


def test_a_claim_binds_a_volume_created_later(twin):
    create(twin, "storageclasses", storage_class("geo-storage"), "")
    create(twin, "persistentvolumeclaims", claim())
    assert pvc(twin)["status"]["phase"] == "Pending"
    create(twin, "persistentvolumes", volume("geo-pv"), "")
    assert pvc(twin)["status"]["phase"] == "Bound" and pv(twin, "geo-pv")["status"]["phase"] == "Bound"


# --- release and reclaim ------------------------------------------------------------------------------------

def test_a_retained_volume_is_released_and_keeps_its_stale_claim_ref(twin):
    create(twin, "storageclasses", storage_class("geo-storage"), "")
    create(twin, "persistentvolumes", volume("geo-pv"), "")
    old_uid = create(twin, "persistentvolumeclaims", claim())["metadata"]["uid"]
    delete(twin, "persistentvolumeclaims", "geo-pvc")
    assert pv(twin, "geo-pv")["status"]["phase"] == "Released"
    create(twin, "persistentvolumeclaims", claim())
    twin.advance(40)
    assert pvc(twin)["status"] == {"phase": "Pending"}
    assert pv(twin, "geo-pv")["spec"]["claimRef"]["uid"] == old_uid
    assert claim_events(twin) == [("Warning", "ProvisioningFailed", NO_PROVISIONER_MESSAGE, 3)]  # every 15 s


def test_clearing_claim_ref_repairs_a_namespace_redeployed_without_its_volume(twin):
    """AIOpsLab's redeploy_without_PV: delete and re-create the namespace; the Retain PV stays Released."""
    create(twin, "storageclasses", storage_class("geo-storage"), "")
    create(twin, "persistentvolumes", volume("geo-pv"), "")
    create(twin, "persistentvolumeclaims", claim())
    delete(twin, "namespaces", NS, "")
    twin.advance(5)
    assert twin.get("namespaces", "", NS) is None and pv(twin, "geo-pv")["status"]["phase"] == "Released"
    create(twin, "namespaces", {"metadata": {"name": NS}}, "")
    create(twin, "persistentvolumeclaims", claim())
    twin.advance(20)
    assert pvc(twin)["status"]["phase"] == "Pending"
    operations.patch(twin, twin.resource("persistentvolumes"), "", "geo-pv", b'{"spec":{"claimRef":null}}',
                     "application/strategic-merge-patch+json")
    assert pvc(twin)["status"]["phase"] == "Bound" and pv(twin, "geo-pv")["status"]["phase"] == "Bound"
    assert pv(twin, "geo-pv")["spec"]["claimRef"]["uid"] == pvc(twin)["metadata"]["uid"]


def test_a_delete_policy_volume_goes_with_its_claim(twin):
    create(twin, "persistentvolumes", volume("scratch", policy="Delete"), "")
    create(twin, "persistentvolumeclaims", claim())
    delete(twin, "persistentvolumeclaims", "geo-pvc")
    assert pv(twin, "scratch") is None


def test_a_bound_claim_whose_volume_is_deleted_is_lost(twin):
    create(twin, "persistentvolumes", volume("geo-pv"), "")
    create(twin, "persistentvolumeclaims", claim())
    delete(twin, "persistentvolumes", "geo-pv", "")
    assert pvc(twin)["status"] == {"phase": "Lost"}
    assert claim_events(twin) == [("Warning", "ClaimLost",
                                   "Bound claim has lost its PersistentVolume. Data on the volume is lost!", 1)]


# --- claims that wait -----------------------------------------------------------------------------------------

def test_waiting_claims_say_why(twin):
    create(twin, "storageclasses", storage_class("late", provisioner="example.com/nfs"), "")
    create(twin, "persistentvolumeclaims", claim("plain", cls=""))
    create(twin, "persistentvolumeclaims", claim("ghost", cls="missing"))
    create(twin, "persistentvolumeclaims", claim("external", cls="late"))
    assert claim_events(twin, "plain") == [
        ("Normal", "FailedBinding", "no persistent volumes available for this claim and no storage class is set", 1)]
    assert claim_events(twin, "ghost") == [
        ("Warning", "ProvisioningFailed", 'storageclass.storage.k8s.io "missing" not found', 1)]
    assert claim_events(twin, "external")[0][:2] == ("Normal", "ExternalProvisioning")
    assert "external provisioner 'example.com/nfs'" in claim_events(twin, "external")[0][2]
    assert {pvc(twin, n)["status"]["phase"] for n in ("plain", "ghost", "external")} == {"Pending"}


def test_a_claim_without_class_gets_the_default_class(twin):
    create(twin, "storageclasses", storage_class("standard", "rancher.io/local-path", default=True), "")
    create(twin, "persistentvolumeclaims", claim("data", cls=None))
    assert pvc(twin, "data")["spec"]["storageClassName"] == "standard"
    assert pvc(twin, "data")["status"]["phase"] == "Bound"


# --- dynamic provisioning -------------------------------------------------------------------------------------

def test_an_immediate_class_provisions_a_volume_for_the_claim(twin):
    create(twin, "storageclasses", storage_class("fast", "openebs.io/local", reclaimPolicy="Retain"), "")
    uid = create(twin, "persistentvolumeclaims", claim("data", "3Gi", cls="fast"))["metadata"]["uid"]
    made = pv(twin, f"pvc-{uid}")
    assert made["spec"]["persistentVolumeReclaimPolicy"] == "Retain"
    assert made["spec"]["capacity"] == {"storage": "3Gi"} and made["spec"]["storageClassName"] == "fast"
    assert made["metadata"]["annotations"]["pv.kubernetes.io/provisioned-by"] == "openebs.io/local"
    assert made["status"]["phase"] == "Bound" and pvc(twin, "data")["spec"]["volumeName"] == f"pvc-{uid}"
    annotations = pvc(twin, "data")["metadata"]["annotations"]
    assert annotations["volume.kubernetes.io/storage-provisioner"] == "openebs.io/local"
    reasons = [e[1] for e in claim_events(twin, "data")]
    assert reasons == ["ExternalProvisioning", "Provisioning", "ProvisioningSucceeded"]
    delete(twin, "persistentvolumeclaims", "data")
    assert pv(twin, f"pvc-{uid}")["status"]["phase"] == "Released"  # Retain from the class


def test_a_wait_for_first_consumer_claim_is_provisioned_for_its_pod(twin):
    create(twin, "storageclasses", storage_class("standard", "rancher.io/local-path", "WaitForFirstConsumer"), "")
    create(twin, "persistentvolumeclaims", claim("data", cls="standard"))
    twin.advance(5)
    assert pvc(twin, "data")["status"]["phase"] == "Pending"
    assert claim_events(twin, "data") == [
        ("Normal", "WaitForFirstConsumer", "waiting for first consumer to be created before binding", 1)]
    create(twin, "pods", {"metadata": {"name": "db"}, "spec": {
        "containers": [{"name": "db", "image": "mongo:4.4.6"}],
        "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]}})
    twin.advance(10)
    bound = pvc(twin, "data")
    assert bound["status"]["phase"] == "Bound"
    node = bound["metadata"]["annotations"]["volume.kubernetes.io/selected-node"]
    made = pv(twin, bound["spec"]["volumeName"])
    assert made["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"][0]["values"] == [node]
    assert made["spec"]["persistentVolumeReclaimPolicy"] == "Delete"
    pod = twin.get("pods", NS, "db")
    assert pod["spec"]["nodeName"] == node and pod["status"]["phase"] == "Running"


def test_a_pod_waiting_on_its_claim_is_scheduled_once_the_claim_binds(twin):
    create(twin, "storageclasses", storage_class("geo-storage"), "")
    create(twin, "persistentvolumeclaims", claim())
    create(twin, "pods", {"metadata": {"name": "geo"}, "spec": {
        "containers": [{"name": "geo", "image": "mongo:4.4.6"}],
        "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "geo-pvc"}}]}})
    twin.advance(5)
    assert not twin.get("pods", NS, "geo")["spec"].get("nodeName")
    create(twin, "persistentvolumes", volume("geo-pv"), "")
    twin.advance(5)
    assert twin.get("pods", NS, "geo")["status"]["phase"] == "Running"
