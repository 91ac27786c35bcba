"""CronJob controller: create Jobs on a cron schedule (UTC), track active ones, keep the history limits."""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta

from aoi.twin.controllers.base import Controller, controller_ref, owned, owner_keys
from aoi.twin.controllers.job import finished
from aoi.twin.core import operations
from aoi.twin.core.clock import parse_time, rfc3339

COMPONENT = "cronjob-controller"
SCHEDULED_AT = "batch.kubernetes.io/cronjob-scheduled-timestamp"
MACROS = {"@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *", "@weekly": "0 0 * * 0",
          "@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@hourly": "0 * * * *"}
RANGES = ((0, 59), (0, 23), (1, 31), (1, 12), (0, 7))  # minute, hour, day of month, month, day of week (7 = 0)


def parse_field(text: str, low: int, high: int) -> set[int]:
    """Expand one cron field ('*', '*/N', 'a', 'a-b', 'a/N', 'a-b/N', lists of these) into its values.

    Example:
        >>> sorted(parse_field("*/20,5", 0, 59))
        [0, 5, 20, 40]
    """
    values: set[int] = set()
    for part in text.replace("?", "*").split(","):
        span, _, step = part.partition("/")
        start, _, end = span.partition("-")
        first, last = (low, high) if span == "*" else (int(start), int(end or start))
        if step and not end and span != "*":
            last = high
        values.update(range(first, last + 1, int(step or 1)))
    if not values or min(values) < low or max(values) > high:
        raise ValueError(f"cron field {text!r} is outside {low}-{high}; use values, ranges, lists or */N")
    return values


def parse_schedule(schedule: str) -> tuple[list[set[int]], bool]:
    """Parse a five-field cron schedule (or a macro such as @hourly) into value sets.

    Also return whether day-of-month and day-of-week are both restricted (then either may match, as in cron).
    """
    fields = MACROS.get(schedule.strip(), schedule).split()
    if len(fields) != 5:
        raise ValueError(f"cron schedule {schedule!r} needs 5 fields: minute hour day-of-month month day-of-week")
    sets = [parse_field(f, lo, hi) for f, (lo, hi) in zip(fields, RANGES)]
    sets[4] = {d % 7 for d in sets[4]}
    return sets, not fields[2].startswith(("*", "?")) and not fields[4].startswith(("*", "?"))


def next_run(schedule: str, after: float) -> float:
    """Return the first scheduled minute strictly after `after` (epoch seconds, UTC).

    Example:
        >>> next_run("*/15 * * * *", 60.0)
        900.0
    """
    (minutes, hours, days, months, weekdays), either = parse_schedule(schedule)
    t = datetime.fromtimestamp(after // 60 * 60, tz=UTC) + timedelta(minutes=1)
    for _ in range(366 * 5):  # days; a schedule that never fires (Feb 30) gives up
        dom, dow = t.day in days, (t.weekday() + 1) % 7 in weekdays
        if t.month in months and ((dom or dow) if either else (dom and dow)):
            for hour in sorted(h for h in hours if h >= t.hour):
                minute = min((m for m in minutes if m >= (t.minute if hour == t.hour else 0)), default=None)
                if minute is not None:
                    return t.replace(hour=hour, minute=minute).timestamp()
        t = (t + timedelta(days=1)).replace(hour=0, minute=0)
    return float("inf")


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
            job = by_uid.get(ref["uid"])
            if job is None or finished(job):
                status["active"].remove(ref)
            if job is not None and finished(job):
                twin.record(cj, "Normal", "SawCompletedJob", f"Saw completed job: {job['metadata']['name']}, "
                            f"status: {finished(job)}", COMPONENT)
        done = [j["status"]["completionTime"] for j in jobs if finished(j) == "Complete"]
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
        job = operations.create(twin, twin.resource("jobs"), cj["metadata"]["namespace"], self._job(cj, due))
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
