"""Tests for server-side printing: every column set and cell formula against Kubernetes 1.32 printers.go."""

from __future__ import annotations

import copy

import pytest

from aoi.twin.api.tables import PRINTERS, human_duration, render_table
from aoi.twin.core.clock import EPISODE_EPOCH, rfc3339

NOW = EPISODE_EPOCH + 3 * 86400


def ts(ago: float) -> str:
    """Return the RFC 3339 time `ago` seconds before NOW."""
    return rfc3339(NOW - ago)


def meta(name: str, ago: float = 3600, **extra) -> dict:
    return {"name": name, "namespace": "test-hotel-reservation", "uid": f"uid-{name}", "resourceVersion": "42",
            "creationTimestamp": ts(ago), **extra}


def row(resource: str, obj: dict) -> list:
    """Render one object and return its cells, checking that every column got a cell."""
    table = render_table(resource, [obj], NOW)
    cells = table["rows"][0]["cells"]
    assert len(cells) == len(table["columnDefinitions"])
    return cells


# --- human_duration -------------------------------------------------------------------------------------------

H, D, Y = 3600, 86400, 365 * 86400


@pytest.mark.parametrize(("seconds", "expected"), [
    # the HumanDuration boundaries of apimachinery's duration_test.go
    (-2, "<invalid>"), (-2 + 1e-9, "0s"), (-1, "0s"), (0, "0s"), (0.999, "0s"), (1, "1s"), (45, "45s"), (59, "59s"),
    (70, "70s"), (119, "119s"), (119.999, "119s"), (120, "2m"), (121, "2m1s"), (190, "3m10s"), (303, "5m3s"),
    (599.999, "9m59s"), (600, "10m"), (601, "10m"), (70 * 60, "70m"), (3 * H - 0.001, "179m"), (3 * H, "3h"),
    (3 * H + 60, "3h1m"), (4 * H + 59 * 60, "4h59m"), (8 * H - 0.001, "7h59m"), (8 * H, "8h"), (8 * H + 59 * 60, "8h"),
    (47 * H, "47h"), (2 * D - 0.001, "47h"), (2 * D, "2d"), (49 * H, "2d1h"), (3 * D, "3d"), (3 * D + 5 * H, "3d5h"),
    (8 * D - 0.001, "7d23h"), (8 * D, "8d"), (8 * D + 23 * H, "8d"), (9 * D, "9d"), (367 * D, "367d"),
    (2 * Y - 0.001, "729d"), (2 * Y, "2y"), (2 * Y + 23 * H + 59 * 60, "2y"), (2 * Y + D, "2y1d"), (3 * Y, "3y"),
    (8 * Y - 0.001, "7y364d"), (8 * Y, "8y"), (8 * Y + 364 * D, "8y"), (9 * Y, "9y"),
])
def test_human_duration_matches_apimachinery(seconds, expected):
    assert human_duration(seconds) == expected


# --- column sets ----------------------------------------------------------------------------------------------

