"""What the eval's fork server loads before it forks a worker: the workers' code and the run's base twins.

Process workers are forked from one server process (multiprocessing's forkserver) that imports this module first.
So each worker starts with its modules imported and the settled twins of the run built, shared copy-on-write, instead
of spending ~1.9 s of CPU on imports and 0.15-0.3 s per app on twins of its own. The parent names the twins in
aoi.evaluate.pool.PREFORK_TWINS ("app@seed,..."), which the server reads once, when it starts. Only the server
imports this module.
"""

from __future__ import annotations

import gc
import importlib
import os
import pkgutil

from aoi.env.twin_backend import base_twin
from aoi.evaluate.pool import PREFORK_TWINS
from aoi.models import tokens

# what a worker runs expert and scripted episodes with, many modules imported lazily on first use (aoi.twin's own
# come with the base twins: only aoi.env may import the twin)
WORKER_PACKAGES = ("aoi.agents", "aoi.apps", "aoi.env", "aoi.faults", "aoi.kube", "aoi.models.expert", "aoi.problems",
                   "aoi.safety", "aoi.shellsim", "aoi.store")
# and the command lines an eval starts from: a worker runs its parent's main module again (as multiprocessing does
# for every start method but fork), which imports them
WORKER_MODULES = ("aoi.evaluate.results", "aoi.cli", "aoi.evaluate.cli")


def build(value: str) -> None:
    """Build the first base twins a PREFORK_TWINS value names, as many as a process keeps, stopping at one that fails:
    a worker builds that one itself and reports its error, where the fork server could only die without a word."""
    for item in value.split(",")[:base_twin.cache_info().maxsize]:
        app, _, seed = item.partition("@")
        if not app:
            return
        try:
            base_twin(app, int(seed))
        except Exception:  # noqa: BLE001  (the worker's own build says what is wrong)
            return


def import_all() -> None:
    """Import the worker modules and every module of the worker packages but their command lines and aoi.env's HTTP
    server (fastapi and uvicorn: ~0.25 s that no worker needs)."""
    for name in WORKER_MODULES:
        importlib.import_module(name)
    for package in WORKER_PACKAGES:
        for found in pkgutil.walk_packages(importlib.import_module(package).__path__, f"{package}."):
            if not found.name.endswith((".__main__", ".cli", ".server")):
                importlib.import_module(found.name)


import_all()
tokens.load()  # the cl100k ranks, which each worker would otherwise load at its first token count
gc.freeze()  # all of it lives as long as the server: the collection after each twin's build walks only the twin
build(os.environ.get(PREFORK_TWINS, ""))
