"""The Twin: one simulated cluster (store, controllers, timers, clock) behind one lock."""

from __future__ import annotations

import contextlib
import copy
import functools
import gc
import heapq
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING

from aoi.twin.api import credentials
from aoi.twin.core.clock import SimClock
from aoi.twin.core.events import EventRecorder
from aoi.twin.core.faults import Faults
from aoi.twin.core.ids import Ids
from aoi.twin.core.resources import CATALOG, Resource
from aoi.twin.core.store import Store
from aoi.twin.extensions import Extensions
from aoi.twin.kubelet.usage import UsageModel

if TYPE_CHECKING:
    from aoi.twin.api.authz import User
    from aoi.twin.controllers.base import Controller, Key

MAX_RECONCILES = 200_000  # a safety net against controllers that never converge
WALL_SLICE = 0.02  # wall seconds of reconciles per settle when following the wall clock (the rest wait for the ticker)
# Called (lock let go) between slices and timers while a twin follows the wall clock: the serving process's
# garbage-collection upkeep (serving.Ticker) runs there, as a catch-up of thousands of timers can take seconds.
WALL_PAUSE_HOOKS: list[Callable[[], None]] = []


@functools.lru_cache(maxsize=512)
def _resource(catalog, name: str) -> Resource:
    """Look a resource up by any of its names (cached: the catalog never changes)."""
    for res in catalog.resources:
        if name in (res.plural, res.key, res.kind) and res.group != "metrics.k8s.io":
            return res
    raise KeyError(f"unknown resource {name!r}")


