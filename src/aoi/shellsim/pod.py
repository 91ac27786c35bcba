"""What the shell reads of the pod it runs in: container specs, mount paths, quantities and timestamps.

The kubelet (aoi.twin.kubelet) builds a container's files and environment from the same helpers; the shell only
reads the pod, so it needs nothing of the twin.
"""

from __future__ import annotations

import posixpath
import re
from datetime import datetime

SA_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
_SUFFIXES = {"": 1, "m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18,
             "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}


def container_spec(pod: dict, name: str) -> dict:
    """Return the spec of container `name` (init and ephemeral containers too), or {}.

    Example:
        >>> container_spec({"spec": {"initContainers": [{"name": "init"}]}}, "init")
        {'name': 'init'}
    """
    spec = pod.get("spec") or {}
    for key in ("containers", "initContainers", "ephemeralContainers"):
        for c in spec.get(key) or []:
            if c.get("name") == name:
                return c
    return {}


def abs_path(path: str) -> str:
    """Return `path` normalised and absolute.

    Example:
        >>> abs_path("etc//config/../hosts")
        '/etc/hosts'
    """
    return "/" + posixpath.normpath("/" + path).lstrip("/")


def quantity(text) -> float:
    """Parse a Kubernetes quantity (0.0 when it is not one).

    Example:
        >>> quantity("500m"), quantity("1Gi"), quantity("lots")
        (0.5, 1073741824.0, 0.0)
    """
    m = re.fullmatch(r"([+-]?[\d.]+(?:[eE][+-]?\d+)?)([a-zA-Z]*)", str(text).strip())
    if not m or m[2] not in _SUFFIXES:
        return 0.0
    return float(m[1]) * _SUFFIXES[m[2]]


def parse_time(text: str | None) -> float | None:
    """Parse an RFC 3339 timestamp (with or without fraction) to epoch seconds; None stays None.

    Example:
        >>> parse_time('1970-01-01T00:01:00Z')
        60.0
    """
    if not text:
        return None
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
