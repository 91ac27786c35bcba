"""The kubelet: pod sandboxes, image pulls, container starts, crash loops, readiness and termination."""

from __future__ import annotations

from dataclasses import dataclass, field

from aoi.twin.controllers.base import Controller
from aoi.twin.core.ids import fnv32a
from aoi.twin.kubelet.runtime import LogStore, image_size
from aoi.twin.kubelet.status import node_ip, render_status

SANDBOX_SECONDS = 1.0
MAX_BACKOFF = 300.0
STOP_SECONDS = 1.0


@dataclass
class CState:
    """One container's lifecycle as the kubelet tracks it."""

    name: str
    init: bool = False
    image: str = ""
    phase: str = "waiting"  # waiting | pulling | running | exited | backoff | done
    due: float | None = None
    reason: str = "ContainerCreating"
    message: str = ""
    restarts: int = 0
    started_at: float | None = None
    ready_at: float | None = None
    exit_at: float | None = None
    exit_code: int = 0
    exit_reason: str | None = None
    finished_at: float | None = None
    last: dict | None = None
    backoff: float = 0.0
    pull_backoff: float = 0.0
    container_id: str = ""
    ever_started: bool = False
    forced_unready: bool = False


@dataclass
class PodRun:
    """The kubelet's record of one pod on its node."""

    uid: str
    sandbox_at: float
    ip: str = ""
    containers: dict[str, CState] = field(default_factory=dict)
    remove_at: float | None = None


