"""`Kube`: one cluster through the official client, objects as plain dicts, one method per verb.

Objects travel exactly as the server sent them (camelCase dicts): no typed models, whose deserialisation costs more
than the request on a local server, and snapshots and edits stay simple.
"""

from __future__ import annotations

import base64
import contextlib
import email.utils
import json
import os
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

from kubernetes import client, config
from kubernetes.client.rest import ApiException
from kubernetes.stream import stream

from aoi.kube.kinds import arguments, kind_of, method_name
from aoi.kube.waits import Waits

APIS = {"core": client.CoreV1Api, "apps": client.AppsV1Api, "batch": client.BatchV1Api,
        "rbac": client.RbacAuthorizationV1Api, "custom": client.CustomObjectsApi}
PATCH_TYPES = {"strategic": "application/strategic-merge-patch+json", "merge": "application/merge-patch+json",
               "json": "application/json-patch+json"}
_CONFIG_LOCK = threading.Lock()
_DATA_FIELDS = {"certificate-authority-data": "certificate-authority", "client-certificate-data": "client-certificate",
                "client-key-data": "client-key"}


def _own_files(kubeconfig: dict, folder: Path) -> dict:
    """Return the kubeconfig with its *-data fields written to files of this client's own in `folder` (0600).

    The official client caches such files by content for the whole process: two twins cloned from one base share a
    CA, so one episode's client would read the CA file in another episode's folder, gone once that episode closed.

    Example:
        >>> import base64, tempfile
        >>> ca = base64.b64encode(b"PEM").decode()
        >>> cfg = {"clusters": [{"name": "t", "cluster": {"certificate-authority-data": ca}}]}
        >>> path = _own_files(cfg, Path(tempfile.mkdtemp()))["clusters"][0]["cluster"]["certificate-authority"]
        >>> Path(path).read_bytes()
        b'PEM'
    """
    out = json.loads(json.dumps(kubeconfig))
    entries = [c.get("cluster", {}) for c in out.get("clusters", [])]
    entries += [u.get("user", {}) for u in out.get("users", [])]
    for entry in entries:
        for data_key, file_key in _DATA_FIELDS.items():
            if data_key in entry:
                fd, name = tempfile.mkstemp(dir=folder, prefix=file_key + "-")
                with os.fdopen(fd, "wb") as handle:
                    handle.write(base64.standard_b64decode(entry.pop(data_key)))
                entry[file_key] = name
    return out


