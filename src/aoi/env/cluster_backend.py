"""The cluster backend: a user's own Kubernetes cluster, apps already deployed, faults injected through the API.

Given an admin kubeconfig, each episode checks the app's namespace, mints tokens for AOI's probe and executor service
accounts (applied beforehand with `aoi rbac`), checks them with `kubectl auth can-i`, injects the fault with AOI's
injectors and starts AIOpsLab's wrk2 workload. Actions run the real kubectl with the acting role's kubeconfig.
Time is the wall clock: steps take real time, so nothing is ticked; mitigation is judged after pods settle. Closing
the episode recovers the fault.
"""

from __future__ import annotations

import time
import warnings
from datetime import datetime
from pathlib import Path

from aoi.env import observability, telemetry
from aoi.env.cluster_access import ClusterError, KubectlAs, admin_client, check_namespace, role_kubeconfigs, verify
from aoi.env.roles import credential
from aoi.env.scenario import inject, is_scenario, recover
from aoi.env.workload import start_workload, stop_workload
from aoi.faults import get as get_injector
from aoi.kube import tolerate
from aoi.problems.model import Problem

AFTER_INJECT = 6.0  # AIOpsLab's injector base sleeps this long after each injection
SETTLE_LIMIT = 120.0  # wall seconds allowed for pods to become ready before mitigation is judged
POLL = 2.0
# recover() options taken from the problem's healthy state (the inject options' `value` is the faulty one)
RECOVER_FROM = {"target_port": {"original": "original_target_port"}, "scale_zero": {"replicas": "original_replicas"},
                "missing_node": {"original": "original_node_selector"}, "image": {"value": "original_image"},
                "command": {"value": "original_command"}}
NOT_CONFIGURED = ("Error: {what} is not available: this cluster backend has no {server} URL configured. Set "
                  "env.{option} (or --{flag}) to its HTTP address, e.g. {example}.")


