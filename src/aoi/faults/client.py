"""A small Kubernetes client for fault injectors: the official APIs from a kubeconfig, plain-dict reads, exec, waits.

Everything here speaks the Kubernetes API only, so injectors run unchanged against the twin and a real cluster.
Objects travel as plain dicts exactly as the server sent them (camelCase), which keeps snapshots and edits simple.
"""

from __future__ import annotations

import contextlib
import email.utils
import json
import threading
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterator

from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException
from kubernetes.stream import stream

PATCH_TYPES = {"strategic": "application/strategic-merge-patch+json", "merge": "application/merge-patch+json",
               "json": "application/json-patch+json"}
_CONFIG_LOCK = threading.Lock()
WATCH_SLICE = 1  # seconds per watch request while waiting; bounds how far a manual-time twin is pulled forward


class Kube:
    """The CoreV1, AppsV1, RbacV1 and CustomObjects APIs of one cluster, plus the helpers injectors share.

    Example:
        >>> kube = Kube.from_kubeconfig("admin.yaml")  # doctest: +SKIP
        >>> kube.service("test-social-network", "user-service")["spec"]["ports"][0]["targetPort"]  # doctest: +SKIP
        9090
    """

    def __init__(self, api_client: client.ApiClient, clock: Callable[[], float] | None = None):
        self.api_client = api_client
        self.core = client.CoreV1Api(api_client)
        self.apps = client.AppsV1Api(api_client)
        self.rbac = client.RbacAuthorizationV1Api(api_client)
        self.custom = client.CustomObjectsApi(api_client)
        self._clock = clock
        self._patchers: dict[str, client.ApiClient] = {}

    @classmethod
    def from_kubeconfig(cls, path, context: str | None = None, clock: Callable[[], float] | None = None) -> "Kube":
        """Build a client from a kubeconfig file; `clock` (epoch seconds) overrides the server's time.

        Example:
            >>> kube = Kube.from_kubeconfig("/tmp/kubeconfigs/admin.yaml")  # doctest: +SKIP
        """
        text = Path(path).read_text()
        with _CONFIG_LOCK:  # the client writes its CA file after naming it: serialise loads across threads
            if text.lstrip().startswith("{"):  # JSON (the twin writes it): skip the YAML parser, the slow part here
                return cls(config.new_client_from_config_dict(json.loads(text), context=context,
                                                              temp_file_path=str(Path(path).parent)), clock)
            return cls(config.new_client_from_config(config_file=str(path), context=context), clock)

    # --- plain-dict calls ---
    def call(self, method, *args, **kwargs) -> dict:
        """Call a generated API method and return the response body as a dict."""
        resp = method(*args, _preload_content=False, **kwargs)
        data = resp.data
        return json.loads(data) if data else {}

    def patch(self, method, *args, body, kind: str = "strategic") -> dict:
        """Send a strategic-merge, merge or JSON patch through a generated patch method.

        The patch type travels as the Content-Type default header of an ApiClient kept for that type (ApiClient
        merges its default headers over the generated method's choice). That works on every `kubernetes` release we
        support: `_content_type` only exists from 31 on, and 30.1 (AIOpsLab's pin) would send any dict as a
        strategic merge patch.
        """
        api = type(method.__self__)(self._patch_client(kind))  # the same API class, bound to the typed client
        return self.call(getattr(api, method.__name__), *args, body=body)

    def _patch_client(self, kind: str) -> client.ApiClient:
        """Return the ApiClient that sends this patch type (made once, sharing this client's configuration)."""
        if kind not in PATCH_TYPES:
            raise ValueError(f"unknown patch kind {kind!r}; choose one of: {', '.join(PATCH_TYPES)}")
        with _CONFIG_LOCK:
            if kind not in self._patchers:
                patcher = client.ApiClient(self.api_client.configuration, header_name="Content-Type",
                                           header_value=PATCH_TYPES[kind])
                patcher.rest_client = self.api_client.rest_client  # reuse the open connection: no second handshake
                self._patchers[kind] = patcher
            return self._patchers[kind]

    def service(self, namespace: str, name: str) -> dict:
        """Return a Service."""
        return self.call(self.core.read_namespaced_service, name, namespace)

    def services(self, namespace: str) -> list[dict]:
        """Return the Services of a namespace."""
        return self.call(self.core.list_namespaced_service, namespace)["items"]

    def deployment(self, namespace: str, name: str) -> dict:
        """Return a Deployment."""
        return self.call(self.apps.read_namespaced_deployment, name, namespace)

    def deployments(self, namespace: str) -> list[dict]:
        """Return the Deployments of a namespace."""
        return self.call(self.apps.list_namespaced_deployment, namespace)["items"]

    def config_map(self, namespace: str, name: str) -> dict:
        """Return a ConfigMap."""
        return self.call(self.core.read_namespaced_config_map, name, namespace)

    def pods(self, namespace: str, labels: dict[str, str] | None = None) -> list[dict]:
        """Return the pods matching a label map (all pods when None), sorted by name."""
        selector = ",".join(f"{k}={v}" for k, v in (labels or {}).items()) or None
        items = self.call(self.core.list_namespaced_pod, namespace, label_selector=selector)["items"]
        return sorted(items, key=lambda p: p["metadata"]["name"])

    def pods_of_service(self, namespace: str, name: str) -> list[dict]:
        """Return the pods a Service selects (none for a Service without a selector)."""
        selector = self.service(namespace, name)["spec"].get("selector")
        return self.pods(namespace, selector) if selector else []

    def pods_of_deployment(self, namespace: str, name: str) -> list[dict]:
        """Return the pods a Deployment's selector matches."""
        labels = self.deployment(namespace, name)["spec"]["selector"].get("matchLabels") or {}
        return self.pods(namespace, labels)

    def delete_pods(self, namespace: str, pods: list[dict]) -> list[str]:
        """Delete pods (already gone is fine) and return their names."""
        names = [p["metadata"]["name"] for p in pods]
        for name in names:
            with tolerate(404):
                self.call(self.core.delete_namespaced_pod, name, namespace)
        return names

    # --- time, restarts, exec ---
    def now(self) -> float:
        """Return the cluster's time: the injected clock, else the server's Date header, else this machine's."""
        if self._clock is not None:
            return self._clock()
        resp = client.VersionApi(self.api_client).get_code(_preload_content=False)
        date = resp.headers.get("Date")
        return email.utils.parsedate_to_datetime(date).timestamp() if date else time.time()

    def restart_deployment(self, namespace: str, name: str) -> dict:
        """Do what `kubectl rollout restart` does: stamp the pod template with restartedAt."""
        stamp = datetime.fromtimestamp(int(self.now()), tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        body = {"spec": {"template": {"metadata": {"annotations": {"kubectl.kubernetes.io/restartedAt": stamp}}}}}
        return self.patch(self.apps.patch_namespaced_deployment, name, namespace, body=body)

    def exec(self, namespace: str, pod: str, container: str, argv: list[str], timeout: float = 60.0
             ) -> tuple[int, str, str]:
        """Run argv in a container, like `kubectl exec`, and return (exit code, stdout, stderr).

        Example:
            >>> kube.exec("test-hotel-reservation", "geo-abc", "hotel-reserv-geo", ["echo", "hi"])  # doctest: +SKIP
            (0, 'hi\\n', '')
        """
        ws = stream(self.core.connect_get_namespaced_pod_exec, pod, namespace, container=container, command=list(argv),
                    stdout=True, stderr=True, stdin=False, tty=False, _preload_content=False)
        try:
            ws.run_forever(timeout=timeout)
            if ws.is_open():
                raise TimeoutError(f"exec {argv} in {namespace}/{pod} did not finish within {timeout}s; "
                                   "raise the timeout or check the container")
            out, err = ws.read_stdout() or "", ws.read_stderr() or ""
            try:
                return ws.returncode, out, err
            except (TypeError, KeyError, ValueError) as exc:  # no Status on the error channel
                raise RuntimeError(f"exec {argv} in {namespace}/{pod} ended without an exit status; "
                                   f"check `kubectl describe pod {pod} -n {namespace}`") from exc
        finally:
            ws.close()

    # --- waits ---
    def wait_rollout(self, namespace: str, name: str, timeout: float = 180.0) -> None:
        """Block until a Deployment's rollout has finished (what `kubectl rollout status` waits for).

        The timeout counts on the cluster's clock (a twin's simulated one) and on the wall clock, whichever ends
        first, so a rollout that can never finish fails fast on a manual-time twin too.
        """
        deadline, cluster_deadline = time.monotonic() + timeout, self.now() + timeout
        while time.monotonic() < deadline and self.now() < cluster_deadline:
            listing = self.call(self.apps.list_namespaced_deployment, namespace, field_selector=f"metadata.name={name}")
            if any(_rolled_out(d) for d in listing["items"]):
                return
            w = watch.Watch()
            for event in w.stream(self.apps.list_namespaced_deployment, namespace,
                                  field_selector=f"metadata.name={name}",
                                  resource_version=listing["metadata"]["resourceVersion"], timeout_seconds=WATCH_SLICE):
                if _rolled_out(event["raw_object"]):
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
            listing = self.call(self.core.list_namespace, field_selector=f"metadata.name={name}")
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


def _rolled_out(deployment: dict) -> bool:
    """Tell whether a Deployment's status shows a finished rollout."""
    spec, status = deployment.get("spec") or {}, deployment.get("status") or {}
    want = spec.get("replicas", 1)
    return (status.get("observedGeneration", 0) >= deployment["metadata"].get("generation", 1)
            and status.get("updatedReplicas", 0) == want and status.get("availableReplicas", 0) == want
            and status.get("replicas", 0) == want)


@contextlib.contextmanager
def tolerate(*statuses: int) -> Iterator[None]:
    """Swallow ApiExceptions with the given HTTP statuses (e.g. 404 on delete, 409 on create), re-raise others."""
    try:
        yield
    except ApiException as exc:
        if exc.status not in statuses:
            raise


def api_message(exc: ApiException) -> str:
    """Return the message of a Kubernetes Status error body, else the exception text."""
    try:
        return json.loads(exc.body)["message"]
    except (TypeError, ValueError, KeyError):
        return str(exc)
