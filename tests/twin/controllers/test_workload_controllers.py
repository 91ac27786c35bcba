"""Tests for the StatefulSet, DaemonSet and Job controllers on a bare twin (kind nodes, no apps)."""

from __future__ import annotations

import copy

import pytest

from aoi.twin.bootstrap import NodeLeases, bootstrap, node_object
from aoi.twin.controllers.cronjob import CronJobController
from aoi.twin.controllers.daemonset import DaemonSetController
from aoi.twin.controllers.job import TRACKING, JobController
from aoi.twin.controllers.lifecycle import GarbageCollector, NamespaceController
from aoi.twin.controllers.scheduler import Scheduler
from aoi.twin.controllers.statefulset import StatefulSetController
from aoi.twin.controllers.volumes import PersistentVolumeController
from aoi.twin.core import operations
from aoi.twin.core.clock import EPISODE_EPOCH, rfc3339
from aoi.twin.core.cron import next_run
from aoi.twin.kubelet.controller import Kubelet
from aoi.twin.kubelet.runtime import Boot
from aoi.twin.twin import Twin

NS = "default"


class ScriptRuntime:
    """Every image exists; a container whose command or args say "fail" exits 1 after a second, "sleep" runs on;
    one-shot pods (restartPolicy Never/OnFailure) exit 0 after two seconds; the rest run, ready after a second."""

    def image_exists(self, image: str) -> bool:
        return True

    def boot(self, twin, pod, container, restart_count) -> Boot:
        words = (container.get("command") or []) + (container.get("args") or [])
        if "fail" in words:
            return Boot(exit_after=1.0, exit_code=1)
        if pod["spec"].get("restartPolicy") in ("Never", "OnFailure") and "sleep" not in words:
            return Boot(exit_after=2.0)
        return Boot()


def make_twin(seed: int = 0) -> Twin:
    """Return a bootstrapped twin with the core controllers and the workload controllers under test."""
    twin = Twin(seed, runtime=ScriptRuntime())
    for controller in (NamespaceController(), PersistentVolumeController(), Scheduler(), Kubelet(),
                       GarbageCollector(), NodeLeases(), StatefulSetController(), DaemonSetController(),
                       JobController(), CronJobController()):
        twin.add_controller(controller)
    with twin.lock:
        bootstrap(twin)
    return twin


@pytest.fixture
def twin() -> Twin:
    twin = make_twin()
    with twin.lock:  # the store notifies watchers under the twin's lock
        yield twin


def create(twin, resource: str, obj: dict, ns: str = NS) -> dict:
    """Create an object through the API semantics."""
    res = twin.resource(resource)
    return operations.create(twin, res, ns, {"apiVersion": res.api_version, "kind": res.kind, **obj})


def template(labels: dict, **spec) -> dict:
    return {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}], **spec}}


def statefulset(name: str = "web", replicas: int = 3, **spec) -> dict:
    return {"metadata": {"name": name}, "spec": {"replicas": replicas, "serviceName": name,
                                                 "selector": {"matchLabels": {"app": name}},
                                                 "template": template({"app": name}), **spec}}


def pods(twin, prefix: str = "") -> dict[str, dict]:
    return {p["metadata"]["name"]: p for p in twin.list("pods", NS) if p["metadata"]["name"].startswith(prefix)}


def events(twin, kind: str, reason: str | None = None) -> list[str]:
    """Return event messages about objects of a kind, oldest first."""
    evs = [e for e in twin.list("events", NS) if e["involvedObject"]["kind"] == kind
           and (reason is None or e["reason"] == reason)]
    return [e["message"] for e in sorted(evs, key=lambda e: e["metadata"]["name"])]


def set_image(workload: dict, image: str) -> None:
    workload["spec"]["template"]["spec"]["containers"][0]["image"] = image


def edit(twin, resource: str, name: str, change) -> None:
    """Update an object as kubectl edit would: copy, change, PUT."""
    obj = copy.deepcopy(twin.get(resource, NS, name))
    change(obj)
    operations.update(twin, twin.resource(resource), NS, name, obj)