class Kube(Waits):
    """One cluster's API: get, list, create, replace, delete and patch by resource name, exec, logs and waits.

    Example:
        >>> with Kube.from_kubeconfig("admin.yaml") as kube:  # doctest: +SKIP
        ...     kube.get("services", "test-social-network", "user-service")["spec"]["ports"][0]["targetPort"]
        9090
    """

    def __init__(self, api_client: client.ApiClient, clock: Callable[[], float] | None = None):
        self.api_client = api_client
        self._clock = clock
        self._apis: dict[tuple[str, str | None], object] = {}

    @classmethod
    def from_kubeconfig(cls, path, context: str | None = None, clock: Callable[[], float] | None = None) -> Kube:
        """Build a client from a kubeconfig file; `clock` (epoch seconds) overrides the server's time.

        Example:
            >>> kube = Kube.from_kubeconfig("/tmp/kubeconfigs/admin.yaml")  # doctest: +SKIP
        """
        text = Path(path).read_text()
        with _CONFIG_LOCK:  # the client writes its CA file after naming it: serialise loads across threads
            if text.lstrip().startswith("{"):  # JSON (the twin writes it): skip the YAML parser, the slow part here
                own = _own_files(json.loads(text), Path(path).parent)
                return cls(config.new_client_from_config_dict(own, context=context), clock)
            return cls(config.new_client_from_config(config_file=str(path), context=context), clock)

    def close(self) -> None:
        """Close the connections (an episode's end); a later call opens new ones."""
        self.api_client.close()
        self.api_client.rest_client.pool_manager.clear()  # kubernetes < 34 leaves the pool open on close()

    def __enter__(self) -> Kube:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- verbs ---
    def get(self, kind: str, namespace: str | None, name: str) -> dict:
        """Return one object (`namespace` None for cluster-scoped kinds)."""
        return self._request("get", kind, namespace, name)

    def list(self, kind: str, namespace: str | None = None, *, labels: dict[str, str] | None = None,
             fields: str | None = None) -> list[dict]:
        """Return the objects of a kind (one namespace, or all when None) matching a label map and field selector."""
        selector = ",".join(f"{k}={v}" for k, v in (labels or {}).items()) or None
        return self.listing(kind, namespace, label_selector=selector, field_selector=fields)["items"]

    def listing(self, kind: str, namespace: str | None = None, **query) -> dict:
        """Return the whole List object (items and its resourceVersion, which a watch starts from)."""
        return self._request("list", kind, namespace, **{k: v for k, v in query.items() if v is not None})

    def create(self, kind: str, namespace: str | None, body: dict, name: str | None = None) -> dict:
        """Create an object (`name` only for a subresource such as serviceaccounts/token) and return it."""
        return self._request("create", kind, namespace, name, body=body)

    def replace(self, kind: str, namespace: str | None, name: str, body: dict) -> dict:
        """Replace an object whole (what `kubectl replace` does) and return it."""
        return self._request("replace", kind, namespace, name, body=body)

    def delete(self, kind: str, namespace: str | None, name: str, **options) -> dict:
        """Delete an object; options such as propagation_policy go to the API."""
        return self._request("delete", kind, namespace, name, **options)

    def patch(self, kind: str, namespace: str | None, name: str, body, how: str = "strategic") -> dict:
        """Send a strategic-merge, merge or JSON patch (`how`) and return the patched object.

        The patch type travels as the Content-Type default header of an ApiClient kept for that type (ApiClient
        merges its default headers over the generated method's choice). That works on every `kubernetes` release we
        support: `_content_type` only exists from 31 on, and 30.1 (AIOpsLab's pin) would send any dict as a
        strategic merge patch.
        """
        if how not in PATCH_TYPES:
            raise ValueError(f"unknown patch type {how!r}; choose one of: {', '.join(PATCH_TYPES)}")
        return self._request("patch", kind, namespace, name, how=how, body=body)

    def _request(self, verb: str, kind: str, namespace: str | None, name: str | None = None, how: str | None = None,
                 **kwargs) -> dict:
        """Call the generated method for (verb, kind) and return the response body as a dict."""
        found = kind_of(kind)
        method = getattr(self.api(found.api, how), method_name(found, verb, namespace))
        resp = method(*arguments(found, namespace, name), _preload_content=False, **kwargs)
        return json.loads(resp.data) if resp.data else {}

    def api(self, name: str, how: str | None = None):
        """Return a generated API ("core", "apps", ...), bound to the client that sends patch type `how`."""
        key = (name, how)
        if key not in self._apis:
            self._apis[key] = APIS[name](self._patcher(how) if how else self.api_client)
        return self._apis[key]

    def _patcher(self, how: str) -> client.ApiClient:
        """Return an ApiClient that sends this patch type, sharing this client's configuration and connections."""
        with _CONFIG_LOCK:
            patcher = client.ApiClient(self.api_client.configuration, header_name="Content-Type",
                                       header_value=PATCH_TYPES[how])
        patcher.rest_client = self.api_client.rest_client  # reuse the open connection: no second handshake
        return patcher

    # --- pods ---
    def pods_of(self, kind: str, namespace: str, name: str) -> list[dict]:
        """Return the pods a Service's selector (none without one) or a Deployment's matchLabels select."""
        spec = self.get(kind, namespace, name)["spec"]
        if kind == "services":
            return self.list("pods", namespace, labels=spec["selector"]) if spec.get("selector") else []
        return self.list("pods", namespace, labels=spec["selector"].get("matchLabels"))

    def delete_pods(self, namespace: str, pods: list[dict]) -> list[str]:
        """Delete pods (already gone is fine) and return their names."""
        names = [p["metadata"]["name"] for p in pods]
        for name in names:
            with tolerate(404):
                self.delete("pods", namespace, name)
        return names

    def exec(self, namespace: str, pod: str, container: str | None, argv: list[str], timeout: float = 60.0
             ) -> tuple[int, str, str]:
        """Run argv in a container, like `kubectl exec`, and return (exit code, stdout, stderr).

        Example:
            >>> kube.exec("test-hotel-reservation", "geo-abc", "hotel-reserv-geo", ["echo", "hi"])  # doctest: +SKIP
            (0, 'hi\\n', '')
        """
        ws = stream(self.api("core").connect_get_namespaced_pod_exec, pod, namespace, container=container,
                    command=list(argv), stdout=True, stderr=True, stdin=False, tty=False, _preload_content=False)
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

    def logs(self, namespace: str, pod: str, container: str | None = None, tail: int | None = None) -> str:
        """Return a container's log (the last `tail` lines when given), like `kubectl logs`."""
        query = {k: v for k, v in (("container", container), ("tail_lines", tail)) if v is not None}
        resp = self.api("core").read_namespaced_pod_log(pod, namespace, _preload_content=False, **query)
        return resp.data.decode(errors="replace")

    # --- time ---
    def now(self) -> float:
        """Return the cluster's time: the injected clock, else the server's Date header, else this machine's."""
        if self._clock is not None:
            return self._clock()
        resp = client.VersionApi(self.api_client).get_code(_preload_content=False)
        date = resp.headers.get("Date")
        return email.utils.parsedate_to_datetime(date).timestamp() if date else time.time()

    def restart_deployment(self, namespace: str, name: str) -> dict:
        """Do what `kubectl rollout restart` does: stamp the pod template with restartedAt."""
        stamp = datetime.fromtimestamp(int(self.now()), tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        body = {"spec": {"template": {"metadata": {"annotations": {"kubectl.kubernetes.io/restartedAt": stamp}}}}}
        return self.patch("deployments", namespace, name, body)


@contextlib.contextmanager
def tolerate(*statuses: int) -> Iterator[None]:
    """Swallow ApiExceptions with the given HTTP statuses (e.g. 404 on delete, 409 on create), re-raise others.

    Example:
        >>> with tolerate(404):
        ...     raise ApiException(status=404)
    """
    try:
        yield
    except ApiException as exc:
        if exc.status not in statuses:
            raise

