"""The container runtime seam: which images exist, what a container prints and whether it keeps running."""

from __future__ import annotations

import bisect
import functools
from dataclasses import dataclass, field
from typing import Protocol

from aoi.twin.core.ids import fnv32a


@dataclass
class Boot:
    """What one start of a container does, in seconds after it starts."""

    lines: list[tuple[float, str]] = field(default_factory=list)  # (offset, formatted log line)
    exit_after: float | None = None  # None: keeps running
    exit_code: int = 0
    ready_after: float = 1.0
    reason: str | None = None  # terminated reason; defaults to Completed (0) or Error


class Runtime(Protocol):
    """What the kubelet asks of the container runtime."""

    def image_exists(self, image: str) -> bool:
        """Tell whether the registry has this image."""

    def boot(self, twin, pod: dict, container: dict, restart_count: int) -> Boot:
        """Start a container and describe what it does."""


class PlainRuntime:
    """A runtime where every image exists and every container runs quietly forever."""

    def image_exists(self, image: str) -> bool:
        """Accept every image."""
        return True

    def boot(self, twin, pod: dict, container: dict, restart_count: int) -> Boot:
        """Run forever, ready after a second."""
        return Boot()


def normalize_image(image: str) -> str:
    """Return the fully qualified image reference, as container statuses show it.

    Example:
        >>> normalize_image("mongo:4.4.6")
        'docker.io/library/mongo:4.4.6'
    """
    name = image if ":" in image.rsplit("/", 1)[-1] or "@" in image else f"{image}:latest"
    first = name.split("/", 1)[0]
    if "/" not in name:
        return f"docker.io/library/{name}"
    if "." not in first and ":" not in first and first != "localhost":
        return f"docker.io/{name}"
    return name


@functools.lru_cache(maxsize=4096)  # pure, and every pod status rendered names each container's image digest
def image_digest(image: str) -> str:
    """Return a stable fake sha256 digest for an image."""
    seed = normalize_image(image).encode()
    return "".join(f"{fnv32a(seed + bytes([i])):08x}" for i in range(8))


def image_size(image: str) -> int:
    """Return a stable plausible image size in bytes."""
    return 20_000_000 + fnv32a(normalize_image(image).encode()) % 400_000_000


class LogStore:
    """Container logs per (pod uid, container, start number), ordered by time."""

    def __init__(self):
        self._logs: dict[tuple[str, str, int], list[tuple[float, int, str]]] = {}
        self._seq = 0

    def __deepcopy__(self, memo) -> LogStore:
        """Copy the index; the (time, seq, line) entries are immutable and shared."""
        new = LogStore()
        new._logs = {key: list(lines) for key, lines in self._logs.items()}
        new._seq = self._seq
        return new

    def append(self, uid: str, container: str, instance: int, t: float, line: str) -> None:
        """Add one line written at simulated time t."""
        self._seq += 1
        bisect.insort(self._logs.setdefault((uid, container, instance), []), (t, self._seq, line))

    def lines(self, uid: str, container: str, instance: int, until: float) -> list[tuple[float, str]]:
        """Return (time, line) pairs written up to `until`."""
        return [(t, line) for t, _, line in self._logs.get((uid, container, instance), []) if t <= until]

    def drop_pod(self, uid: str) -> None:
        """Forget the logs of a removed pod."""
        for key in [k for k in self._logs if k[0] == uid]:
            del self._logs[key]
