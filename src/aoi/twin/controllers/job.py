"""Job controller: run pods to completion, track them with finalizers, back off on failure, finish with conditions."""

from __future__ import annotations

import copy

from aoi.twin.controllers.base import Controller, owned, owner_keys
from aoi.twin.controllers.replicaset import delete_owned_pod, new_pod, set_status
from aoi.twin.core import operations
from aoi.twin.core.clock import parse_time, rfc3339
from aoi.twin.core.podstatus import condition, is_ready, restarts

COMPONENT = "job-controller"
TRACKING = "batch.kubernetes.io/job-tracking"
UID_LABEL, NAME_LABEL = "batch.kubernetes.io/controller-uid", "batch.kubernetes.io/job-name"
BACKOFF_BASE, BACKOFF_MAX = 10.0, 360.0
TERMINAL = ("Succeeded", "Failed")
BACKOFF_EXCEEDED = ("BackoffLimitExceeded", "Job has reached the specified backoff limit")
DEADLINE_EXCEEDED = ("DeadlineExceeded", "Job was active longer than specified deadline")
COMPLETIONS_REACHED = ("CompletionsReached", "Reached expected number of succeeded pods")


def finished(job: dict) -> str | None:
    """Return "Complete" or "Failed" once the job has that condition, else None."""
    for type_ in ("Complete", "Failed"):
        if (condition(job, type_) or {}).get("status") == "True":
            return type_
    return None


def job_condition(type_: str, reason: str, message: str, now: float) -> dict:
    """Return a True job condition."""
    stamp = rfc3339(now)
    return {"type": type_, "status": "True", "lastProbeTime": stamp, "lastTransitionTime": stamp,
            "reason": reason, "message": message}


def phase(pod: dict) -> str:
    """Return the pod's phase; an unscheduled pod being deleted never runs, so it counts as Failed (pod GC)."""
    if pod["metadata"].get("deletionTimestamp") and not pod["spec"].get("nodeName"):
        return "Failed"
    return (pod.get("status") or {}).get("phase", "Pending")


