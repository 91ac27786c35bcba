"""What the kubelet puts into a container's file system: volume mounts, service account and /etc files."""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import math
import posixpath
import re
from collections.abc import Callable

from aoi.shellsim.pod import SA_DIR, abs_path, container_spec, quantity
from aoi.twin.core.clock import EPISODE_EPOCH, parse_time

Lookup = Callable[[str, str, str], "dict | None"]

DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
API_HOST = "https://kubernetes.default.svc.cluster.local"
# Stands in for the cluster CA when the namespace has no kube-root-ca.crt ConfigMap.
FAKE_CA = (b"-----BEGIN CERTIFICATE-----\nMIIBdzCCAR2gAwIBAgIBADAKBggqhkjOPQQDAjAjMSEwHwYDVQQDDBhrM3Mtc2Vy\n"
           b"dmVyLWNhQHR3aW4tY2x1c3RlcjAeFw0yNTA2MDIwOTAwMDBaFw0zNTA2MDIwOTAw\n-----END CERTIFICATE-----\n")
OS_RELEASE = (b'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nNAME="Debian GNU/Linux"\nVERSION_ID="12"\n'
              b'VERSION="12 (bookworm)"\nVERSION_CODENAME=bookworm\nID=debian\nHOME_URL="https://www.debian.org/"\n')
PASSWD = b"root:x:0:0:root:/root:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
ROOT_DIRS = ("bin", "boot", "dev", "etc", "home", "lib", "media", "mnt", "opt", "proc", "root", "run", "sbin", "srv",
             "sys", "tmp", "usr/bin", "usr/lib", "usr/local/bin", "var/log", "var/tmp")
# Node allocatable stands in for unset limits, as the kubelet does.
_NODE_DEFAULTS = {"cpu": "4", "memory": "16Gi", "ephemeral-storage": "100Gi"}





def pod_field(pod: dict, path: str) -> str:
    """Return the value a downward-API fieldRef `path` reads from the pod.

    Example:
        >>> pod_field({"metadata": {"labels": {"app": "db"}}}, "metadata.labels['app']")
        'db'
    """
    meta, spec, status = pod.get("metadata") or {}, pod.get("spec") or {}, pod.get("status") or {}
    m = re.fullmatch(r"metadata\.(labels|annotations)\['(.*)'\]", path)
    if m:
        return str((meta.get(m[1]) or {}).get(m[2], ""))
    if path in ("metadata.labels", "metadata.annotations"):
        pairs = sorted((meta.get(path.split(".")[1]) or {}).items())
        return "\n".join(f"{k}={json.dumps(str(v))}" for k, v in pairs)
    ips = lambda key: ",".join(i.get("ip", "") for i in status.get(key) or [])  # noqa: E731
    table = {"metadata.name": meta.get("name"), "metadata.namespace": meta.get("namespace", "default"),
             "metadata.uid": meta.get("uid"), "spec.nodeName": spec.get("nodeName"),
             "spec.serviceAccountName": spec.get("serviceAccountName") or "default",
             "status.podIP": status.get("podIP"), "status.hostIP": status.get("hostIP"),
             "status.podIPs": ips("podIPs"), "status.hostIPs": ips("hostIPs")}
    return str(table.get(path) or "")


def resource_field(pod: dict, container: dict, ref: dict) -> str:
    """Return the value a resourceFieldRef reads (cores rounded up, bytes), unset limits as node allocatable."""
    if ref.get("containerName"):
        container = container_spec(pod, ref["containerName"]) or container
    kind, _, res = ref.get("resource", "").partition(".")
    resources = container.get("resources") or {}
    limit = (resources.get("limits") or {}).get(res)
    value = limit or _NODE_DEFAULTS.get(res, "0")
    if kind == "requests":
        value = (resources.get("requests") or {}).get(res) or limit or "0"
    divisor = quantity(ref.get("divisor") or "1") or 1
    return str(math.ceil(quantity(value) / divisor - 1e-9))