# --- StatefulSet ----------------------------------------------------------------------------------------------

def test_statefulset_creates_ordinals_one_at_a_time(twin):
    create(twin, "statefulsets", statefulset())
    assert list(pods(twin)) == ["web-0"]
    seen = []
    for _ in range(30):
        twin.advance(1)
        seen.append(sorted(pods(twin)))
    assert ["web-0", "web-1"] in seen and seen[-1] == ["web-0", "web-1", "web-2"]
    assert events(twin, "StatefulSet") == [f"create Pod web-{i} in StatefulSet web successful" for i in range(3)]
    pod = pods(twin)["web-1"]
    assert pod["metadata"]["labels"] == {"app": "web", "statefulset.kubernetes.io/pod-name": "web-1",
                                         "apps.kubernetes.io/pod-index": "1",
                                         "controller-revision-hash": twin.get("statefulsets", NS, "web")["status"]
                                         ["updateRevision"]}
    assert (pod["spec"]["hostname"], pod["spec"]["subdomain"]) == ("web-1", "web")


def test_statefulset_waits_for_ready_before_the_next_ordinal(twin):
    create(twin, "statefulsets", statefulset())
    while "web-1" not in pods(twin):
        assert pods(twin)["web-0"]["status"].get("phase") != "Running" or not all(
            c["status"] == "True" for c in pods(twin)["web-0"]["status"]["conditions"] if c["type"] == "Ready")
        twin.advance(0.5)
    ready = [c for c in pods(twin)["web-0"]["status"]["conditions"] if c["type"] == "Ready"]
    assert ready[0]["status"] == "True"


def test_statefulset_parallel_policy_creates_all_pods_at_once(twin):
    create(twin, "statefulsets", statefulset(podManagementPolicy="Parallel"))
    assert sorted(pods(twin)) == ["web-0", "web-1", "web-2"]


def test_statefulset_status_and_revision(twin):
    create(twin, "statefulsets", statefulset())
    twin.advance(30)
    sts = twin.get("statefulsets", NS, "web")
    revs = twin.list("controllerrevisions", NS)
    assert len(revs) == 1 and revs[0]["revision"] == 1
    assert revs[0]["metadata"]["name"] == sts["status"]["currentRevision"] == sts["status"]["updateRevision"]
    assert revs[0]["data"]["spec"]["template"]["$patch"] == "replace"
    assert revs[0]["metadata"]["ownerReferences"][0]["name"] == "web"
    assert {k: v for k, v in sts["status"].items() if "Revision" not in k} == {
        "observedGeneration": 1, "replicas": 3, "readyReplicas": 3, "availableReplicas": 3, "currentReplicas": 3,
        "updatedReplicas": 3, "collisionCount": 0}


def test_statefulset_recreates_a_deleted_pod_with_the_same_name(twin):
    create(twin, "statefulsets", statefulset())
    twin.advance(30)
    old_uid = pods(twin)["web-1"]["metadata"]["uid"]
    operations.delete(twin, twin.resource("pods"), NS, "web-1")
    twin.advance(10)
    assert sorted(pods(twin)) == ["web-0", "web-1", "web-2"]
    assert pods(twin)["web-1"]["metadata"]["uid"] != old_uid
    assert pods(twin)["web-1"]["status"]["phase"] == "Running"


def test_statefulset_scales_down_from_the_highest_ordinal(twin):
    create(twin, "statefulsets", statefulset(replicas=4))
    twin.advance(40)
    operations.set_replicas(twin, twin.resource("statefulsets"), twin.get("statefulsets", NS, "web"), 1)
    twin.advance(10)
    assert list(pods(twin)) == ["web-0"]
    assert events(twin, "StatefulSet", "SuccessfulDelete") == [
        f"delete Pod web-{i} in StatefulSet web successful" for i in (3, 2, 1)]
    assert twin.get("statefulsets", NS, "web")["status"]["replicas"] == 1