@contextlib.contextmanager
def _no_gc():
    """Pause the cyclic garbage collector: a clone allocates only live objects, and collections mid-copy cost more
    than the copy itself."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class Twin:
    """A deterministic simulated Kubernetes cluster.

    All state changes happen under `lock`. Controllers run when something changes (`settle`) and when simulated
    time passes (`advance`); nothing here reads the wall clock.
    """

    def __init__(self, seed: int = 0, clock: SimClock | None = None, runtime=None):
        self.seed = seed
        self.lock = threading.RLock()
        self.clock = clock or SimClock()
        self.ids = Ids(seed)
        self.store = Store(self.clock, self.ids, self.lock)
        self.recorder = EventRecorder(self)
        self.catalog = CATALOG
        self.runtime = runtime
        self.usage = UsageModel()
        self.extensions = Extensions()  # add-ons by name: behaviour model, chaos, programs, app state
        self.tokens: dict[str, User] = {}  # bearer token -> identity
        self.credentials: dict[str, str] = {}  # role (admin, probe, executor) -> bearer token
        # Time: "wall" when a ticker follows real time (aoi twin up); "manual" in episodes, where only callers
        # advance the clock and a waiting watch may pull time forward up to sim_deadline.
        self.clock_mode = "manual"
        self.sim_deadline: float | None = None
        self.stalled = False
        self._timers: list[tuple[float, int, str, object]] = []
        self._timer_seq = 0
        self._queue: OrderedDict[tuple[str, object], None] = OrderedDict()
        self._settling = False
        self.faults = Faults()  # reconciles that raised, until their key reconciles cleanly (health reports them)
        self.controllers: dict[str, Controller] = {}
        self._interest: dict[Resource, list[Controller]] = {}
        self.store.listeners.append(self._on_change)

    def clone(self, shared: tuple = (), history: bool = False, lazy: bool = False) -> Twin:
        """Return an independent copy of this twin (its state, timers, controllers and extensions).

        `shared` lists objects to share instead of copying (immutable data such as the app catalogs); with
        `history` the clone keeps the watch history too (a watch from an older version replays the same changes);
        `lazy` copies each stored object on its first use, for a twin that never changes again (a base twin).
        """
        with self.lock, _no_gc():
            twin = Twin.__new__(Twin)
            twin.lock = threading.RLock()
            twin.clock = copy.deepcopy(self.clock)
            twin.ids = copy.deepcopy(self.ids)
            twin.store = self.store.clone(twin.clock, twin.ids, twin.lock, history, lazy)
            memo = {id(obj): obj for obj in shared}
            memo.update({id(self): twin, id(self.catalog): self.catalog, id(self.lock): twin.lock,
                         id(self.clock): twin.clock, id(self.ids): twin.ids, id(self.store): twin.store})
            for name, value in self.__dict__.items():
                if name not in twin.__dict__:
                    setattr(twin, name, copy.deepcopy(value, memo))
            twin.store.listeners = [copy.deepcopy(listener, memo) for listener in self.store.listeners]
        credentials.reissue(twin)  # a clone never answers to its original's bearer tokens
        return twin

    # --- resources and objects ---
    def resource(self, name: str) -> Resource:
        """Return a resource by plural, 'plural.group' or kind, e.g. 'pods', 'deployments.apps', 'Deployment'."""
        return _resource(self.catalog, name)

    def get(self, resource: str, namespace: str, name: str) -> dict | None:
        """Return a stored object (do not modify it without update())."""
        return self.store.get(self.resource(resource), namespace, name)

    def list(self, resource: str, namespace: str | None = None, match: Callable[[dict], bool] | None = None):
        """Return stored objects of a resource, sorted by namespace and name."""
        return self.store.list(self.resource(resource), namespace, match)

    def update(self, resource: str, obj: dict) -> dict:
        """Save a changed object (controllers' writes: no admission)."""
        return self.store.update(self.resource(resource), obj)

    def record(self, obj: dict, type_: str, reason: str, message: str, component: str, host: str | None = None,
               field_path: str | None = None) -> dict:
        """Record a Kubernetes Event about obj."""
        return self.recorder.record(obj, type_, reason, message, component, host, field_path)

    # --- controllers ---
    def add_controller(self, controller: Controller) -> None:
        """Register a controller and the resources it watches."""
        self.controllers[controller.name] = controller
        for name in controller.watches:
            self._interest.setdefault(self.resource(name), []).append(controller)

    def _on_change(self, kind: str, res: Resource, obj: dict) -> None:
        """Enqueue the keys interested controllers derive from a change (one that cannot derive them is a fault)."""
        for controller in self._interest.get(res, ()):
            try:
                for key in controller.keys_for(self, kind, res, obj):
                    self.enqueue(controller.name, key)
            except Exception as exc:  # noqa: BLE001 - one odd object must not stop the write or the others
                meta = obj.get("metadata") or {}
                self.faults.record(self, controller.name, (meta.get("namespace", ""), meta.get("name", "")), exc,
                                   None)

    def enqueue(self, controller: str, key: Key) -> None:
        """Ask a controller to reconcile key at the next settle."""
        self._queue[(controller, key)] = None

    def settle(self) -> int:
        """Run controllers until nothing is left to reconcile; return how many reconciles ran.

        Following the wall clock, a call stops after WALL_SLICE seconds: the rest waits for the ticker, as a real
        cluster's controllers catch up after an API call has returned. (Only when the lock is let go depends on the
        wall clock; what the controllers do, and in which order, does not.) A reconcile that raises is a fault of
        its key (core.faults): logged, an Event, reported by the health endpoints; the others go on.
        """
        if self._settling:
            return 0
        until = time.monotonic() + WALL_SLICE if self.clock_mode == "wall" else None
        self._settling = True
        runs = 0
        try:
            while self._queue and (until is None or time.monotonic() < until):
                (name, key), _ = self._queue.popitem(last=False)
                self._reconcile(self.controllers[name], key)
                runs += 1
                if runs > MAX_RECONCILES:
                    self._queue.clear()  # what is left waits for the next change: the cluster must go on
                    self.faults.record(self, name, key, RuntimeError("controllers did not converge"), None)
        finally:
            self._settling = False
        return runs

    def _reconcile(self, controller: Controller, key: Key) -> None:
        """Reconcile one key; an exception becomes a fault of that key, a clean run clears its fault."""
        try:
            controller.reconcile(self, key)
        except Exception as exc:  # noqa: BLE001 - a controller's bug costs one object, never the cluster
            self.faults.record(self, controller.name, key, exc, self._subject(controller, key))
        else:
            if self.faults.active:
                self.faults.clear(controller.name, key)

    def _subject(self, controller: Controller, key: Key) -> dict | None:
        """Return the object a failed key names, for its Event (None when even that lookup fails)."""
        try:
            return controller.subject(self, key)
        except Exception:  # noqa: BLE001 - a key too odd to look up is only logged
            return None

    # --- time ---
    def schedule(self, delay: float, controller: str, key: object) -> None:
        """Reconcile key with controller after `delay` simulated seconds."""
        self._timer_seq += 1
        heapq.heappush(self._timers, (self.clock.now() + max(delay, 0.0), self._timer_seq, controller, key))

    def next_timer(self) -> float | None:
        """Return the time of the earliest pending timer."""
        return self._timers[0][0] if self._timers else None

    def advance_to(self, t: float, stop: Callable[[], bool] | None = None) -> None:
        """Run every timer due up to t in order, settling after each; then set the clock to t.

        Timers due at the same moment are popped as one batch. Following the wall clock, the lock is released
        between reconcile slices and timers, so API calls interleave with a long catch-up; in manual time it is
        held throughout, so nothing slips in between and episodes stay deterministic. With `stop`, return early
        (clock at the last timer run) as soon as stop() is true.
        """
        with contextlib.nullcontext() if self.clock_mode == "wall" else self.lock:
            self._drain()
            while batch := self._due(t):
                if self._run_batch(batch, stop):
                    return
            with self.lock:
                self.clock.advance_to(t)
            self._drain()

    def _drain(self) -> None:
        """Settle completely, taking the lock per slice (one slice in manual time) and yielding between slices."""
        while True:
            with self.lock:
                self.settle()
                if not self._queue:
                    return
            self._paused()

    @staticmethod
    def _paused() -> None:
        """Run the wall-clock pause hooks and let API threads take the lock."""
        for hook in WALL_PAUSE_HOOKS:
            hook()
        time.sleep(0)

    def _due(self, t: float) -> list[tuple[float, int, str, object]]:
        """Pop the timers due at the earliest pending moment, if that is at or before t, in the order set."""
        batch: list[tuple[float, int, str, object]] = []
        with self.lock:
            while self._timers and self._timers[0][0] <= t and (not batch or self._timers[0][0] == batch[0][0]):
                batch.append(heapq.heappop(self._timers))
        return batch

    def _run_batch(self, batch: list, stop: Callable[[], bool] | None) -> bool:
        """Run a batch of timers, settling after each; return True when stop() asked to end early."""
        for i, (at, _, name, key) in enumerate(batch):
            with self.lock:
                self.clock.advance_to(at)
                self.enqueue(name, key)
            self._drain()
            if self.clock_mode == "wall":
                self._paused()
            with self.lock:
                if stop is not None and stop():
                    for timer in batch[i + 1:]:
                        heapq.heappush(self._timers, timer)
                    return True
        return False

    def advance(self, seconds: float) -> None:
        """Let `seconds` of simulated time pass."""
        self.advance_to(self.clock.now() + seconds)