def _b64(text: str) -> bytes:
    try:
        return base64.b64decode(text, validate=False)
    except (binascii.Error, ValueError):
        return text.encode()


def object_data(kind: str, obj: dict | None) -> dict[str, bytes]:
    """Return the keys of a ConfigMap or Secret as bytes (Secret data base64-decoded)."""
    if not obj:
        return {}
    if kind == "Secret":
        data = {k: _b64(v) for k, v in (obj.get("data") or {}).items()}
        return data | {k: str(v).encode() for k, v in (obj.get("stringData") or {}).items()}
    data = {k: str(v).encode() for k, v in (obj.get("data") or {}).items()}
    return data | {k: _b64(v) for k, v in (obj.get("binaryData") or {}).items()}


def fetch(lookup: Lookup, kind: str, ns: str, name: str) -> dict[str, bytes]:
    """Return a ConfigMap's or Secret's keys ({} if missing; kube-root-ca.crt falls back to a stand-in CA)."""
    data = object_data(kind, lookup(kind, ns, name))
    if not data and kind == "ConfigMap" and name == "kube-root-ca.crt":
        return {"ca.crt": FAKE_CA}
    return data


def _keyed(data: dict[str, bytes], items: list | None) -> dict[str, bytes]:
    if not items:
        return data
    return {it.get("path") or it["key"]: data[it["key"]] for it in items if it.get("key") in data}


def sa_token(pod: dict, audience: str | None = None, seconds: int = 3607) -> bytes:
    """Return a deterministic service account JWT for the pod (signed by nobody: the twin checks no signatures)."""
    meta = pod.get("metadata") or {}
    ns, sa = meta.get("namespace", "default"), (pod.get("spec") or {}).get("serviceAccountName") or "default"
    iat = int(parse_time(meta.get("creationTimestamp")) or EPISODE_EPOCH)
    claims = {"aud": [audience or API_HOST], "exp": iat + seconds, "iat": iat, "iss": API_HOST,
              "kubernetes.io": {"namespace": ns, "pod": {"name": meta.get("name", ""), "uid": meta.get("uid", "")},
                                "serviceaccount": {"name": sa}}, "nbf": iat, "sub": f"system:serviceaccount:{ns}:{sa}"}
    seg = lambda o: base64.urlsafe_b64encode(json.dumps(o, separators=(",", ":")).encode()).rstrip(b"=")  # noqa: E731
    body = seg({"alg": "RS256", "kid": "twin"}) + b"." + seg(claims)
    return body + b"." + base64.urlsafe_b64encode(hashlib.sha256(body).digest()).rstrip(b"=")


def _downward(items: list, pod: dict, container: dict) -> dict[str, bytes]:
    out = {}
    for it in items or []:
        if "fieldRef" in it:
            out[it["path"]] = pod_field(pod, it["fieldRef"].get("fieldPath", "")).encode()
        elif "resourceFieldRef" in it:
            out[it["path"]] = resource_field(pod, container, it["resourceFieldRef"]).encode()
    return out


def _projected(sources: list, pod: dict, container: dict, lookup: Lookup) -> dict[str, bytes]:
    ns, out = (pod.get("metadata") or {}).get("namespace", "default"), {}
    for src in sources or []:
        if "configMap" in src or "secret" in src:
            kind, ref = ("ConfigMap", src["configMap"]) if "configMap" in src else ("Secret", src["secret"])
            out |= _keyed(fetch(lookup, kind, ns, ref.get("name", "")), ref.get("items"))
        elif "serviceAccountToken" in src:
            ref = src["serviceAccountToken"]
            out[ref.get("path", "token")] = sa_token(pod, ref.get("audience"), ref.get("expirationSeconds", 3607))
        elif "downwardAPI" in src:
            out |= _downward(src["downwardAPI"].get("items"), pod, container)
    return out


