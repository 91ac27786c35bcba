"""Assemble a twin: controllers, the kind bootstrap, the platform and the requested apps, settled in time."""

from __future__ import annotations

import copy

from aoi.apps.catalog import APP_NAMES, App, load_app
from aoi.twin.api import credentials
from aoi.twin.behaviour import install as install_behaviour
from aoi.twin.behaviour.appruntime import CatalogRuntime
from aoi.twin.bootstrap import NodeLeases, bootstrap, install_identities
from aoi.twin.controllers.chaos import ChaosController
from aoi.twin.controllers.cronjob import CronJobController
from aoi.twin.controllers.daemonset import DaemonSetController
from aoi.twin.controllers.deployment import DeploymentController
from aoi.twin.controllers.endpoints import EndpointsController
from aoi.twin.controllers.job import JobController
from aoi.twin.controllers.lifecycle import GarbageCollector, NamespaceController
from aoi.twin.controllers.replicaset import ReplicaSetController
from aoi.twin.controllers.scheduler import Scheduler
from aoi.twin.controllers.statefulset import StatefulSetController
from aoi.twin.controllers.volumes import PersistentVolumeController
from aoi.twin.core import operations
from aoi.twin.core.clock import SimClock
from aoi.twin.core.errors import ApiError
from aoi.twin.kubelet.controller import Kubelet
from aoi.twin.twin import Twin

WARMUP_SECONDS = 300.0  # the apps have been up for five minutes when an episode starts


def default_controllers() -> list:
    """Return one instance of every controller, in a fixed order."""
    return [NamespaceController(), DeploymentController(), ReplicaSetController(), StatefulSetController(),
            DaemonSetController(), JobController(), CronJobController(), PersistentVolumeController(), Scheduler(),
            Kubelet(), EndpointsController(), GarbageCollector(), NodeLeases(), ChaosController()]


def deploy(twin, app: App) -> None:
    """Create every object of the app in manifest order (like `kubectl create -f`), then settle."""
    for doc in app.documents:
        res = twin.catalog.for_object(doc)
        if res is None:
            raise ValueError(f"{app.name}: manifest kind {doc.get('apiVersion')}/{doc.get('kind')} is not served")
        try:
            operations.create(twin, res, doc["metadata"].get("namespace", ""), copy.deepcopy(doc))
        except ApiError as exc:
            if exc.reason != "AlreadyExists" or res.kind != "Namespace":
                raise


def build_twin(apps: tuple[str, ...] | list[str] = APP_NAMES, seed: int = 0, clock: SimClock | None = None,
               warmup: float = WARMUP_SECONDS) -> Twin:
    """Build a twin running the given apps, settled for `warmup` simulated seconds.

    Example:
        >>> twin = build_twin(["hotel-reservation"], seed=1)
        >>> len(twin.list("deployments", "test-hotel-reservation"))
        19
    """
    loaded = [load_app("platform")] + [load_app(name) for name in apps]
    twin = Twin(seed, clock, CatalogRuntime(loaded))
    for controller in default_controllers():
        twin.add_controller(controller)
    install_behaviour(twin, loaded, seed)
    with twin.lock:
        credentials.issue(twin)  # from `secrets`, not the seed
        bootstrap(twin)
        for app in loaded:
            deploy(twin, app)
        install_identities(twin, [app.namespace for app in loaded if app.namespace])
        twin.advance(warmup)
    return twin
