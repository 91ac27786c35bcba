"""CronJob controller: create Jobs on a cron schedule (UTC), track active ones, keep the history limits."""

from __future__ import annotations

import copy

from aoi.twin.controllers.base import Controller, controller_ref, owned, owner_keys
from aoi.twin.controllers.job import finished
from aoi.twin.core import operations
from aoi.twin.core.clock import parse_time, rfc3339
from aoi.twin.core.cron import next_run

COMPONENT = "cronjob-controller"
SCHEDULED_AT = "batch.kubernetes.io/cronjob-scheduled-timestamp"
class CronJobController(Controller):
    """Create a Job <cronjob>-<scheduled minute> at each scheduled time."""

    name = "cronjob"
    watches = ("cronjobs", "jobs")

    def __init__(self):
        self._wake_at: dict = {}  # cronjob key -> the time of its pending wake-up

    def keys_for(self, twin, kind, res, obj):
        if res.kind == "Job":
            return owner_keys(obj, "CronJob")
        return super().keys_for(twin, kind, res, obj)

    def reconcile(self, twin, key):
        cj = twin.get("cronjobs", *key)
        if cj is None or cj["metadata"].get("deletionTimestamp"):
            return
        status = copy.deepcopy(cj.get("status") or {})
        jobs = owned(twin, "jobs", cj)
        self._track(twin, cj, jobs, status)
        due = self._due(twin, cj, status)
        if due is not None and not cj["spec"].get("suspend"):
            self._start(twin, cj, jobs, status, due)
        self._prune(twin, cj, owned(twin, "jobs", cj))
        if status != (cj.get("status") or {}):
            cj["status"] = {k: v for k, v in status.items() if v not in (None, [])}
            twin.update("cronjobs", cj)

    def _track(self, twin, cj, jobs, status) -> None:
        """Drop finished or vanished jobs from status.active; remember the last success."""
        by_uid = {j["metadata"]["uid"]: j for j in jobs}
        for ref in list(status.get("active") or []):
            job = by_uid.get(ref.get("uid"))
            if job is None or finished(job):
                status["active"].remove(ref)
            if job is not None and finished(job):
                twin.record(cj, "Normal", "SawCompletedJob", f"Saw completed job: {job['metadata']['name']}, "
                            f"status: {finished(job)}", COMPONENT)
        done = [j["status"]["completionTime"] for j in jobs
                if finished(j) == "Complete" and j["status"].get("completionTime")]
        if done:
            status["lastSuccessfulTime"] = max(done + [status.get("lastSuccessfulTime") or ""])

    def _due(self, twin, cj, status) -> float | None:
        """Return the latest missed schedule time to run now (None if none), and wake up for the next one."""
        now, schedule = twin.clock.now(), cj["spec"]["schedule"]
        t = parse_time(status.get("lastScheduleTime")) or parse_time(cj["metadata"]["creationTimestamp"])
        due = None
        for _ in range(100):  # like the real controller, look at no more than 100 missed times
            nxt = next_run(schedule, t)
            if nxt > now:
                key = (cj["metadata"]["namespace"], cj["metadata"]["name"])
                if self._wake_at.get(key) != nxt and nxt != float("inf"):
                    self._wake_at[key] = nxt
                    twin.schedule(nxt - now, self.name, key)
                break
            due = t = nxt
        deadline = cj["spec"].get("startingDeadlineSeconds")
        return None if due is not None and deadline is not None and now - due > deadline else due

    def _start(self, twin, cj, jobs, status, due: float) -> None:
        """Create the Job for a scheduled time, honouring the concurrency policy."""
        active = [j for j in jobs if not finished(j)]
        policy = cj["spec"].get("concurrencyPolicy", "Allow")
        if active and policy == "Forbid":
            return
        if policy == "Replace":
            for job in active:
                self._delete(twin, cj, job)
            status["active"] = []
        body = self._job(cj, due)
        if twin.get("jobs", cj["metadata"]["namespace"], body["metadata"]["name"]) is not None:
            status["lastScheduleTime"] = rfc3339(due)  # started already (its status was lost), or not ours: skip
            return
        job = operations.create(twin, twin.resource("jobs"), cj["metadata"]["namespace"], body)
        twin.record(cj, "Normal", "SuccessfulCreate", f"Created job {job['metadata']['name']}", COMPONENT)
        status.setdefault("active", []).append({
            "kind": "Job", "namespace": job["metadata"]["namespace"], "name": job["metadata"]["name"],
            "uid": job["metadata"]["uid"], "apiVersion": "batch/v1",
            "resourceVersion": job["metadata"]["resourceVersion"]})
        status["lastScheduleTime"] = rfc3339(due)

    def _job(self, cj, due: float) -> dict:
        """Build the Job for one scheduled time from the jobTemplate."""
        tmpl = copy.deepcopy(cj["spec"]["jobTemplate"])
        meta = tmpl.get("metadata") or {}
        annotations = {**(meta.get("annotations") or {}), SCHEDULED_AT: rfc3339(due)}
        return {"apiVersion": "batch/v1", "kind": "Job", "spec": tmpl.get("spec") or {},
                "metadata": {"name": f"{cj['metadata']['name']}-{int(due // 60)}", "labels": meta.get("labels") or {},
                             "annotations": annotations, "ownerReferences": [controller_ref(cj)]}}

    def _prune(self, twin, cj, jobs) -> None:
        """Delete the oldest finished jobs beyond the successful and failed history limits."""
        for outcome, limit in (("Complete", cj["spec"].get("successfulJobsHistoryLimit", 3)),
                               ("Failed", cj["spec"].get("failedJobsHistoryLimit", 1))):
            done = sorted((j for j in jobs if finished(j) == outcome),
                          key=lambda j: (j["metadata"].get("creationTimestamp", ""), j["metadata"]["name"]))
            for job in done[:max(len(done) - limit, 0)]:
                self._delete(twin, cj, job)

    def _delete(self, twin, cj, job) -> None:
        """Delete one job (and, through garbage collection, its pods) and record SuccessfulDelete."""
        operations.delete(twin, twin.resource("jobs"), job["metadata"]["namespace"], job["metadata"]["name"],
                          {"propagationPolicy": "Background"})
        twin.record(cj, "Normal", "SuccessfulDelete", f"Deleted job {job['metadata']['name']}", COMPONENT)