def volume_files(volume: dict, pod: dict, container: dict, lookup: Lookup) -> dict[str, bytes]:
    """Return the files of one volume, by path relative to its mount point (empty for emptyDir and the like)."""
    ns = (pod.get("metadata") or {}).get("namespace", "default")
    if "configMap" in volume:
        ref = volume["configMap"]
        return _keyed(fetch(lookup, "ConfigMap", ns, ref.get("name", "")), ref.get("items"))
    if "secret" in volume:
        ref = volume["secret"]
        return _keyed(fetch(lookup, "Secret", ns, ref.get("secretName", "")), ref.get("items"))
    if "projected" in volume:
        return _projected(volume["projected"].get("sources"), pod, container, lookup)
    if "downwardAPI" in volume:
        return _downward(volume["downwardAPI"].get("items"), pod, container)
    return {}


def _mount(files: dict[str, bytes], path: str, content: dict[str, bytes], sub_path: str = "") -> None:
    path = abs_path(path)
    if sub_path:
        if sub_path in content:
            files[path] = content[sub_path]
            return
        content = {k[len(sub_path) + 1:]: v for k, v in content.items() if k.startswith(sub_path + "/")}
    for key in [k for k in files if k == path or k.startswith(path + "/")]:
        del files[key]  # a mount hides what the image had there
    files[path + "/"] = b""
    for rel, data in content.items():
        files[posixpath.join(path, rel)] = data


def _standard_files(pod: dict) -> dict[str, bytes]:
    meta, spec, status = pod.get("metadata") or {}, pod.get("spec") or {}, pod.get("status") or {}
    name, ns = spec.get("hostname") or meta.get("name", ""), meta.get("namespace", "default")
    hosts = ("# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n"
             "fe00::0\tip6-localnet\nfe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n")
    hosts += f"{status.get('podIP', '')}\t{name}\n" if status.get("podIP") else ""
    for alias in spec.get("hostAliases") or []:
        names = "\t".join(alias.get("hostnames", []))
        hosts += f"\n# Entries added by HostAliases.\n{alias.get('ip')}\t{names}\n"
    resolv = f"search {ns}.svc.cluster.local svc.cluster.local cluster.local\nnameserver 10.96.0.10\noptions ndots:5\n"
    files = {f"/{d}/": b"" for d in ROOT_DIRS}
    files |= {"/etc/hostname": f"{name}\n".encode(), "/etc/hosts": hosts.encode(), "/etc/resolv.conf": resolv.encode(),
              "/etc/os-release": OS_RELEASE, "/etc/passwd": PASSWD, "/etc/group": b"root:x:0:\nnogroup:x:65534:\n"}
    return files


def build_files(pod: dict, container: str, lookup: Lookup) -> dict[str, bytes]:
    """Return the container's files: standard /etc files, every volumeMount, and the service account files.

    Example:
        >>> pod = {"metadata": {"name": "web-0", "namespace": "shop"}, "spec": {"containers": [{"name": "web"}]}}
        >>> build_files(pod, "web", lambda kind, ns, name: None)["/etc/hostname"]
        b'web-0\\n'
    """
    spec, c = pod.get("spec") or {}, container_spec(pod, container)
    files = _standard_files(pod)
    cmdline = [*(c.get("command") or []), *(c.get("args") or [])]
    if cmdline:
        files["/proc/1/cmdline"] = "\0".join(cmdline).encode() + b"\0"
    volumes = {v.get("name"): v for v in spec.get("volumes") or []}
    mounts = c.get("volumeMounts") or []
    if spec.get("automountServiceAccountToken") is not False and all(m.get("mountPath") != SA_DIR for m in mounts):
        ns = (pod.get("metadata") or {}).get("namespace", "default")
        _mount(files, SA_DIR, {"token": sa_token(pod), "namespace": ns.encode(),
                               "ca.crt": fetch(lookup, "ConfigMap", ns, "kube-root-ca.crt").get("ca.crt", FAKE_CA)})
    for m in mounts:
        content = volume_files(volumes.get(m.get("name"), {}), pod, c, lookup)
        _mount(files, m.get("mountPath", "/"), content, m.get("subPath", ""))
    return files