W = 1  # priority of wide columns
COLUMNS = {
    "pods": [("Name", "string", 0), ("Ready", "string", 0), ("Status", "string", 0), ("Restarts", "string", 0),
             ("Age", "string", 0), ("IP", "string", W), ("Node", "string", W), ("Nominated Node", "string", W),
             ("Readiness Gates", "string", W)],
    "deployments.apps": [("Name", "string", 0), ("Ready", "string", 0), ("Up-to-date", "string", 0),
                         ("Available", "string", 0), ("Age", "string", 0), ("Containers", "string", W),
                         ("Images", "string", W), ("Selector", "string", W)],
    "replicasets.apps": [("Name", "string", 0), ("Desired", "integer", 0), ("Current", "integer", 0),
                         ("Ready", "integer", 0), ("Age", "string", 0), ("Containers", "string", W),
                         ("Images", "string", W), ("Selector", "string", W)],
    "statefulsets.apps": [("Name", "string", 0), ("Ready", "string", 0), ("Age", "string", 0),
                          ("Containers", "string", W), ("Images", "string", W)],
    "daemonsets.apps": [("Name", "string", 0), ("Desired", "integer", 0), ("Current", "integer", 0),
                        ("Ready", "integer", 0), ("Up-to-date", "integer", 0), ("Available", "integer", 0),
                        ("Node Selector", "string", 0), ("Age", "string", 0), ("Containers", "string", W),
                        ("Images", "string", W), ("Selector", "string", W)],
    "jobs.batch": [("Name", "string", 0), ("Status", "string", 0), ("Completions", "string", 0),
                   ("Duration", "string", 0), ("Age", "string", 0), ("Containers", "string", W),
                   ("Images", "string", W), ("Selector", "string", W)],
    "cronjobs.batch": [("Name", "string", 0), ("Schedule", "string", 0), ("Timezone", "string", 0),
                       ("Suspend", "boolean", 0), ("Active", "integer", 0), ("Last Schedule", "string", 0),
                       ("Age", "string", 0), ("Containers", "string", W), ("Images", "string", W),
                       ("Selector", "string", W)],
    "services": [("Name", "string", 0), ("Type", "string", 0), ("Cluster-IP", "string", 0),
                 ("External-IP", "string", 0), ("Port(s)", "string", 0), ("Age", "string", 0),
                 ("Selector", "string", W)],
    "endpoints": [("Name", "string", 0), ("Endpoints", "string", 0), ("Age", "string", 0)],
    "endpointslices.discovery.k8s.io": [("Name", "string", 0), ("AddressType", "string", 0), ("Ports", "string", 0),
                                        ("Endpoints", "string", 0), ("Age", "string", 0)],
    "configmaps": [("Name", "string", 0), ("Data", "string", 0), ("Age", "string", 0)],
    "secrets": [("Name", "string", 0), ("Type", "string", 0), ("Data", "string", 0), ("Age", "string", 0)],
    "namespaces": [("Name", "string", 0), ("Status", "string", 0), ("Age", "string", 0)],
    "nodes": [("Name", "string", 0), ("Status", "string", 0), ("Roles", "string", 0), ("Age", "string", 0),
              ("Version", "string", 0), ("Internal-IP", "string", W), ("External-IP", "string", W),
              ("OS-Image", "string", W), ("Kernel-Version", "string", W), ("Container-Runtime", "string", W)],
    "events": [("Last Seen", "string", 0), ("Type", "string", 0), ("Reason", "string", 0), ("Object", "string", 0),
               ("Subobject", "string", W), ("Source", "string", W), ("Message", "string", 0),
               ("First Seen", "string", W), ("Count", "string", W), ("Name", "string", W)],
    "persistentvolumes": [("Name", "string", 0), ("Capacity", "string", 0), ("Access Modes", "string", 0),
                          ("Reclaim Policy", "string", 0), ("Status", "string", 0), ("Claim", "string", 0),
                          ("StorageClass", "string", 0), ("VolumeAttributesClass", "string", 0),
                          ("Reason", "string", 0), ("Age", "string", 0), ("VolumeMode", "string", W)],
    "persistentvolumeclaims": [("Name", "string", 0), ("Status", "string", 0), ("Volume", "string", 0),
                               ("Capacity", "string", 0), ("Access Modes", "string", 0),
                               ("StorageClass", "string", 0), ("VolumeAttributesClass", "string", 0),
                               ("Age", "string", 0), ("VolumeMode", "string", W)],
    "storageclasses.storage.k8s.io": [("Name", "string", 0), ("Provisioner", "string", 0),
                                      ("ReclaimPolicy", "string", 0), ("VolumeBindingMode", "string", 0),
                                      ("AllowVolumeExpansion", "string", 0), ("Age", "string", 0)],
    "serviceaccounts": [("Name", "string", 0), ("Secrets", "string", 0), ("Age", "string", 0)],
    "replicationcontrollers": [("Name", "string", 0), ("Desired", "integer", 0), ("Current", "integer", 0),
                               ("Ready", "integer", 0), ("Age", "string", 0), ("Containers", "string", W),
                               ("Images", "string", W), ("Selector", "string", W)],
    "horizontalpodautoscalers.autoscaling": [("Name", "string", 0), ("Reference", "string", 0),
                                             ("Targets", "string", 0), ("MinPods", "string", 0),
                                             ("MaxPods", "string", 0), ("Replicas", "string", 0),
                                             ("Age", "string", 0)],
    "leases.coordination.k8s.io": [("Name", "string", 0), ("Holder", "string", 0), ("Age", "string", 0)],
    "roles.rbac.authorization.k8s.io": [("Name", "string", 0), ("Created At", "date", 0)],
    "clusterroles.rbac.authorization.k8s.io": [("Name", "string", 0), ("Created At", "date", 0)],
    "limitranges": [("Name", "string", 0), ("Created At", "date", 0)],
    "rolebindings.rbac.authorization.k8s.io": [("Name", "string", 0), ("Role", "string", 0), ("Age", "string", 0),
                                               ("Users", "string", W), ("Groups", "string", W),
                                               ("ServiceAccounts", "string", W)],
    "clusterrolebindings.rbac.authorization.k8s.io": [("Name", "string", 0), ("Role", "string", 0),
                                                      ("Age", "string", 0), ("Users", "string", W),
                                                      ("Groups", "string", W), ("ServiceAccounts", "string", W)],
    "resourcequotas": [("Name", "string", 0), ("Age", "string", 0), ("Request", "string", 0),
                       ("Limit", "string", 0)],
    "controllerrevisions.apps": [("Name", "string", 0), ("Controller", "string", 0), ("Revision", "string", 0),
                                 ("Age", "string", 0)],
    "podchaos.chaos-mesh.org": [("Name", "string", 0), ("Age", "date", 0)],
    "networkpolicies.networking.k8s.io": [("Name", "string", 0), ("Pod-Selector", "string", 0), ("Age", "string", 0)],
    "ingresses.networking.k8s.io": [("Name", "string", 0), ("Class", "string", 0), ("Hosts", "string", 0),
                                    ("Address", "string", 0), ("Ports", "string", 0), ("Age", "string", 0)],
    "ingressclasses.networking.k8s.io": [("Name", "string", 0), ("Controller", "string", 0),
                                         ("Parameters", "string", 0), ("Age", "string", 0)],
    "poddisruptionbudgets.policy": [("Name", "string", 0), ("Min Available", "string", 0),
                                    ("Max Unavailable", "string", 0), ("Allowed Disruptions", "integer", 0),
                                    ("Age", "string", 0)],
    "priorityclasses.scheduling.k8s.io": [("Name", "string", 0), ("Value", "integer", 0),
                                          ("Global-Default", "boolean", 0), ("Age", "string", 0),
                                          ("Preemption-Policy", "string", 0)],
}