def test_statefulset_rolls_a_template_change_from_the_highest_ordinal(twin):
    create(twin, "statefulsets", statefulset())
    twin.advance(30)
    old = twin.get("statefulsets", NS, "web")["status"]["currentRevision"]
    edit(twin, "statefulsets", "web", lambda s: set_image(s, "nginx:1.28"))
    mid = twin.get("statefulsets", NS, "web")["status"]
    assert mid["currentRevision"] == old and mid["updateRevision"] != old
    twin.advance(60)
    status = twin.get("statefulsets", NS, "web")["status"]
    assert events(twin, "StatefulSet", "SuccessfulDelete") == [
        f"delete Pod web-{i} in StatefulSet web successful" for i in (2, 1, 0)]
    assert status["currentRevision"] == status["updateRevision"] == mid["updateRevision"]
    assert status["updatedReplicas"] == status["currentReplicas"] == 3 and status["observedGeneration"] == 2
    assert {p["spec"]["containers"][0]["image"] for p in pods(twin).values()} == {"nginx:1.28"}
    assert sorted(r["revision"] for r in twin.list("controllerrevisions", NS)) == [1, 2]


def test_statefulset_partition_keeps_lower_ordinals_on_the_old_revision(twin):
    create(twin, "statefulsets", statefulset())
    twin.advance(30)
    edit(twin, "statefulsets", "web", lambda s: (
        set_image(s, "nginx:1.28"), s["spec"]["updateStrategy"].update(rollingUpdate={"partition": 2})))
    twin.advance(60)
    images = {n: p["spec"]["containers"][0]["image"] for n, p in pods(twin).items()}
    assert images == {"web-0": "nginx:1.27", "web-1": "nginx:1.27", "web-2": "nginx:1.28"}
    assert twin.get("statefulsets", NS, "web")["status"]["updatedReplicas"] == 1


def test_statefulset_claims_from_volume_claim_templates(twin):
    create(twin, "storageclasses", {"metadata": {"name": "local"}, "provisioner": "rancher.io/local-path",
                                    "volumeBindingMode": "WaitForFirstConsumer"}, "")
    claim = {"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "local",
                                                    "resources": {"requests": {"storage": "1Gi"}}}}
    create(twin, "statefulsets", statefulset(replicas=2, volumeClaimTemplates=[claim]))
    twin.advance(30)
    claims = {c["metadata"]["name"]: c for c in twin.list("persistentvolumeclaims", NS)}
    assert sorted(claims) == ["data-web-0", "data-web-1"]
    assert all(c["status"]["phase"] == "Bound" and not c["metadata"].get("ownerReferences") for c in claims.values())
    assert claims["data-web-0"]["metadata"]["labels"] == {"app": "web"}
    assert pods(twin)["web-1"]["spec"]["volumes"] == [
        {"name": "data", "persistentVolumeClaim": {"claimName": "data-web-1"}}]
    assert events(twin, "StatefulSet")[:2] == ["create Claim data-web-0 Pod web-0 in StatefulSet web success",
                                               "create Pod web-0 in StatefulSet web successful"]
    operations.delete(twin, twin.resource("statefulsets"), NS, "web")
    twin.advance(10)
    assert not pods(twin) and len(twin.list("persistentvolumeclaims", NS)) == 2  # claims outlive the set


# --- DaemonSet ------------------------------------------------------------------------------------------------

def daemonset(name: str = "agent", **spec) -> dict:
    return {"metadata": {"name": name}, "spec": {"selector": {"matchLabels": {"app": name}},
                                                 "template": template({"app": name}, **spec)}}


def test_daemonset_runs_one_pod_per_eligible_node(twin):
    create(twin, "daemonsets", daemonset("agent"))  # does not tolerate the control-plane taint
    create(twin, "daemonsets", daemonset("proxy", tolerations=[{"operator": "Exists"}], hostNetwork=True))
    twin.advance(10)
    placed = {(n.split("-")[0], p["spec"]["nodeName"]) for n, p in pods(twin).items()}
    assert placed == {("agent", "kind-worker"), ("proxy", "kind-worker"), ("proxy", "kind-control-plane")}
    status = twin.get("daemonsets", NS, "proxy")["status"]
    assert status == {"currentNumberScheduled": 2, "desiredNumberScheduled": 2, "numberAvailable": 2,
                      "numberMisscheduled": 0, "numberReady": 2, "observedGeneration": 1, "updatedNumberScheduled": 2}
    assert twin.get("daemonsets", NS, "agent")["status"]["desiredNumberScheduled"] == 1


