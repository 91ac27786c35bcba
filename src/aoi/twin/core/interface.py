"""What the parts of a twin may use of it: the `TwinView` protocol the Twin class satisfies.

Controllers, the event recorder and the behaviour model receive the twin they act on. They name its type with
this protocol rather than importing the Twin class (aoi.twin.twin), which imports them: types flow down the layers.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from aoi.twin.core.clock import SimClock
    from aoi.twin.core.ids import Ids
    from aoi.twin.core.resources import Resource
    from aoi.twin.core.store import Store


class TwinView(Protocol):
    """The state and services of one simulated cluster, as its controllers see them."""

    seed: int
    lock: threading.RLock
    clock: SimClock
    ids: Ids
    store: Store
    runtime: Any  # the container runtime seam (aoi.twin.kubelet.runtime)
    extensions: Any  # aoi.twin.extensions.Extensions

    def resource(self, name: str) -> Resource:
        """Return a resource by plural, 'plural.group' or kind."""

    def get(self, resource: str, namespace: str, name: str) -> dict | None:
        """Return a stored object."""

    def list(self, resource: str, namespace: str | None = None, match: Callable[[dict], bool] | None = None):
        """Return stored objects of a resource, sorted by namespace and name."""

    def update(self, resource: str, obj: dict) -> dict:
        """Save a changed object (no admission)."""

    def record(self, obj: dict, type_: str, reason: str, message: str, component: str, host: str | None = None,
               field_path: str | None = None) -> dict:
        """Record a Kubernetes Event about obj."""

    def enqueue(self, controller: str, key: Hashable) -> None:
        """Ask a controller to reconcile key at the next settle."""

    def schedule(self, delay: float, controller: str, key: object) -> None:
        """Reconcile key with controller after `delay` simulated seconds."""