@pytest.mark.parametrize("resource", sorted(COLUMNS))
def test_column_sets_match_kubernetes_1_32(resource):
    columns = render_table(resource, [], NOW)["columnDefinitions"]
    assert [(c["name"], c["type"], c["priority"]) for c in columns] == COLUMNS[resource]
    for c in columns:
        assert set(c) == {"name", "type", "format", "description", "priority"}
        assert c["description"].endswith(".") and c["format"] == ("name" if c["name"] == "Name" else "")


def test_every_registered_printer_is_covered_by_the_column_table():
    assert set(PRINTERS) - set(COLUMNS) == {"customresourcedefinitions.apiextensions.k8s.io"}


# --- pods -----------------------------------------------------------------------------------------------------

def pod(**status) -> dict:
    return {
        "kind": "Pod", "apiVersion": "v1",
        "metadata": meta("geo-ecc174e3e0-c36bb", 4 * H + 59 * 60 + 30, labels={"io.kompose.service": "geo"}),
        "spec": {"nodeName": "kind-worker", "containers": [{"name": "hotel-reserv-geo", "image": "yinfangchen/geo"}]},
        "status": {"phase": "Running", "podIP": "10.244.1.12", "podIPs": [{"ip": "10.244.1.12"}],
                   "conditions": [{"type": "Initialized", "status": "True"}, {"type": "Ready", "status": "True"}],
                   **status},
    }


def running(name: str = "hotel-reserv-geo", restarts: int = 0, finished_ago: float | None = None) -> dict:
    status = {"name": name, "ready": True, "started": True, "restartCount": restarts,
              "state": {"running": {"startedAt": ts(300)}}}
    if finished_ago is not None:
        status["lastState"] = {"terminated": {"exitCode": 2, "reason": "Error", "finishedAt": ts(finished_ago)}}
    return status


def waiting(reason: str, restarts: int = 0) -> dict:
    return {"name": "hotel-reserv-geo", "ready": False, "restartCount": restarts,
            "state": {"waiting": {"reason": reason}}}


def test_pod_running_with_restarts_and_wide_cells():
    cells = row("pods", pod(containerStatuses=[running(restarts=3, finished_ago=600)]))
    assert cells == ["geo-ecc174e3e0-c36bb", "1/1", "Running", "3 (10m ago)", "4h59m", "10.244.1.12", "kind-worker",
                     "<none>", "<none>"]


@pytest.mark.parametrize(("container", "expected"), [
    (waiting("CrashLoopBackOff", 5), ["0/1", "CrashLoopBackOff", "5"]),
    (waiting("ImagePullBackOff"), ["0/1", "ImagePullBackOff", "0"]),
    (waiting("ErrImagePull"), ["0/1", "ErrImagePull", "0"]),
    (waiting("ContainerCreating"), ["0/1", "ContainerCreating", "0"]),
    ({"name": "c", "ready": False, "state": {"terminated": {"exitCode": 1, "reason": "Error"}}}, ["0/1", "Error", "0"]),
    ({"name": "c", "ready": False, "state": {"terminated": {"exitCode": 137}}}, ["0/1", "ExitCode:137", "0"]),
    ({"name": "c", "ready": False, "state": {"terminated": {"exitCode": 0, "signal": 9}}}, ["0/1", "Signal:9", "0"]),
    ({"name": "c", "ready": False, "state": {"running": {}}}, ["0/1", "Running", "0"]),
])
def test_pod_status_from_container_state(container, expected):
    assert row("pods", pod(containerStatuses=[container]))[1:4] == expected


def test_pending_unscheduled_pod_shows_none_for_ip_and_node():
    obj = pod(phase="Pending", conditions=[{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}])
    del obj["spec"]["nodeName"], obj["status"]["podIP"], obj["status"]["podIPs"]
    assert row("pods", obj) == ["geo-ecc174e3e0-c36bb", "0/1", "Pending", "0", "4h59m", "<none>", "<none>", "<none>",
                                "<none>"]