def test_daemonset_pods_are_pinned_by_node_affinity_and_tolerate_node_problems(twin):
    create(twin, "daemonsets", daemonset("proxy", hostNetwork=True))
    pod = next(iter(pods(twin).values()))
    name = pod["metadata"]["name"]
    assert name.startswith("proxy-") and len(name) == len("proxy-") + 5 and pod["metadata"]["generateName"] == "proxy-"
    terms = pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert terms == {"nodeSelectorTerms": [{"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": [pod["spec"]["nodeName"]]}]}]}
    keys = [(t["key"], t["effect"]) for t in pod["spec"]["tolerations"]]
    assert keys[:2] == [("node.kubernetes.io/not-ready", "NoExecute"), ("node.kubernetes.io/unreachable", "NoExecute")]
    assert ("node.kubernetes.io/network-unavailable", "NoSchedule") in keys
    revision = twin.list("controllerrevisions", NS)[0]
    assert pod["metadata"]["labels"] == {"app": "proxy", "controller-revision-hash": revision["metadata"]["labels"]
                                         ["controller-revision-hash"], "pod-template-generation": "1"}
    assert revision["metadata"]["name"] == "proxy-" + pod["metadata"]["labels"]["controller-revision-hash"]


def test_daemonset_follows_node_selector_and_new_nodes(twin):
    create(twin, "daemonsets", daemonset("gpu", nodeSelector={"gpu": "yes"}))
    assert not pods(twin) and twin.get("daemonsets", NS, "gpu")["status"]["desiredNumberScheduled"] == 0
    node = node_object(twin, "kind-worker2", "172.18.0.4", "10.244.2.0/24", False)
    node["metadata"]["labels"]["gpu"] = "yes"
    create(twin, "nodes", node, "")
    twin.advance(10)
    assert [p["spec"]["nodeName"] for p in pods(twin).values()] == ["kind-worker2"]
    assert twin.get("daemonsets", NS, "gpu")["status"]["numberReady"] == 1


def test_daemonset_leaves_a_node_that_gains_an_untolerated_no_execute_taint(twin):
    create(twin, "daemonsets", daemonset("agent"))
    twin.advance(10)
    node = copy.deepcopy(twin.get("nodes", "", "kind-worker"))
    node["spec"]["taints"] = [{"key": "maintenance", "effect": "NoExecute"}]
    operations.update(twin, twin.resource("nodes"), "", "kind-worker", node)
    twin.advance(5)
    assert not pods(twin)
    assert events(twin, "DaemonSet", "SuccessfulDelete")[0].startswith("Deleted pod: agent-")


def test_daemonset_rolling_update_replaces_one_node_at_a_time(twin):
    create(twin, "daemonsets", daemonset("proxy", tolerations=[{"operator": "Exists"}]))
    twin.advance(10)
    edit(twin, "daemonsets", "proxy", lambda d: set_image(d, "nginx:1.28"))
    for _ in range(40):
        ready = [p for p in pods(twin).values() if not p["metadata"].get("deletionTimestamp")
                 and any(c["type"] == "Ready" and c["status"] == "True" for c in p["status"].get("conditions", []))]
        assert len(ready) >= 1  # maxUnavailable 1 of 2 nodes
        twin.advance(0.5)
    status = twin.get("daemonsets", NS, "proxy")["status"]
    assert status["updatedNumberScheduled"] == status["numberAvailable"] == 2 and status["observedGeneration"] == 2
    assert {p["spec"]["containers"][0]["image"] for p in pods(twin).values()} == {"nginx:1.28"}
    assert len(events(twin, "DaemonSet", "SuccessfulDelete")) == 2


# --- Job ------------------------------------------------------------------------------------------------------