class Kubelet(Controller):
    """Run bound pods on their nodes (all nodes share one simulated kubelet)."""

    name = "kubelet"
    watches = ("pods",)

    def __init__(self):
        self.runs: dict[tuple[str, str], PodRun] = {}
        self.images: dict[str, set[str]] = {}  # node -> images present
        self.logs = LogStore()
        self._next: dict[tuple[str, str], float] = {}

    def keys_for(self, twin, kind, res, obj):
        return super().keys_for(twin, kind, res, obj) if obj["spec"].get("nodeName") else []

    # --- entry point ---
    def reconcile(self, twin, key):
        pod = twin.get("pods", *key)
        run = self.runs.get(key)
        if pod is None or (run and run.uid != pod["metadata"]["uid"]):
            if run:
                self.logs.drop_pod(run.uid)
                del self.runs[key]
            if pod is None:
                return
        if not pod["spec"].get("nodeName"):
            return
        now = twin.clock.now()
        run = self.runs.setdefault(key, PodRun(pod["metadata"]["uid"], now + SANDBOX_SECONDS))
        if pod["metadata"].get("deletionTimestamp"):
            if self._terminate(twin, pod, run, now):
                return
        elif now >= run.sandbox_at:
            self._ensure_sandbox(twin, pod, run)
            self._step_containers(twin, pod, run, now)
        self._publish(twin, pod, run, now)
        self._wake(twin, key, run)

    def _wake(self, twin, key, run: PodRun) -> None:
        """Schedule the next due transition of this pod (once)."""
        now = twin.clock.now()
        dues = [c.due for c in run.containers.values() if c.due is not None]
        dues += [c.ready_at for c in run.containers.values()
                 if c.phase == "running" and c.ready_at is not None and c.ready_at > now]
        sandbox = run.sandbox_at if not run.ip and run.remove_at is None else None
        dues += [t for t in (sandbox, run.remove_at) if t is not None and t > now]
        if not dues:
            return
        at = min(dues)
        if self._next.get(key) != at:
            self._next[key] = at
            twin.schedule(at - now, self.name, key)

    def _publish(self, twin, pod, run, now) -> None:
        """Write the rendered status when it changed."""
        status = render_status(twin, pod, run, now)
        if status != pod.get("status"):
            pod["status"] = status
            twin.update("pods", pod)

    # --- sandbox and container sequencing ---
    def _ensure_sandbox(self, twin, pod, run: PodRun) -> None:
        """Give the pod an IP and container records once its sandbox exists."""
        if run.ip:
            return
        node = twin.get("nodes", "", pod["spec"]["nodeName"])
        if node is None:  # bound to a node that does not exist: no kubelet runs it, it stays Pending
            return
        host_ip = node_ip(node)
        cidr = node["spec"].get("podCIDR", "10.244.0.0/24")
        run.ip = host_ip if pod["spec"].get("hostNetwork") else twin.ids.pod_ip(cidr)
        for c in pod["spec"].get("initContainers") or []:
            run.containers[c["name"]] = CState(c["name"], init=True, image=c.get("image", ""))
        for c in pod["spec"].get("containers") or []:
            run.containers[c["name"]] = CState(c["name"], image=c.get("image", ""))

    def _step_containers(self, twin, pod, run: PodRun, now: float) -> None:
        """Advance init containers in order, then all app containers."""
        specs = {c["name"]: c for c in (pod["spec"].get("initContainers") or []) + pod["spec"]["containers"]}
        for state in run.containers.values():
            if state.init:
                self._advance(twin, pod, run, state, specs[state.name], now)
                if state.phase != "done":
                    return
        for state in run.containers.values():
            if not state.init:
                self._advance(twin, pod, run, state, specs[state.name], now)

    def _advance(self, twin, pod, run, c: CState, spec: dict, now: float) -> None:
        """Perform every transition of one container that is due by now."""
        if c.phase == "waiting" and c.due is None and not c.ever_started:
            c.due = now
        if c.phase == "running" and spec.get("image") != c.image:
            self._definition_changed(twin, pod, c, spec, now)
        for _ in range(100):
            if c.due is None or c.due > now:
                return
            getattr(self, f"_on_{c.phase}")(twin, pod, run, c, spec, now)

    # --- transitions (each sets the next phase and due time) ---
    def _on_waiting(self, twin, pod, run, c, spec, now):
        """Pull the image (or use the cached one) before starting."""
        node = pod["spec"]["nodeName"]
        present = spec["image"] in self.images.setdefault(node, set())
        if present and spec.get("imagePullPolicy") != "Always":
            present = f'Container image "{spec["image"]}" already present on machine'
            self._event(twin, pod, c, "Normal", "Pulled", present)
            self._start(twin, pod, run, c, spec, now)
            return
        self._event(twin, pod, c, "Normal", "Pulling", f'Pulling image "{spec["image"]}"')
        c.phase, c.due = "pulling", now + pull_seconds(spec["image"], present)

    def _on_pulling(self, twin, pod, run, c, spec, now):
        """Finish a pull: start the container, or fail into ImagePullBackOff."""
        image = spec["image"]
        if twin.runtime.image_exists(image):
            took = pull_seconds(image, image in self.images[pod["spec"]["nodeName"]])
            self.images[pod["spec"]["nodeName"]].add(image)
            self._event(twin, pod, c, "Normal", "Pulled", f'Successfully pulled image "{image}" in {go_ms(took)} '
                        f"({go_ms(took)} including waiting). Image size: {image_size(image)} bytes.")
            c.pull_backoff = 0.0
            self._start(twin, pod, run, c, spec, now)
            return
        ref = normalize_ref(image)
        self._event(twin, pod, c, "Warning", "Failed", f'Failed to pull image "{image}": rpc error: code = NotFound '
                    f'desc = failed to pull and unpack image "{ref}": failed to resolve reference "{ref}": '
                    f'{ref}: not found')
        self._event(twin, pod, c, "Warning", "Failed", "Error: ErrImagePull")
        c.phase, c.reason, c.message = "pullfailed", "ErrImagePull", f'failed to pull and unpack image "{ref}"'
        c.pull_backoff = min(max(c.pull_backoff * 2, 10.0), MAX_BACKOFF)
        c.due = now + 1.0

    def _on_pullfailed(self, twin, pod, run, c, spec, now):
        """Enter ImagePullBackOff until the next pull attempt."""
        self._event(twin, pod, c, "Normal", "BackOff", f'Back-off pulling image "{spec["image"]}"')
        self._event(twin, pod, c, "Warning", "Failed", "Error: ImagePullBackOff")
        c.phase, c.reason = "pullbackoff", "ImagePullBackOff"
        c.message = f'Back-off pulling image "{spec["image"]}": ErrImagePull: failed to pull and unpack image'
        c.due = now + c.pull_backoff

    def _on_pullbackoff(self, twin, pod, run, c, spec, now):
        """Retry the pull after the back-off."""
        c.phase, c.due = "waiting", now

    def _start(self, twin, pod, run, c: CState, spec: dict, now: float) -> None:
        """Create and start the container; ask the runtime what it does."""
        if c.ever_started:
            c.restarts += 1
        c.image = spec["image"]
        c.container_id = f"containerd://{twin.ids.token()}"
        self._event(twin, pod, c, "Normal", "Created", f"Created container: {c.name}")
        self._event(twin, pod, c, "Normal", "Started", f"Started container {c.name}")
        boot = twin.runtime.boot(twin, pod, spec, c.restarts)
        for offset, line in boot.lines:
            self.logs.append(pod["metadata"]["uid"], c.name, c.restarts, now + offset, line)
        c.phase, c.ever_started, c.started_at = "running", True, now
        c.reason, c.message = "", ""
        c.ready_at = now + boot.ready_after
        c.exit_at = None if boot.exit_after is None else now + boot.exit_after
        c.exit_code = boot.exit_code
        c.exit_reason = boot.reason or ("Completed" if boot.exit_code == 0 else "Error")
        c.due = c.exit_at

    def _on_running(self, twin, pod, run, c, spec, now):
        """The process exited: record it and decide about a restart."""
        c.finished_at, c.phase = c.due, "exited"
        policy = pod["spec"].get("restartPolicy", "Always")
        restart = not c.init and (policy == "Always" or (policy == "OnFailure" and c.exit_code != 0))
        if c.init:
            restart = c.exit_code != 0 and policy != "Never"
        if not restart:
            c.phase, c.due = ("done" if c.exit_code == 0 or not c.init else "exited"), None
            return
        if c.finished_at - (c.started_at or 0) > 2 * MAX_BACKOFF:
            c.backoff = 0.0
        c.due = now + 0.5  # the kubelet notices the exit at its next sync

    def _on_exited(self, twin, pod, run, c, spec, now):
        """Restart at once the first time, then back off exponentially (CrashLoopBackOff)."""
        if c.backoff == 0.0:
            c.backoff = 10.0
            self._restart(twin, pod, run, c, spec, now)
            return
        self._event(twin, pod, c, "Warning", "BackOff", f"Back-off restarting failed container {c.name} in pod "
                    f"{pod['metadata']['name']}_{pod['metadata']['namespace']}({pod['metadata']['uid']})")
        c.phase, c.reason = "backoff", "CrashLoopBackOff"
        c.message = (f"back-off {int(c.backoff)}s restarting failed container={c.name} pod="
                     f"{pod['metadata']['name']}_{pod['metadata']['namespace']}({pod['metadata']['uid']})")
        c.due = now + c.backoff
        c.backoff = min(c.backoff * 2, MAX_BACKOFF)

    def _on_backoff(self, twin, pod, run, c, spec, now):
        """Restart after the back-off."""
        self._restart(twin, pod, run, c, spec, now)

    def _restart(self, twin, pod, run, c, spec, now) -> None:
        """Keep the last termination and start again (pulling first when the policy says Always)."""
        c.last = self._terminated(c)
        c.phase, c.due = "waiting", now
        self._on_waiting(twin, pod, run, c, spec, now)

    def _definition_changed(self, twin, pod, c, spec, now) -> None:
        """Restart a running container whose image changed in the pod spec."""
        self._event(twin, pod, c, "Normal", "Killing", f"Container {c.name} definition changed, will be restarted")
        c.exit_at, c.due, c.exit_code, c.exit_reason = now, now, 137, "Error"

    # --- external hooks (chaos, behaviour model) ---
    def kill(self, twin, key, container: str, exit_code: int = 137, reason: str = "Error") -> bool:
        """Make a running container exit now; return whether one was running."""
        run = self.runs.get(key)
        c = run.containers.get(container) if run else None
        if c is None or c.phase != "running":
            return False
        c.exit_at = c.due = twin.clock.now()
        c.exit_code, c.exit_reason = exit_code, reason
        twin.enqueue(self.name, key)
        return True

    def set_unready(self, twin, key, container: str, unready: bool) -> None:
        """Force a container's readiness off (or release it)."""
        run = self.runs.get(key)
        if run and container in run.containers and run.containers[container].forced_unready != unready:
            run.containers[container].forced_unready = unready
            twin.enqueue(self.name, key)

    # --- termination ---
    def _terminate(self, twin, pod, run: PodRun, now: float) -> bool:
        """Stop the containers of a deleted pod, then remove it; return True once removed."""
        if run.remove_at is None:
            grace = float(pod["metadata"].get("deletionGracePeriodSeconds") or 0)
            run.remove_at = now + min(grace, STOP_SECONDS)
            for c in run.containers.values():
                if c.phase == "running":
                    self._event(twin, pod, c, "Normal", "Killing", f"Stopping container {c.name}")
                    c.exit_at, c.exit_code, c.exit_reason = run.remove_at, 143, "Error"  # SIGTERM
                c.due = None
        if now < run.remove_at:
            return False
        if pod["metadata"].get("finalizers"):  # the API keeps it until its finalizers are cleared
            for c in run.containers.values():
                if c.phase not in ("exited", "done"):
                    if c.phase != "running":  # never started: the kubelet reports it as lost
                        c.exit_code, c.exit_reason, c.started_at = 137, "ContainerStatusUnknown", now
                    c.phase, c.finished_at, c.due = "exited", now, None
            self._publish(twin, pod, run, now)
            return True
        twin.store.delete(twin.resource("pods"), pod["metadata"]["namespace"], pod["metadata"]["name"])
        self.logs.drop_pod(run.uid)
        self.runs.pop((pod["metadata"]["namespace"], pod["metadata"]["name"]), None)
        return True

    # --- helpers ---
    def _terminated(self, c: CState) -> dict:
        """Return the terminated state of the container's last run (timestamps as epoch seconds)."""
        return {"exitCode": c.exit_code, "reason": c.exit_reason, "startedAt": c.started_at,
                "finishedAt": c.finished_at, "containerID": c.container_id}

    def _event(self, twin, pod, c: CState, type_: str, reason: str, message: str) -> None:
        """Record a container event from the kubelet."""
        path = f"spec.{'initContainers' if c.init else 'containers'}{{{c.name}}}"
        twin.record(pod, type_, reason, message, "kubelet", pod["spec"]["nodeName"], path)



def pull_seconds(image: str, cached: bool) -> float:
    """Return a stable pull duration: short for a cached layer check, longer for a full pull."""
    base = fnv32a(image.encode()) % 1000 / 1000
    return round(0.2 + base * 0.3, 3) if cached else round(1.0 + base * 3.0, 3)


def go_ms(seconds: float) -> str:
    """Format seconds as Go prints a Duration truncated to milliseconds.

    Example:
        >>> go_ms(0.277), go_ms(1.771), go_ms(63.5), go_ms(0)
        ('277ms', '1.771s', '1m3.5s', '0s')
    """
    ms = int(round(seconds * 1000))
    if ms == 0:
        return "0s"
    if ms < 1000:
        return f"{ms}ms"
    minutes, ms = divmod(ms, 60000)
    text = f"{ms // 1000}.{ms % 1000:03d}".rstrip("0").rstrip(".") + "s"
    return f"{minutes}m{text}" if minutes else text


def normalize_ref(image: str) -> str:
    """Return the reference containerd reports for an image."""
    from aoi.twin.kubelet.runtime import normalize_image

    return normalize_image(image)
