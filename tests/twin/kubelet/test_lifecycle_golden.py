"""Golden tests (kwok style) of the kubelet's lifecycles: what a user sees of one pod over simulated time.

Each lifecycle applies a few objects with the real kubectl to a fresh platform-only twin, then at fixed simulated
times (seconds after the apply) records the pods' phase, conditions, container states, restart counts, kubectl's
STATUS line and the events that appeared since the previous sample. The record must equal
`golden/<lifecycle>.yaml`; after an intended behaviour change, rewrite the files with `pytest --update-golden`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

from aoi.twin import build_twin
from aoi.twin.testing import Served

NS = "lifecycle"
GOLDEN = Path(__file__).parent / "golden"


def pod(name: str = "app", image: str = "nginx:1.27", command: list[str] | None = None, **spec) -> dict:
    """Return a bare Pod manifest with one container named `main`."""
    main = {"name": "main", "image": image, **({"command": command} if command else {})}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NS, "labels": {"app": name}},
            "spec": {"containers": [main], **spec}}


def held(obj: dict) -> dict:
    """Return the object with a finalizer, so the API keeps it after deletion until the finalizer is removed."""
    obj["metadata"]["finalizers"] = ["example.com/hold"]
    return obj


def job(name: str, command: list[str], backoff_limit: int = 6) -> dict:
    """Return a Job manifest whose one busybox container runs `command` (restartPolicy Never)."""
    template = {"spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox:1.36",
                                                                    "command": command}]}}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "namespace": NS},
            "spec": {"backoffLimit": backoff_limit, "template": template}}


def pod_chaos(action: str, duration: str, **spec) -> dict:
    """Return a Chaos Mesh PodChaos aimed at the pod labelled app=app."""
    return {"apiVersion": "chaos-mesh.org/v1alpha1", "kind": "PodChaos", "metadata": {"name": action, "namespace": NS},
            "spec": {"action": action, "mode": "one", "duration": duration,
                     "selector": {"namespaces": [NS], "labelSelectors": {"app": "app"}}, **spec}}


def sh(script: str) -> list[str]:
    """Return a busybox `sh -c` command."""
    return ["sh", "-c", script]


@dataclass
class Lifecycle:
    """Objects applied at time 0, kubectl commands run at later times, and the times the state is sampled."""

    objects: list[dict]
    times: tuple[float, ...]
    actions: dict[float, list] = field(default_factory=dict)  # time -> [argv or (argv, stdin objects)], run in NS


CRASH_TIMES = (0, 1, 3, 5, 6, 16, 17, 37, 38, 78, 80, 160, 240, 400, 700, 1000)
DELETE = ["delete", "pod", "app", "--wait=false"]  # kubectl would otherwise wait, pulling simulated time forward
UNHOLD = ["patch", "pod", "app", "--type=json", "-p", '[{"op": "remove", "path": "/metadata/finalizers"}]']
LIFECYCLES = {
    "running_ready": Lifecycle([pod()], (0, 1, 2, 3, 4, 5, 10)),
    "image_pull_backoff": Lifecycle([pod(image="registry.example.com/team/missing:1.0")],
                                    (0, 1, 3, 5, 6, 15, 17, 30, 40, 60, 80, 120, 200, 400, 800)),
    "crash_loop_backoff": Lifecycle([pod(image="busybox:1.36", command=sh("echo starting; exit 3"))], CRASH_TIMES),
    "restart_on_failure_exit_zero": Lifecycle(
        [pod(image="busybox:1.36", command=sh("echo done"), restartPolicy="OnFailure")], (0, 3, 5, 6, 10, 30)),
    "init_containers": Lifecycle(
        [pod(initContainers=[{"name": "setup", "image": "busybox:1.36", "command": sh("sleep 5")}])],
        (0, 1, 3, 5, 8, 9, 10, 12, 15)),
    "init_container_crash": Lifecycle(
        [pod(initContainers=[{"name": "setup", "image": "busybox:1.36", "command": sh("exit 1")}])], CRASH_TIMES),
    "job_completed": Lifecycle([job("once", sh("echo done"))], (0, 1, 3, 5, 6, 8, 10, 15)),
    "job_backoff_limit": Lifecycle([job("fails", sh("echo broken; exit 2"), backoff_limit=1)],
                                   (0, 3, 5, 6, 10, 15, 20, 30, 40, 60)),
    "deletion_terminating": Lifecycle([pod()], (0, 10, 10.5, 11, 11.5, 12), {10: [DELETE]}),
    "deletion_with_finalizer": Lifecycle([held(pod())], (0, 10, 11, 12, 20, 21), {10: [DELETE], 20: [UNHOLD]}),
    "unschedulable": Lifecycle([pod(nodeSelector={"disktype": "ssd"})], (0, 1, 10, 60, 300)),
    "image_changed": Lifecycle([pod()], (0, 10, 10.5, 11, 12, 14, 20),
                               {10: [["set", "image", "pod/app", "main=nginx:1.28"]]}),
    "chaos_pod_failure_unready": Lifecycle([pod()], (0, 10, 11, 12, 15, 30, 40, 41, 45, 60),
                                           {10: [(["apply", "-f", "-"], [pod_chaos("pod-failure", "30s")])]}),
    "chaos_container_kill": Lifecycle([pod()], (0, 10, 10.5, 11, 12, 15, 30),
                                      {10: [(["apply", "-f", "-"], [pod_chaos("container-kill", "60s",
                                                                              containerNames=["main"])])]}),
}


def manifest(objects: list[dict]) -> bytes:
    """Return objects as one multi-document YAML stream for `kubectl apply -f -`."""
    return yaml.safe_dump_all(objects, sort_keys=False).encode()


def container_view(status: dict) -> dict:
    """Return what matters of one container status: state, reason, readiness, restarts, last exit."""
    [(state, detail)] = status["state"].items()
    view = {"state": state, "reason": detail.get("reason"), "ready": status["ready"],
            "restartCount": status["restartCount"]}
    if state == "terminated":
        view["exitCode"] = detail["exitCode"]
    last = status.get("lastState", {}).get("terminated")
    if last:
        view["lastExit"] = f"{last['exitCode']} {last['reason']}"
    return {k: v for k, v in view.items() if v is not None}


def pod_view(obj: dict, now: float) -> dict:
    """Return a pod's phase, conditions, container views and deletion state."""
    status = obj.get("status") or {}
    view = {"phase": status.get("phase"),
            "conditions": " ".join(f"{c['type']}={c['status']}" + (f"({c['reason']})" if c.get("reason") else "")
                                   for c in status.get("conditions") or [])}
    for key in ("initContainerStatuses", "containerStatuses"):
        if status.get(key):
            view[key] = {s["name"]: container_view(s) for s in status[key]}
    if obj["metadata"].get("deletionTimestamp"):
        view["deleting"] = True
    return view