def job(name: str = "pi", args: list | None = None, **spec) -> dict:
    container = {"name": "main", "image": "busybox:1.36", **({"args": args} if args else {})}
    return {"metadata": {"name": name}, "spec": {"template": {"spec": {"restartPolicy": "Never",
                                                                       "containers": [container]}}, **spec}}


def test_job_gets_a_generated_selector_and_controller_labels(twin):
    stored = create(twin, "jobs", job())
    uid = stored["metadata"]["uid"]
    labels = {"batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": "pi",
              "controller-uid": uid, "job-name": "pi"}
    assert stored["spec"]["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    assert stored["spec"]["template"]["metadata"]["labels"] == labels == stored["metadata"]["labels"]
    pod = next(iter(pods(twin).values()))
    assert pod["metadata"]["labels"] == labels and pod["metadata"]["finalizers"] == [TRACKING]
    assert pod["metadata"]["name"].startswith("pi-") and len(pod["metadata"]["name"]) == 8


def test_job_runs_completions_with_parallelism_and_completes(twin):
    create(twin, "jobs", job(completions=3, parallelism=2))
    assert len(pods(twin)) == 2
    status = twin.get("jobs", NS, "pi")["status"]
    counts = (status["active"], status["ready"], status["terminating"], status["uncountedTerminatedPods"])
    assert counts == (2, 0, 0, {})
    twin.advance(30)
    status = twin.get("jobs", NS, "pi")["status"]
    assert status["succeeded"] == 3 and "active" not in status and "failed" not in status
    assert [(c["type"], c["reason"], c["message"]) for c in status["conditions"]] == [
        ("SuccessCriteriaMet", "CompletionsReached", "Reached expected number of succeeded pods"),
        ("Complete", "CompletionsReached", "Reached expected number of succeeded pods")]
    assert status["completionTime"] >= status["startTime"]
    assert all(p["status"]["phase"] == "Succeeded" and not p["metadata"].get("finalizers") for p in pods(twin).values())
    messages = events(twin, "Job")
    assert messages[-1] == "Job completed" and sum(m.startswith("Created pod: pi-") for m in messages) == 3


def test_job_fails_after_the_backoff_limit(twin):
    create(twin, "jobs", job("bad", args=["fail"], backoffLimit=2))
    created = [twin.clock.now()]
    for _ in range(120):
        twin.advance(1)
        count = len(events(twin, "Job", "SuccessfulCreate"))
        created += [twin.clock.now()] * (count - len(created))
    status = twin.get("jobs", NS, "bad")["status"]
    assert status["failed"] == 3 and len(pods(twin)) == 3
    assert [(c["type"], c["reason"]) for c in status["conditions"]] == [
        ("FailureTarget", "BackoffLimitExceeded"), ("Failed", "BackoffLimitExceeded")]
    assert "completionTime" not in status
    assert events(twin, "Job", "BackoffLimitExceeded") == ["Job has reached the specified backoff limit"]
    assert created[1] - created[0] >= 10 and created[2] - created[1] >= 20  # exponential back-off between tries


def test_job_active_deadline(twin):
    create(twin, "jobs", job("slow", activeDeadlineSeconds=3))
    twin.advance(10)
    status = twin.get("jobs", NS, "slow")["status"]
    assert [(c["type"], c["reason"]) for c in status["conditions"]] == [
        ("FailureTarget", "DeadlineExceeded"), ("Failed", "DeadlineExceeded")]
    assert events(twin, "Job", "DeadlineExceeded") == ["Job was active longer than specified deadline"]
    assert not pods(twin)


def test_job_suspend_and_resume(twin):
    create(twin, "jobs", job(suspend=True))
    assert not pods(twin)
    assert twin.get("jobs", NS, "pi")["status"]["conditions"][0]["reason"] == "JobSuspended"
    edit(twin, "jobs", "pi", lambda j: j["spec"].update(suspend=False))
    twin.advance(30)
    status = twin.get("jobs", NS, "pi")["status"]
    assert status["conditions"][0]["status"] == "False" and status["conditions"][-1]["type"] == "Complete"
    assert events(twin, "Job", "Resumed") == ["Job resumed"]


def test_job_ttl_and_deletion_remove_the_job_and_its_pods(twin):
    create(twin, "jobs", job(ttlSecondsAfterFinished=5))
    create(twin, "jobs", job("keep"))
    twin.advance(30)
    assert twin.get("jobs", NS, "pi") is None and list(pods(twin)) == [n for n in pods(twin) if n.startswith("keep")]
    operations.delete(twin, twin.resource("jobs"), NS, "keep")
    twin.advance(5)
    assert not pods(twin)


# --- CronJob --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("schedule", "expected"), [
    ("*/5 * * * *", "2025-06-02T09:05:00Z"), ("30 2 * * *", "2025-06-03T02:30:00Z"),
    ("0 9 * * 1", "2025-06-09T09:00:00Z"), ("15 10 1 * *", "2025-07-01T10:15:00Z"), ("@hourly", "2025-06-02T10:00:00Z"),
    ("0 12 13 * 5", "2025-06-06T12:00:00Z")])  # day of month or day of week when both are given