class ClusterBackend:
    """Run one problem on a user's cluster.

    Example:
        >>> env = make("wrong_bin_usage-mitigation-1", backend="cluster", kubeconfig="admin.yaml")  # doctest: +SKIP
        >>> observation, info = env.reset()  # doctest: +SKIP
    """

    name = "cluster"

    def __init__(self, workdir: Path, kubeconfig: str | Path | None = None,
                 prometheus_url: str | None = None, jaeger_url: str | None = None,
                 settle_limit: float = SETTLE_LIMIT, after_inject: float = AFTER_INJECT, workload: bool = True):
        if kubeconfig is None:
            raise ValueError("backend 'cluster' needs kubeconfig=PATH (--kubeconfig): the cluster's admin kubeconfig")
        self.kubeconfig = Path(kubeconfig).expanduser()
        if not self.kubeconfig.is_file():
            raise ValueError(f"kubeconfig {self.kubeconfig} does not exist; pass the admin kubeconfig of your cluster")
        self.workdir = workdir
        self.prometheus_url, self.jaeger_url = prometheus_url, jaeger_url
        self.settle_limit, self.after_inject, self.workload = settle_limit, after_inject, workload
        self.kube, self.problem, self.injected = None, None, None

    # --- lifecycle ---
    def start(self, problem: Problem, seed: int) -> None:
        """Check the cluster and identities, inject the fault and start the workload (a real cluster has no seed)."""
        self.close()
        self.kube, self.problem = admin_client(self.kubeconfig), problem
        check_namespace(self.kube, problem.namespace, problem.app)
        self.kubeconfigs = role_kubeconfigs(self.kube, self.kubeconfig, self.workdir / "kubeconfigs", problem.namespace)
        cache = self.workdir / "kubecache"
        self.runners = {role: KubectlAs(path, cache) for role, path in self.kubeconfigs.items()}
        verify(self.runners, problem.namespace)
        self._inject(problem)
        if self.workload and problem.workload is not None:
            stop_workload(self.kube)
            with tolerate(409):  # a Job from an earlier episode still being deleted: its load is the same
                start_workload(self.kube, problem.namespace, problem.workload)

    def _inject(self, problem: Problem) -> None:
        """Inject the problem's fault with AOI's injector, then wait as AIOpsLab does."""
        fault = problem.fault
        try:
            inject(problem, self.kube, self.runner(None))  # an injector, or a scenario's operations
        except Exception as exc:
            raise ClusterError(f"injecting {fault.mechanism} into {fault.namespace}/{fault.target} failed ({exc}); "
                               f"check that {problem.app} is deployed as in its manifests") from exc
        self.injected = problem
        time.sleep(self.after_inject)

    def close(self) -> None:
        """Recover the injected fault and stop the workload (a failure is warned about, never hidden)."""
        if self.injected is not None and is_scenario(self.injected):
            self._recover_scenario()
        if self.injected is not None:
            fault, self.injected = self.injected.fault, None
            try:
                injector = get_injector(fault.mechanism)
                injector.recover(self.kube, fault.namespace, fault.target, **recover_options(fault))
            except Exception as exc:  # noqa: BLE001 - closing must go on; the user must still hear about it
                warnings.warn(f"recovering {fault.mechanism} in {fault.namespace}/{fault.target} failed ({exc}); "
                              "undo it by hand or re-apply the app's manifests", RuntimeWarning, stacklevel=2)
        if self.kube is not None and self.workload:
            stop_workload(self.kube)
        if self.kube is not None:
            self.kube.close()  # the episode's client: a later start opens a new one

    def _recover_scenario(self) -> None:
        """Undo a scenario's fault by running its solution commands as admin (failures are warned about)."""
        problem, self.injected = self.injected, None
        failed = recover(problem, self)
        if failed:
            warnings.warn(f"recovering {problem.id} by its solution commands failed ({'; '.join(failed)}); undo it "
                          "by hand or re-apply the app's manifests", RuntimeWarning, stacklevel=3)

    # --- time ---
    def now(self) -> float:
        """Return the wall clock (a real cluster's time)."""
        return time.time()

    def tick(self, seconds: float) -> None:
        """Do nothing: on a real cluster every step already takes real time."""

    def wait(self, seconds: float) -> None:
        """Wait while a verdict polls (AIOpsLab's sleeps take real time on a real cluster)."""
        time.sleep(seconds)

    def settle(self) -> None:
        """Wait (bounded) until every Deployment of the app's namespace has rolled out and every running pod is Ready,
        as AIOpsLab does before judging. Pods alone are not enough: just after a fix is patched in, the controller
        may not have started the new pods yet, and the old ones are still Ready."""
        deadline = time.monotonic() + self.settle_limit
        namespace = self.problem.namespace
        while time.monotonic() < deadline:
            pods = [p for p in self.kube.list("pods", namespace)
                    if p.get("status", {}).get("phase") not in ("Succeeded", "Failed")]
            if all(_ready(p) for p in pods) and all(_rolled_out(d) for d in self.kube.list("deployments", namespace)):
                return
            time.sleep(POLL)

    # --- actions ---
    def runner(self, role: str | None) -> KubectlAs:
        """Return the kubectl runner of the identity a role acts as."""
        return self.runners[credential(role)]

    def get_metrics(self, namespace: str, duration: int = 5) -> str:
        """Export the last `duration` minutes of container metrics from Prometheus as CSV files."""
        if not self.prometheus_url:
            return NOT_CONFIGURED.format(what="get_metrics", server="Prometheus", option="prometheus_url",
                                         flag="prometheus-url", example="http://localhost:32000")
        folder = self.workdir / "metrics_output" / f"metric_{datetime.now().strftime('%Y%m%d_%H%M%S')}"
        pods = {p["metadata"]["name"] for p in self.kube.list("pods", namespace)}
        try:
            observability.export_metrics(self.prometheus_url, namespace, pods, self.now() - duration * 60,
                                         self.now(), folder)
        except observability.TelemetryError as exc:
            return str(exc)
        return telemetry.metrics_message(folder)

    def get_traces(self, namespace: str, duration: int = 5) -> str:
        """Export the last `duration` minutes of traces from Jaeger as one CSV file."""
        if not self.jaeger_url:
            return NOT_CONFIGURED.format(what="get_traces", server="Jaeger", option="jaeger_url", flag="jaeger-url",
                                         example="http://localhost:16686")
        path = self.workdir / "trace_output" / f"traces_{int(self.now())}.csv"
        try:
            observability.export_traces(self.jaeger_url, self.now() - duration * 60, self.now(), path)
        except observability.TelemetryError as exc:
            return str(exc)
        return telemetry.traces_message(path)

    def admin_kubeconfig(self) -> Path:
        """Return the admin kubeconfig (oracles read the cluster with it)."""
        return self.kubeconfig


def recover_options(fault) -> dict:
    """Return the options that undo a fault: its inject options minus the faulty value, plus the healthy originals.

    Example:
        >>> from aoi.problems import make
        >>> recover_options(make("wrong_bin_usage-detection-1").fault)
        {'container': 'hotel-reserv-profile', 'value': ['profile']}
    """
    options = {k: v for k, v in fault.params.items() if k != "value"}
    wanted = RECOVER_FROM.get(fault.mechanism, {})
    return options | {arg: fault.expect[key] for arg, key in wanted.items() if key in fault.expect}


def _rolled_out(deployment: dict) -> bool:
    """Tell whether a Deployment's controller saw its latest spec and every replica it wants is updated and available
    with no old one left (what `kubectl rollout status` waits for).

    Example:
        >>> spec = {"metadata": {"generation": 2}, "spec": {"replicas": 1}}
        >>> _rolled_out({**spec, "status": {"observedGeneration": 1, "updatedReplicas": 1, "availableReplicas": 1,
        ...                                 "replicas": 1}})
        False
        >>> _rolled_out({**spec, "status": {"observedGeneration": 2, "updatedReplicas": 1, "availableReplicas": 1,
        ...                                 "replicas": 1}})
        True
    """
    status, want = deployment.get("status") or {}, deployment["spec"].get("replicas", 1)
    return (status.get("observedGeneration", 0) >= deployment["metadata"].get("generation", 1)
            and status.get("updatedReplicas", 0) == status.get("availableReplicas", 0) == want
            and status.get("replicas", 0) == want)


def _ready(pod: dict) -> bool:
    """Tell whether a pod's Ready condition is True."""
    conditions = pod.get("status", {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)