class JobController(Controller):
    """Create pods for Jobs until enough succeed or too many fail."""

    name = "job"
    watches = ("jobs", "pods")

    def __init__(self):
        self._gone: dict[str, list[str]] = {}  # job uid -> phases of tracked pods deleted before they were counted
        self._last_failure: dict[str, float] = {}

    def keys_for(self, twin, kind, res, obj):
        if res.kind != "Pod":
            return super().keys_for(twin, kind, res, obj)
        if kind == "DELETED" and TRACKING in (obj["metadata"].get("finalizers") or []):
            for ref in obj["metadata"].get("ownerReferences") or []:
                if ref.get("kind") == "Job" and ref.get("controller"):
                    self._gone.setdefault(ref["uid"], []).append(phase(obj))
        return owner_keys(obj, "Job")

    def reconcile(self, twin, key):
        job = twin.get("jobs", *key)
        if job is None or job["metadata"].get("deletionTimestamp"):
            self._release_orphans(twin, key)
            return
        self._default_selector(twin, job)
        pods = owned(twin, "pods", job)
        status = copy.deepcopy(job.get("status") or {})
        self._account(twin, job, pods, status)
        if finished(job):
            self._expire(twin, job)
        elif job["spec"].get("suspend"):
            self._suspend(twin, job, pods, status)
        else:
            self._run(twin, job, pods, status)
        self._write(twin, job, owned(twin, "pods", job), status)

    # --- API-server side defaults (the uid exists only once stored) ---
    def _default_selector(self, twin, job) -> None:
        """Give the job its generated selector and the pod template its controller labels."""
        spec = job["spec"]
        if spec.get("manualSelector") or spec.get("selector"):
            return
        uid, name = job["metadata"]["uid"], job["metadata"]["name"]
        spec["selector"] = {"matchLabels": {UID_LABEL: uid}}
        meta = spec["template"].setdefault("metadata", {})
        meta["labels"] = {**(meta.get("labels") or {}), UID_LABEL: uid, NAME_LABEL: name,
                          "controller-uid": uid, "job-name": name}
        if not job["metadata"].get("labels"):
            job["metadata"]["labels"] = dict(meta["labels"])
        twin.update("jobs", job)

    # --- finalizer-based tracking ---
    def _account(self, twin, job, pods, status) -> None:
        """Count finished pods once each, dropping their tracking finalizer."""
        phases = self._gone.pop(job["metadata"]["uid"], [])
        if condition(job, "SuccessCriteriaMet"):  # pods stopped after success do not count as failures
            phases = [p for p in phases if p == "Succeeded"]
        for pod in pods:
            if phase(pod) in TERMINAL and TRACKING in (pod["metadata"].get("finalizers") or []):
                phases.append(phase(pod))
                self._release(twin, pod)
        for p in phases:
            key = "succeeded" if p == "Succeeded" else "failed"
            status[key] = status.get(key, 0) + 1
        if any(p != "Succeeded" for p in phases):
            self._last_failure[job["metadata"]["uid"]] = twin.clock.now()

    def _release(self, twin, pod) -> None:
        """Remove the tracking finalizer; a pod already being deleted then goes."""
        meta = pod["metadata"]
        meta["finalizers"] = [f for f in meta.get("finalizers") or [] if f != TRACKING]
        if not meta["finalizers"]:
            del meta["finalizers"]
            if meta.get("deletionTimestamp"):
                twin.store.delete(twin.resource("pods"), meta["namespace"], meta["name"])
                return
        twin.update("pods", pod)

    def _release_orphans(self, twin, key) -> None:
        """Release the tracked pods of a job that is gone or going."""
        for pod in twin.list("pods", key[0]):
            refs = pod["metadata"].get("ownerReferences") or []
            if TRACKING in (pod["metadata"].get("finalizers") or []) and any(
                    r.get("kind") == "Job" and r.get("name") == key[1] for r in refs):
                self._release(twin, pod)

    # --- running ---
    def _run(self, twin, job, pods, status) -> None:
        """Start the job, check success and failure, and keep the wanted number of pods active."""
        now = twin.clock.now()
        status.setdefault("startTime", rfc3339(now))
        self._resume(twin, job, status, now)
        active = [p for p in pods if phase(p) not in TERMINAL and not p["metadata"].get("deletionTimestamp")]
        outcome = self._outcome(twin, job, status, active, now)
        if outcome is None:
            self._scale(twin, job, status, active, now)
            return
        target, final, (reason, message) = outcome
        conds = status.setdefault("conditions", [])
        if not any(c.get("type") == target for c in conds):
            conds.append(job_condition(target, reason, message, now))
        for pod in active:
            delete_owned_pod(twin, job, pod, COMPONENT)
        if not any(phase(p) not in TERMINAL for p in pods if p not in active) and not active:
            self._finish(twin, job, status, final, reason, message, now)

    def _outcome(self, twin, job, status, active, now):
        """Return (target condition, final condition, (reason, message)) once the job has succeeded or failed."""
        spec, succeeded = job["spec"], status.get("succeeded", 0)
        completions = spec.get("completions")
        if (succeeded >= completions) if completions is not None else (succeeded and not active):
            return "SuccessCriteriaMet", "Complete", COMPLETIONS_REACHED
        limit = spec.get("backoffLimit", 6)
        on_failure = spec["template"]["spec"].get("restartPolicy") == "OnFailure"
        tries = sum(restarts(p) for p in active) if on_failure else 0
        if status.get("failed", 0) > limit or (on_failure and (tries > 0 if limit == 0 else tries >= limit)):
            return "FailureTarget", "Failed", BACKOFF_EXCEEDED
        deadline = spec.get("activeDeadlineSeconds")
        if deadline is not None:
            left = parse_time(status["startTime"]) + deadline - now
            if left <= 0:
                return "FailureTarget", "Failed", DEADLINE_EXCEEDED
            twin.schedule(left, self.name, (job["metadata"]["namespace"], job["metadata"]["name"]))
        return None

    def _scale(self, twin, job, status, active, now) -> None:
        """Create pods up to parallelism (after the failure back-off) or delete the surplus."""
        spec, succeeded = job["spec"], status.get("succeeded", 0)
        parallelism = spec.get("parallelism", 1)
        completions = spec.get("completions")
        if completions is None:  # a work queue: stop starting pods once one succeeded
            want = 0 if succeeded else parallelism
        else:
            want = min(parallelism, completions - succeeded)
        for pod in active[want:]:
            delete_owned_pod(twin, job, pod, COMPONENT)
        missing = want - len(active)
        if missing > 0 and not self._backing_off(twin, job, status, now):
            for _ in range(missing):
                self._create(twin, job)

    def _backing_off(self, twin, job, status, now) -> bool:
        """Tell whether new pods must wait after failures; wake up when the wait is over."""
        failed = status.get("failed", 0)
        last = self._last_failure.get(job["metadata"]["uid"])
        if not failed or last is None:
            return False
        left = last + min(BACKOFF_BASE * 2 ** (failed - 1), BACKOFF_MAX) - now
        if left > 0:
            twin.schedule(left, self.name, (job["metadata"]["namespace"], job["metadata"]["name"]))
        return left > 0

    def _create(self, twin, job) -> None:
        """Create one tracked pod of the job."""
        base = job["metadata"]["name"]
        pod = new_pod(twin, job, f"{base}-{twin.ids.suffix()}")
        pod["metadata"]["generateName"] = f"{base}-"
        pod["metadata"]["finalizers"] = [TRACKING]
        stored = operations.create(twin, twin.resource("pods"), job["metadata"]["namespace"], pod)
        twin.record(job, "Normal", "SuccessfulCreate", f"Created pod: {stored['metadata']['name']}", COMPONENT)

    # --- endings ---
    def _finish(self, twin, job, status, final, reason, message, now) -> None:
        """Add the terminal condition once no pod is left running, and say so."""
        status["conditions"].append(job_condition(final, reason, message, now))
        if final == "Complete":
            status["completionTime"] = rfc3339(now)
            twin.record(job, "Normal", "Completed", "Job completed", COMPONENT)
        else:
            twin.record(job, "Warning", reason, message, COMPONENT)

    def _suspend(self, twin, job, pods, status) -> None:
        """Stop a suspended job's pods and mark it Suspended."""
        for pod in pods:
            if phase(pod) not in TERMINAL and not pod["metadata"].get("deletionTimestamp"):
                delete_owned_pod(twin, job, pod, COMPONENT)
        conds = status.setdefault("conditions", [])
        if not any(c.get("type") == "Suspended" and c.get("status") == "True" for c in conds):
            conds[:] = [c for c in conds if c.get("type") != "Suspended"]
            conds.append(job_condition("Suspended", "JobSuspended", "Job suspended", twin.clock.now()))
            status.pop("startTime", None)
            twin.record(job, "Normal", "Suspended", "Job suspended", COMPONENT)

    def _resume(self, twin, job, status, now) -> None:
        """Flip a Suspended condition to False when the job runs again."""
        for cond in status.get("conditions") or []:
            if cond.get("type") == "Suspended" and cond.get("status") == "True":
                cond.update(job_condition("Suspended", "JobResumed", "Job resumed", now), status="False")
                twin.record(job, "Normal", "Resumed", "Job resumed", COMPONENT)

    def _expire(self, twin, job) -> None:
        """Delete a finished job after ttlSecondsAfterFinished (the TTL-after-finished controller)."""
        ttl = job["spec"].get("ttlSecondsAfterFinished")
        if ttl is None:
            return
        done = parse_time((condition(job, finished(job)) or {}).get("lastTransitionTime")) or twin.clock.now()
        left = done + ttl - twin.clock.now()
        if left > 0:
            twin.schedule(left, self.name, (job["metadata"]["namespace"], job["metadata"]["name"]))
        else:
            operations.delete(twin, twin.resource("jobs"), job["metadata"]["namespace"], job["metadata"]["name"],
                              {"propagationPolicy": "Background"})

    def _write(self, twin, job, pods, status) -> None:
        """Store the pod counts and the rest of the status when it changed."""
        if twin.get("jobs", job["metadata"]["namespace"], job["metadata"]["name"]) is not job:
            return  # deleted meanwhile (TTL)
        live = [p for p in pods if phase(p) not in TERMINAL]
        status["active"] = sum(1 for p in live if not p["metadata"].get("deletionTimestamp"))
        status["ready"] = sum(1 for p in live if is_ready(p))
        status["terminating"] = sum(1 for p in live if p["metadata"].get("deletionTimestamp"))
        status["uncountedTerminatedPods"] = {}
        set_status(twin, "jobs", job, status, keep=("ready", "terminating"))