def test_next_run_after_monday_nine(schedule, expected):
    assert rfc3339(next_run(schedule, EPISODE_EPOCH)) == expected


def cronjob(name: str = "hello", schedule: str = "*/1 * * * *", args: list | None = None, **spec) -> dict:
    template_ = {"metadata": {"labels": {"team": "ops"}}, "spec": job(name, args)["spec"]}
    return {"metadata": {"name": name}, "spec": {"schedule": schedule, "jobTemplate": template_, **spec}}


def test_cronjob_creates_a_job_each_scheduled_minute_and_keeps_three(twin):
    create(twin, "cronjobs", cronjob())
    twin.advance(5 * 60 + 30)
    minute = int(EPISODE_EPOCH // 60)
    jobs = twin.list("jobs", NS)
    assert [j["metadata"]["name"] for j in jobs] == [f"hello-{minute + i}" for i in (3, 4, 5)]
    assert all(finished_ok(j) and j["metadata"]["labels"]["team"] == "ops" for j in jobs)
    assert jobs[0]["metadata"]["annotations"]["batch.kubernetes.io/cronjob-scheduled-timestamp"] == rfc3339(
        EPISODE_EPOCH + 180)
    status = twin.get("cronjobs", NS, "hello")["status"]
    assert status["lastScheduleTime"] == rfc3339(EPISODE_EPOCH + 300) and "active" not in status
    messages = events(twin, "CronJob")
    assert messages[:2] == [f"Created job hello-{minute + 1}",
                            f"Saw completed job: hello-{minute + 1}, status: Complete"]
    assert f"Deleted job hello-{minute + 2}" in messages


def finished_ok(job_: dict) -> bool:
    return any(c["type"] == "Complete" for c in job_["status"].get("conditions", []))


def test_cronjob_forbid_skips_runs_while_one_is_active(twin):
    create(twin, "cronjobs", cronjob(args=["sleep"], concurrencyPolicy="Forbid"))
    twin.advance(4 * 60 + 30)
    assert len(twin.list("jobs", NS)) == 1
    active = twin.get("cronjobs", NS, "hello")["status"]["active"]
    assert [a["name"] for a in active] == [twin.list("jobs", NS)[0]["metadata"]["name"]]


# --- determinism ----------------------------------------------------------------------------------------------

def names_after_workloads(seed: int) -> list[str]:
    twin = make_twin(seed)
    with twin.lock:
        create(twin, "daemonsets", daemonset("proxy", tolerations=[{"operator": "Exists"}]))
        create(twin, "jobs", job(completions=2))
        create(twin, "statefulsets", statefulset())
        twin.advance(60)
        return sorted(p["metadata"]["name"] + p["metadata"]["uid"] for p in twin.list("pods", NS))


def test_names_are_deterministic_per_seed():
    assert names_after_workloads(3) == names_after_workloads(3)
    assert names_after_workloads(3) != names_after_workloads(4)
