"""AIOpsLab's wrk2 workload as Kubernetes objects: a ConfigMap with the script and the `wrk2-job` Job in `default`."""

from __future__ import annotations

from pathlib import Path

from aoi.kube import Kube, tolerate
from aoi.problems.model import Workload

NAMESPACE, JOB, SCRIPTS = "default", "wrk2-job", "wrk2-payload-script"


def job_manifest(workload: Workload, cluster_ip: str) -> dict:
    """Return the wrk2 Job aimed at the workload's Service (by its ClusterIP), as AIOpsLab's Wrk creates it.

    Example:
        >>> from aoi.problems import make
        >>> job = job_manifest(make("wrong_bin_usage-detection-1").workload, "10.96.0.9")
        >>> job["metadata"]["name"], job["spec"]["template"]["spec"]["containers"][0]["args"][0]
        ('wrk2-job', 'wrk')
    """
    w = workload
    args = ["wrk", "-D", w.dist, "-t", str(w.threads), "-c", str(w.connections), "-d", f"{w.duration}s", "-L",
            "-s", f"/scripts/{Path(w.script).name}", w.url(cluster_ip), "-R", str(w.rate), "--latency"]
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": JOB, "namespace": NAMESPACE},
            "spec": {"backoffLimit": 0, "template": {"spec": {"restartPolicy": "Never", "containers": [
                {"name": "wrk2", "image": "deathstarbench/wrk2-client:latest", "args": args,
                 "volumeMounts": [{"name": "wrk2-scripts", "mountPath": "/scripts"}]}],
                "volumes": [{"name": "wrk2-scripts", "configMap": {"name": SCRIPTS}}]}}}}


def start_workload(kube: Kube, namespace: str, workload: Workload) -> None:
    """Create the script ConfigMap and the wrk2 Job in `default`."""
    svc = kube.get("services", namespace, workload.service)
    name = Path(workload.script).name
    cm = {"metadata": {"name": SCRIPTS, "namespace": NAMESPACE},
          "data": {name: f"-- {name}: the workload's request mix\n"}}
    kube.create("configmaps", NAMESPACE, cm)
    kube.create("jobs", NAMESPACE, job_manifest(workload, svc["spec"]["clusterIP"]))


def stop_workload(kube: Kube) -> None:
    """Delete the wrk2 Job (with its pods) and its ConfigMap; absent ones are fine."""
    with tolerate(404):
        kube.delete("jobs", NAMESPACE, JOB, propagation_policy="Background")
    with tolerate(404):
        kube.delete("configmaps", NAMESPACE, SCRIPTS)
