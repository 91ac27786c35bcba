"""Waits as kubectl does them (`rollout status`, deletion), watching in short slices on the cluster's clock."""

from __future__ import annotations

import time

from kubernetes import client, watch

WATCH_SLICE = 1  # seconds per watch request while waiting; bounds how far a manual-time twin is pulled forward


class Waits:
    """The waits `Kube` offers; they use its `listing`, `api`, `now` and `api_client`."""

    def wait_rollout(self, namespace: str, name: str, timeout: float = 180.0) -> None:
        """Block until a Deployment's rollout has finished (what `kubectl rollout status` waits for).

        The timeout counts on the cluster's clock (a twin's simulated one) and on the wall clock, whichever ends
        first, so a rollout that can never finish fails fast on a manual-time twin too.
        """
        deadline, cluster_deadline = time.monotonic() + timeout, self.now() + timeout
        fields = f"metadata.name={name}"
        while time.monotonic() < deadline and self.now() < cluster_deadline:
            listing = self.listing("deployments", namespace, field_selector=fields)
            if any(rolled_out(d) for d in listing["items"]):
                return
            w = watch.Watch()
            for event in w.stream(self.api("apps").list_namespaced_deployment, namespace, field_selector=fields,
                                  resource_version=listing["metadata"]["resourceVersion"], timeout_seconds=WATCH_SLICE):
                if rolled_out(event["raw_object"]):
                    w.stop()
                    return
        raise TimeoutError(f"deployment {namespace}/{name} did not finish rolling out within {timeout}s; "
                           f"check it with `kubectl rollout status deployment/{name} -n {namespace}`")

    def wait_namespace_gone(self, name: str, timeout: float = 180.0) -> None:
        """Block until a namespace no longer exists, watching in short slices (raise TimeoutError after timeout).

        A twin in manual time only moves its clock for a watch while the caller grants a simulated-time budget
        (`twin.sim_deadline`); short slices keep the time a watch pulls forward close to what deletion needs.
        """
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            listing = self.listing("namespaces", field_selector=f"metadata.name={name}")
            if not listing["items"]:
                return
            if self._watch_until_deleted(name, listing["metadata"]["resourceVersion"]):
                return
        raise TimeoutError(f"namespace {name} still exists after {timeout}s; check its finalizers with "
                           f"`kubectl get ns {name} -o yaml` (a manual-time twin needs a simulated-time budget)")

    def _watch_until_deleted(self, name: str, rv: str) -> bool:
        """Watch one whole slice from rv; return whether the namespace's DELETED event arrived.

        The slice is read to its end rather than left at the event: a manual-time twin finishes moving its clock
        for the slice first, so what happens next does not race it (same seed, same timeline). The slice runs on
        its own connection, closed afterwards, so no later request reuses a connection the server ends with it.
        """
        deleted = False
        with client.ApiClient(self.api_client.configuration) as api:
            events = watch.Watch().stream(client.CoreV1Api(api).list_namespace, field_selector=f"metadata.name={name}",
                                          resource_version=rv, timeout_seconds=WATCH_SLICE)
            for event in events:
                deleted = deleted or event["type"] == "DELETED"
        return deleted


def rolled_out(deployment: dict) -> bool:
    """Tell whether a Deployment's status shows a finished rollout.

    Example:
        >>> rolled_out({"metadata": {"generation": 2}, "spec": {"replicas": 1}, "status": {"observedGeneration": 2,
        ...     "updatedReplicas": 1, "availableReplicas": 1, "replicas": 1}})
        True
    """
    spec, status = deployment.get("spec") or {}, deployment.get("status") or {}
    want = spec.get("replicas", 1)
    return (status.get("observedGeneration", 0) >= deployment["metadata"].get("generation", 1)
            and status.get("updatedReplicas", 0) == want and status.get("availableReplicas", 0) == want
            and status.get("replicas", 0) == want)