def test_scheduling_gated_pod():
    obj = pod(phase="Pending", conditions=[{"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}])
    assert row("pods", obj)[2] == "SchedulingGated"


def test_pod_ip_falls_back_from_pod_ip_to_pod_ips():
    obj = pod(containerStatuses=[running()])
    del obj["status"]["podIP"]
    assert row("pods", obj)[5] == "10.244.1.12"


def init_pod(*init_statuses: dict, initialized: bool = False) -> dict:
    obj = pod(phase="Pending", initContainerStatuses=list(init_statuses),
              conditions=[{"type": "Initialized", "status": "True" if initialized else "False"}],
              containerStatuses=[waiting("PodInitializing")])
    obj["spec"]["initContainers"] = [{"name": "init-db", "image": "busybox"},
                                     {"name": "init-cache", "image": "busybox"}]
    return obj


def test_init_container_progress_and_failures():
    done = {"name": "init-db", "restartCount": 0, "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}
    run = {"name": "init-cache", "restartCount": 0, "state": {"running": {"startedAt": ts(5)}}}
    crash = {"name": "init-cache", "restartCount": 4, "state": {"waiting": {"reason": "CrashLoopBackOff"}},
             "lastState": {"terminated": {"exitCode": 1, "finishedAt": ts(30)}}}
    failed = {"name": "init-db", "restartCount": 0, "state": {"terminated": {"exitCode": 3}}}
    errored = {"name": "init-db", "restartCount": 0, "state": {"terminated": {"exitCode": 1, "reason": "Error"}}}
    assert row("pods", init_pod(done, run))[1:4] == ["0/1", "Init:1/2", "0"]
    assert row("pods", init_pod(run))[1:4] == ["0/1", "Init:0/2", "0"]
    assert row("pods", init_pod(done, crash))[1:4] == ["0/1", "Init:CrashLoopBackOff", "4 (30s ago)"]
    assert row("pods", init_pod(failed))[2] == "Init:ExitCode:3"
    assert row("pods", init_pod(errored))[2] == "Init:Error"


def test_sidecar_init_container_counts_toward_ready_and_total():
    obj = pod(containerStatuses=[running()], initContainerStatuses=[
        {"name": "proxy", "ready": True, "started": True, "restartCount": 1,
         "state": {"running": {}}, "lastState": {"terminated": {"exitCode": 1, "finishedAt": ts(90)}}}])
    obj["spec"]["initContainers"] = [{"name": "proxy", "image": "envoy", "restartPolicy": "Always"}]
    assert row("pods", obj)[1:4] == ["2/2", "Running", "1 (90s ago)"]


@pytest.mark.parametrize(("ready", "expected"), [("True", "Running"), ("False", "NotReady")])
def test_completed_container_beside_a_running_one(ready, expected):
    obj = pod(conditions=[{"type": "Ready", "status": ready}], containerStatuses=[
        {"name": "job", "ready": False, "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}},
        running("sidecar")])
    obj["spec"]["containers"].append({"name": "sidecar", "image": "envoy"})
    assert row("pods", obj)[1:3] == ["1/2", expected]


def test_succeeded_and_failed_pods_carry_completed_condition():
    done = pod(phase="Succeeded", containerStatuses=[
        {"name": "c", "ready": False, "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}])
    table = render_table("pods", [done], NOW)
    assert table["rows"][0]["cells"][1:3] == ["0/1", "Completed"]
    assert table["rows"][0]["conditions"] == [{"type": "Completed", "status": "True", "reason": "Succeeded",
                                               "message": "The pod has completed successfully."}]
    failed = render_table("pods", [pod(phase="Failed", reason="Evicted")], NOW)["rows"][0]
    assert failed["cells"][2] == "Evicted" and failed["conditions"][0]["reason"] == "Failed"
    assert "conditions" not in render_table("pods", [pod(containerStatuses=[running()])], NOW)["rows"][0]


def test_terminating_and_node_lost_pods():
    obj = pod(containerStatuses=[running()])
    obj["metadata"]["deletionTimestamp"] = ts(5)
    assert row("pods", obj)[2] == "Terminating"
    obj["status"]["reason"] = "NodeLost"
    assert row("pods", obj)[2] == "Unknown"
    obj["status"].update(phase="Succeeded", reason="")
    assert row("pods", obj)[2] == "Succeeded"  # a terminal pod is not shown as Terminating


def test_pod_readiness_gates_and_nominated_node():
    obj = pod(containerStatuses=[running()], nominatedNodeName="kind-worker2")
    obj["spec"]["readinessGates"] = [{"conditionType": "example.com/lb"}, {"conditionType": "example.com/dns"}]
    obj["status"]["conditions"].append({"type": "example.com/lb", "status": "True"})
    assert row("pods", obj)[7:] == ["kind-worker2", "1/2"]


# --- workloads ------------------------------------------------------------------------------------------------

TEMPLATE = {"metadata": {"labels": {"app": "geo"}}, "spec": {"containers": [
    {"name": "geo", "image": "yinfangchen/geo:latest"}, {"name": "istio-proxy", "image": "istio/proxyv2:1.20"}]}}
SELECTOR = {"matchLabels": {"app": "geo", "tier": "backend"},
            "matchExpressions": [{"key": "env", "operator": "In", "values": ["prod", "canary"]},
                                 {"key": "legacy", "operator": "DoesNotExist"}]}


def test_deployment_row():
    obj = {"metadata": meta("geo", 9 * D), "spec": {"replicas": 3, "selector": SELECTOR, "template": TEMPLATE},
           "status": {"replicas": 3, "readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2}}
    assert row("deployments.apps", obj) == [
        "geo", "2/3", 3, 2, "9d", "geo,istio-proxy", "yinfangchen/geo:latest,istio/proxyv2:1.20",
        "app=geo,env in (canary,prod),!legacy,tier=backend"]
    obj["status"] = {}
    obj["spec"]["selector"] = {}
    assert row("deployments.apps", obj)[1:4] == ["0/3", 0, 0] and row("deployments.apps", obj)[7] == ""


def test_replicaset_and_replicationcontroller_rows():
    rs = {"metadata": meta("geo-ecc174e3e0", 2 * H),
          "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "geo"}}, "template": TEMPLATE},
          "status": {"replicas": 2, "readyReplicas": 1}}
    assert row("replicasets.apps", rs) == ["geo-ecc174e3e0", 2, 2, 1, "120m", "geo,istio-proxy",
                                           "yinfangchen/geo:latest,istio/proxyv2:1.20", "app=geo"]
    rc = {"metadata": meta("legacy", 50),
          "spec": {"replicas": 1, "selector": {"b": "2", "a": "1"}, "template": TEMPLATE},
          "status": {"replicas": 1}}
    assert row("replicationcontrollers", rc)[1:] == [1, 1, 0, "50s", "geo,istio-proxy",
                                                     "yinfangchen/geo:latest,istio/proxyv2:1.20", "a=1,b=2"]


def test_statefulset_and_daemonset_rows():
    sts = {"metadata": meta("mongodb-geo", 3 * D + 5 * H), "spec": {"replicas": 1, "template": TEMPLATE},
           "status": {"readyReplicas": 1}}
    assert row("statefulsets.apps", sts) == ["mongodb-geo", "1/1", "3d5h", "geo,istio-proxy",
                                             "yinfangchen/geo:latest,istio/proxyv2:1.20"]
    ds_template = copy.deepcopy(TEMPLATE)
    ds_template["spec"]["nodeSelector"] = {"kubernetes.io/os": "linux"}
    ds = {"metadata": meta("kube-proxy", 30 * D),
          "spec": {"selector": {"matchLabels": {"k8s-app": "kube-proxy"}}, "template": ds_template},
          "status": {"desiredNumberScheduled": 3, "currentNumberScheduled": 3, "numberReady": 2,
                     "updatedNumberScheduled": 3, "numberAvailable": 2}}
    assert row("daemonsets.apps", ds) == ["kube-proxy", 3, 3, 2, 3, 2, "kubernetes.io/os=linux", "30d",
                                          "geo,istio-proxy", "yinfangchen/geo:latest,istio/proxyv2:1.20",
                                          "k8s-app=kube-proxy"]


def job(conditions=(), **spec) -> dict:
    return {"metadata": meta("wrk2-load", 10 * 60),
            "spec": {"selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": "abc"}},
                     "template": {"spec": {"containers": [{"name": "wrk2", "image": "deathstarbench/wrk2"}]}}, **spec},
            "status": {"startTime": ts(9 * 60), "conditions": [{"type": t, "status": "True"} for t in conditions]}}


def test_job_rows():
    done = job(["Complete"], completions=1)
    done["status"].update(succeeded=1, completionTime=ts(9 * 60 - 45))
    assert row("jobs.batch", done) == ["wrk2-load", "Complete", "1/1", "45s", "10m", "wrk2", "deathstarbench/wrk2",
                                       "batch.kubernetes.io/controller-uid=abc"]
    assert row("jobs.batch", job(completions=5, parallelism=2))[1:4] == ["Running", "0/5", "9m"]
    assert row("jobs.batch", job(parallelism=3))[2] == "0/1 of 3"
    assert row("jobs.batch", job())[2] == "0/1"
    assert row("jobs.batch", job(["FailureTarget", "Failed"]))[1] == "Failed"
    assert row("jobs.batch", job(["Suspended"]))[1] == "Suspended"
    assert row("jobs.batch", job(["FailureTarget"]))[1] == "FailureTarget"
    unstarted = job()
    del unstarted["status"]["startTime"]
    assert row("jobs.batch", unstarted)[3] == ""


def test_cronjob_row():
    obj = {"metadata": meta("backup", 2 * D),
           "spec": {"schedule": "*/5 * * * *", "suspend": False, "jobTemplate": {"spec": {
               "template": {"spec": {"containers": [{"name": "backup", "image": "busybox:1.36"}]}}}}},
           "status": {"active": [{"name": "backup-1"}], "lastScheduleTime": ts(5 * 60)}}
    assert row("cronjobs.batch", obj) == ["backup", "*/5 * * * *", "<none>", "False", 1, "5m", "2d", "backup",
                                          "busybox:1.36", "<none>"]
    obj["spec"].update(timeZone="Etc/UTC", suspend=True)
    obj["status"] = {}
    assert row("cronjobs.batch", obj)[2:6] == ["Etc/UTC", "True", 0, "<none>"]


def test_hpa_rows_for_v2_and_v1_objects():
    v2 = {"metadata": meta("geo", D), "spec": {
        "scaleTargetRef": {"kind": "Deployment", "name": "geo"}, "minReplicas": 1, "maxReplicas": 5, "metrics": [
            {"type": "Resource",
             "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}},
            {"type": "Resource", "resource": {"name": "memory",
                                              "target": {"type": "AverageValue", "averageValue": "500Mi"}}},
            {"type": "Pods", "pods": {"metric": {"name": "rps"}, "target": {"averageValue": "1k"}}}]},
        "status": {"currentReplicas": 2, "currentMetrics": [
            {"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 23}}}]}}
    assert row("horizontalpodautoscalers.autoscaling", v2) == [
        "geo", "Deployment/geo", "cpu: 23%/80%, memory: <unknown>/500Mi + 1 more...", "1", 5, 2, "24h"]
    v1 = {"metadata": meta("frontend", 60), "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "frontend"},
                                                      "maxReplicas": 3}, "status": {}}
    assert row("horizontalpodautoscalers.autoscaling", v1)[2:6] == ["cpu: <unknown>/80%", "1", 3, 0]


def test_controllerrevision_row():
    obj = {"metadata": meta("mongodb-geo-7d9c8", 600, ownerReferences=[
        {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "mongodb-geo", "controller": True}]), "revision": 2}
    assert row("controllerrevisions.apps", obj) == ["mongodb-geo-7d9c8", "statefulset.apps/mongodb-geo", 2, "10m"]
    del obj["metadata"]["ownerReferences"]
    assert row("controllerrevisions.apps", obj)[1] == "<none>"


# --- networking and configuration -----------------------------------------------------------------------------

def service(**spec) -> dict:
    return {"metadata": meta("frontend", 5 * 60 + 3), "spec": {"type": "ClusterIP", "clusterIP": "10.96.12.7",
                                                                "clusterIPs": ["10.96.12.7"], **spec}, "status": {}}


def test_service_rows():
    obj = service(ports=[{"port": 5000, "protocol": "TCP"}, {"port": 53, "protocol": "UDP"}],
                  selector={"io.kompose.service": "frontend"})
    assert row("services", obj) == ["frontend", "ClusterIP", "10.96.12.7", "<none>", "5000/TCP,53/UDP", "5m3s",
                                    "io.kompose.service=frontend"]
    node_port = service(type="NodePort", ports=[{"port": 80, "nodePort": 30080, "protocol": "TCP"}],
                        externalIPs=["192.0.2.10"])
    assert row("services", node_port)[1:5] == ["NodePort", "10.96.12.7", "192.0.2.10", "80:30080/TCP"]
    pending = service(type="LoadBalancer", ports=[{"port": 443, "nodePort": 31443}])
    assert row("services", pending)[3:5] == ["<pending>", "443:31443/TCP"]
    pending["status"] = {"loadBalancer": {"ingress": [{"ip": "203.0.113.9"}, {"hostname": "lb.example.com"}]}}
    assert row("services", pending)[3] == "203.0.113.9,lb.example.com"
    external = service(type="ExternalName", externalName="db.example.com", clusterIP="", clusterIPs=[])
    assert row("services", external)[1:7] == ["ExternalName", "<none>", "db.example.com", "<none>", "5m3s", "<none>"]
    assert row("services", service(clusterIP="None", clusterIPs=["None"]))[2] == "None"


def test_endpoints_rows():
    addresses = [{"ip": f"10.244.0.{i}"} for i in range(1, 5)]
    many = {"metadata": meta("geo"), "subsets": [{"addresses": addresses, "ports": [{"port": 8083}]}]}
    assert row("endpoints", many) == ["geo", "10.244.0.1:8083,10.244.0.2:8083,10.244.0.3:8083 + 1 more...", "60m"]
    two_ports = {"metadata": meta("db"), "subsets": [{"addresses": addresses[:1], "ports": [{"port": 1}, {"port": 2}]}]}
    assert row("endpoints", two_ports)[1] == "10.244.0.1:1,10.244.0.1:2"
    headless = {"metadata": meta("h"), "subsets": [{"addresses": [{"ip": "fd00::1"}], "ports": [{"port": 80}]},
                                                   {"addresses": [{"ip": "10.0.0.9"}]}]}
    assert row("endpoints", headless)[1] == "[fd00::1]:80,10.0.0.9"
    assert row("endpoints", {"metadata": meta("empty")})[1] == "<none>"


def test_endpointslice_row():
    obj = {"metadata": meta("geo-abcde", 90), "addressType": "IPv4",
           "ports": [{"name": "http", "port": 8083, "protocol": "TCP"}, {"name": "grpc"}, {}, {"port": 9}],
           "endpoints": [{"addresses": ["10.244.0.7"]}, {"addresses": ["10.244.0.8"]}]}
    assert row("endpointslices.discovery.k8s.io", obj) == ["geo-abcde", "IPv4", "8083,grpc,* + 1 more...",
                                                           "10.244.0.7,10.244.0.8", "90s"]
    assert row("endpointslices.discovery.k8s.io", {"metadata": meta("e"), "addressType": "IPv4"})[2:4] == [
        "<unset>", "<unset>"]


def test_config_rows():
    cm = {"metadata": meta("mongo-init", 8 * H), "data": {"a": "1", "b": "2"}, "binaryData": {"c": "AA=="}}
    assert row("configmaps", cm) == ["mongo-init", 3, "8h"]
    secret = {"metadata": meta("mongo-creds", 47 * H), "type": "Opaque", "data": {"user": "dQ==", "pass": "cA=="}}
    assert row("secrets", secret) == ["mongo-creds", "Opaque", 2, "47h"]
    tls = {"metadata": meta("tls"), "type": "kubernetes.io/tls"}
    assert row("secrets", tls)[1:3] == ["kubernetes.io/tls", 0]
    sa = {"metadata": meta("default", 3 * D), "secrets": [{"name": "default-token"}]}
    assert row("serviceaccounts", sa) == ["default", 1, "3d"]
    ns = {"metadata": meta("test-hotel-reservation", 4 * H + 59 * 60), "status": {"phase": "Active"}}
    assert row("namespaces", ns) == ["test-hotel-reservation", "Active", "4h59m"]


def test_rbac_rows():
    rb = {"metadata": meta("probe-view", 60), "roleRef": {"kind": "ClusterRole", "name": "view"}, "subjects": [
        {"kind": "ServiceAccount", "name": "probe", "namespace": "aoi"}, {"kind": "User", "name": "alice"},
        {"kind": "User", "name": "bob"}, {"kind": "Group", "name": "devs"}]}
    assert row("rolebindings.rbac.authorization.k8s.io", rb) == ["probe-view", "ClusterRole/view", "60s",
                                                                 "alice, bob", "devs", "aoi/probe"]
    crb = {"metadata": meta("admin"), "roleRef": {"kind": "ClusterRole", "name": "cluster-admin"}}
    assert row("clusterrolebindings.rbac.authorization.k8s.io", crb)[3:] == ["", "", ""]
    role = {"metadata": meta("pod-reader", 90), "rules": []}
    assert row("roles.rbac.authorization.k8s.io", role) == ["pod-reader", ts(90)]
    assert row("limitranges", {"metadata": {"name": "lr"}}) == ["lr", "0001-01-01T00:00:00Z"]


# --- cluster state --------------------------------------------------------------------------------------------

def node(conditions, **labels) -> dict:
    return {"metadata": meta("kind-control-plane", 30 * D, labels=labels), "spec": {},
            "status": {"conditions": conditions,
                       "addresses": [{"type": "InternalIP", "address": "172.18.0.2"},
                                     {"type": "Hostname", "address": "kind-control-plane"}],
                       "nodeInfo": {"kubeletVersion": "v1.32.2", "osImage": "Debian GNU/Linux 12 (bookworm)",
                                    "kernelVersion": "6.8.0-1015-gcp",
                                    "containerRuntimeVersion": "containerd://2.0.2"}}}


def test_node_rows():
    ready = node([{"type": "MemoryPressure", "status": "False"}, {"type": "Ready", "status": "True"}],
                 **{"node-role.kubernetes.io/control-plane": "", "kubernetes.io/role": "master"})
    assert row("nodes", ready) == ["kind-control-plane", "Ready", "control-plane,master", "30d", "v1.32.2",
                                   "172.18.0.2", "<none>", "Debian GNU/Linux 12 (bookworm)", "6.8.0-1015-gcp",
                                   "containerd://2.0.2"]
    cordoned = node([{"type": "Ready", "status": "Unknown"}])
    cordoned["spec"]["unschedulable"] = True
    assert row("nodes", cordoned)[1:3] == ["NotReady,SchedulingDisabled", "<none>"]
    bare = node([])
    bare["status"]["nodeInfo"] = {}
    assert row("nodes", bare)[1] == "Unknown" and row("nodes", bare)[7:] == ["<unknown>"] * 3


def test_event_rows():
    event = {"metadata": meta("geo.17f3a", 3 * 60), "type": "Warning", "reason": "BackOff",
             "involvedObject": {"kind": "Pod", "name": "geo-ecc174e3e0-c36bb", "fieldPath": "spec.containers{geo}"},
             "source": {"component": "kubelet", "host": "kind-worker"},
             "message": " Back-off restarting failed container\n",
             "firstTimestamp": ts(3 * 60), "lastTimestamp": ts(20), "count": 7}
    assert row("events", event) == ["20s", "Warning", "BackOff", "pod/geo-ecc174e3e0-c36bb", "spec.containers{geo}",
                                     "kubelet, kind-worker", "Back-off restarting failed container", "3m", 7,
                                     "geo.17f3a"]
    new_api = {"metadata": meta("geo.17f3b"), "type": "Normal", "reason": "Scheduled", "firstTimestamp": None,
               "lastTimestamp": None, "eventTime": rfc3339(NOW - 75).replace("Z", ".123456Z"),
               "involvedObject": {"kind": "Pod", "name": "geo"}, "reportingComponent": "default-scheduler",
               "source": {}, "message": "Successfully assigned"}
    assert row("events", new_api)[:9] == ["74s", "Normal", "Scheduled", "pod/geo", "", "default-scheduler",
                                          "Successfully assigned", "74s", 1]  # 74.877s truncates
    series = dict(new_api, series={"count": 4, "lastObservedTime": rfc3339(NOW - 5)})
    assert row("events", series)[0] == "5s" and row("events", series)[8] == 4
    bare = {"metadata": meta("x"), "involvedObject": {"kind": "Node"}}
    assert row("events", bare)[:4] == ["<unknown>", "", "", "node"] and row("events", bare)[7] == "<unknown>"


def test_persistent_volume_rows():
    pv = {"metadata": meta("pvc-1234", 2 * D), "spec": {
        "capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteMany", "ReadWriteOnce"],
        "persistentVolumeReclaimPolicy": "Delete", "storageClassName": "standard", "volumeMode": "Filesystem",
        "claimRef": {"namespace": "test-hotel-reservation", "name": "geo-pvc"}}, "status": {"phase": "Bound"}}
    assert row("persistentvolumes", pv) == ["pvc-1234", "1Gi", "RWO,RWX", "Delete", "Bound",
                                            "test-hotel-reservation/geo-pvc", "standard", "<unset>", "", "2d",
                                            "Filesystem"]
    pv["metadata"]["deletionTimestamp"] = ts(1)
    pv["spec"]["claimRef"] = None
    assert row("persistentvolumes", pv)[4:6] == ["Terminating", ""]
    bound = {"metadata": meta("geo-pvc", 2 * D), "spec": {
        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}, "storageClassName": "standard",
        "volumeName": "pvc-1234", "volumeMode": "Filesystem"},
        "status": {"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"}}}
    assert row("persistentvolumeclaims", bound) == ["geo-pvc", "Bound", "pvc-1234", "1Gi", "RWO", "standard",
                                                    "<unset>", "2d", "Filesystem"]
    pending = {"metadata": meta("new-pvc", 30, annotations={"volume.beta.kubernetes.io/storage-class": "fast"}),
               "spec": {"accessModes": ["ReadWriteOncePod"], "resources": {"requests": {"storage": "5Gi"}},
                        "volumeMode": "Block", "volumeAttributesClassName": "gold"},
               "status": {"phase": "Pending"}}
    assert row("persistentvolumeclaims", pending) == ["new-pvc", "Pending", "", "", "", "fast", "gold", "30s", "Block"]


def test_storageclass_lease_and_quota_rows():
    sc = {"metadata": meta("standard", 30 * D, annotations={"storageclass.kubernetes.io/is-default-class": "true"}),
          "provisioner": "rancher.io/local-path", "reclaimPolicy": "Delete",
          "volumeBindingMode": "WaitForFirstConsumer"}
    assert row("storageclasses.storage.k8s.io", sc) == ["standard (default)", "rancher.io/local-path", "Delete",
                                                        "WaitForFirstConsumer", False, "30d"]
    lease = {"metadata": meta("kind-worker", 30 * D), "spec": {"holderIdentity": "kind-worker"}}
    assert row("leases.coordination.k8s.io", lease) == ["kind-worker", "kind-worker", "30d"]
    quota = {"metadata": meta("compute", H), "status": {
        "hard": {"requests.cpu": "2", "limits.memory": "4Gi", "pods": "10", "limits.cpu": "4"},
        "used": {"requests.cpu": "500m", "limits.memory": "1Gi", "pods": "3"}}}
    assert row("resourcequotas", quota) == ["compute", "60m", "pods: 3/10, requests.cpu: 500m/2",
                                            "limits.cpu: 0/4, limits.memory: 1Gi/4Gi"]


# --- table envelope -------------------------------------------------------------------------------------------

def test_row_object_variants():
    obj = pod(containerStatuses=[running()])
    table = render_table("pods", [obj], NOW)
    assert table["kind"] == "Table" and table["apiVersion"] == "meta.k8s.io/v1" and table["metadata"] == {}
    assert table["rows"][0]["object"] == {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                                          "metadata": obj["metadata"]}
    assert render_table("pods", [obj], NOW, include_object="Object")["rows"][0]["object"] == obj
    assert render_table("pods", [obj], NOW, include_object="None")["rows"][0]["object"] is None
    with pytest.raises(ValueError, match='unrecognized includeObject value: "Full"'):
        render_table("pods", [obj], NOW, include_object="Full")


def test_custom_resource_gets_name_and_age():
    chaos = {"apiVersion": "chaos-mesh.org/v1alpha1", "kind": "PodChaos", "metadata": meta("pod-kill", 2 * H + 1)}
    table = render_table("podchaos.chaos-mesh.org", [chaos], NOW)
    assert table["rows"][0]["cells"] == ["pod-kill", "120m"]


def test_rows_keep_input_order_and_ages_follow_the_clock():
    objs = [{"metadata": meta(n, 10)} for n in ("b", "a")]
    assert [r["cells"][0] for r in render_table("configmaps", objs, NOW)["rows"]] == ["b", "a"]
    assert render_table("configmaps", objs, NOW + 110)["rows"][0]["cells"][2] == "2m"
    assert render_table("configmaps", objs, NOW) == render_table("configmaps", copy.deepcopy(objs), NOW)
