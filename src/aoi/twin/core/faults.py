"""Reconcile faults: a controller that raises on one object costs that object, never the cluster.

The twin catches the exception, logs it with the object, records a Warning Event about the object and keeps the
fault until a later reconcile of the same key succeeds; the health endpoints (/healthz, /readyz) report the faults
still active. Everything else keeps reconciling, as Kubernetes' controllers do when one object is odd.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from aoi.twin.core.interface import TwinView

log = logging.getLogger("aoi.twin")
REASON = "ReconcileError"
SHOWN = 3  # faults a health report names (the count covers the rest)


@dataclass(frozen=True)
class Fault:
    """One failed reconcile: which controller, which key, what it raised, at which simulated second."""

    controller: str
    key: str
    error: str
    at: float

    def line(self) -> str:
        """Return the fault in one line, e.g. `daemonset on ('', 'kind-worker'): KeyError: 'spec'`."""
        return f"{self.controller} on {self.key}: {self.error}"


def describe(exc: BaseException) -> str:
    """Return an exception as `Type: message` on one line, at most 200 characters.

    Example:
        >>> describe(KeyError("spec"))
        "KeyError: 'spec'"
    """
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}"[:200]


class Faults:
    """The active reconcile faults of one twin (keyed by controller and key) and how many there have been."""

    def __init__(self):
        self.active: dict[tuple[str, object], Fault] = {}
        self.total = 0
        self.last: Fault | None = None  # the latest, even once its key reconciled cleanly

    def record(self, twin: TwinView, controller: str, key: object, exc: BaseException,
               subject: dict | None) -> Fault:
        """Log a failed reconcile with its object, keep it active and record a Warning Event about the object."""
        fault = Fault(controller, repr(key), describe(exc), twin.clock.now())
        self.active[(controller, key)] = fault
        self.total += 1
        self.last = fault
        log.error("twin: the %s controller failed on %r (the rest keeps reconciling): %s", controller, key,
                  fault.error, exc_info=exc)
        if subject is not None:
            self._event(twin, subject, fault)
        return fault

    @staticmethod
    def _event(twin: TwinView, subject: dict, fault: Fault) -> None:
        """Record the fault as an Event about its object (a subject too odd to describe is only logged)."""
        message = (f"the {fault.controller} controller failed to reconcile this object ({fault.error}): it or "
                   "an object it reads has a shape the controller cannot handle; the rest of the cluster keeps "
                   "reconciling")
        try:
            twin.record(subject, "Warning", REASON, message, f"{fault.controller}-controller")
        except Exception:
            log.exception("twin: could not record the Event for %s", fault.line())

    def clear(self, controller: str, key: object) -> None:
        """Forget a fault once its key reconciled without one."""
        self.active.pop((controller, key), None)

    def report(self) -> str:
        """Return the health check's line: empty when nothing fails, else a count and the first faults."""
        if not self.active:
            return ""
        faults = sorted(self.active.values(), key=lambda f: (f.controller, f.key))
        shown = "; ".join(f.line() for f in faults[:SHOWN])
        more = f" (and {len(faults) - SHOWN} more)" if len(faults) > SHOWN else ""
        return f"{len(faults)} object(s) fail to reconcile: {shown}{more}"