def job_view(obj: dict) -> dict:
    """Return a Job's counters and true conditions."""
    status = obj.get("status") or {}
    true = [c["type"] + (f" {c['reason']}" if c.get("reason") else "") for c in status.get("conditions") or []
            if c["status"] == "True"]
    return {"active": status.get("active", 0), "succeeded": status.get("succeeded", 0),
            "failed": status.get("failed", 0), "conditions": true}


def new_events(twin, seen: dict) -> list[str]:
    """Return the events that appeared or repeated since the last call, as `Type Reason object (xN)`."""
    out = []
    for event in sorted(twin.list("events", NS), key=lambda e: (e.get("lastTimestamp") or "", e["metadata"]["name"])):
        name, count = event["metadata"]["name"], event.get("count", 1)
        if seen.get(name) != count:
            seen[name] = count
            obj = event["involvedObject"]
            out.append(f"{event['type']} {event['reason']} {obj['kind'].lower()}/{obj['name']} (x{count})")
    return out


def sample(served: Served, t: float, seen: dict) -> dict:
    """Return the record of one moment: kubectl's pod lines, each pod's and Job's state, new events."""
    twin = served.twin
    lines = served.ok(f"get pods -n {NS} --no-headers").splitlines()
    record = {"t": t, "kubectl": [" ".join(line.split()) for line in lines]}
    record["pods"] = {p["metadata"]["name"]: pod_view(p, twin.clock.now()) for p in twin.list("pods", NS)}
    jobs = twin.list("jobs", NS)
    if jobs:
        record["jobs"] = {j["metadata"]["name"]: job_view(j) for j in jobs}
    record["events"] = new_events(twin, seen)
    return record


def play(served: Served, lifecycle: Lifecycle) -> list[dict]:
    """Apply the objects, then step the simulated clock through the sample times and record each."""
    served.ok(f"create namespace {NS}")
    served.twin.advance(1.0)  # the namespace's service account exists before pods are admitted
    served.ok(["apply", "-f", "-"], stdin=manifest(lifecycle.objects))
    start, seen, records = served.twin.clock.now(), {}, []
    for t in lifecycle.times:
        served.twin.advance_to(start + t)
        for action in lifecycle.actions.get(t, []):
            argv, objects = action if isinstance(action, tuple) else (action, None)
            served.ok([*argv, "-n", NS], stdin=manifest(objects) if objects else None)
        records.append(sample(served, t, seen))
    return records


def render(name: str, records: list[dict]) -> str:
    """Return the golden text of one lifecycle."""
    head = f"# kubelet lifecycle `{name}`: t is simulated seconds after `kubectl apply` (tests/twin/kubelet)\n"
    return head + yaml.safe_dump(records, sort_keys=False, width=200, default_flow_style=None)


@pytest.mark.parametrize("name", sorted(LIFECYCLES))
def test_lifecycle_matches_golden(name, tmp_path, golden):
    served = Served(build_twin([], seed=0), tmp_path)
    try:
        records = play(served, LIFECYCLES[name])
    finally:
        served.close()
    golden(GOLDEN / f"{name}.yaml", render(name, records))


def test_golden_files_match_the_lifecycles():
    """Every golden file belongs to a lifecycle (a renamed lifecycle leaves no stale file behind)."""
    assert sorted(p.stem for p in GOLDEN.glob("*.yaml")) == sorted(LIFECYCLES)
