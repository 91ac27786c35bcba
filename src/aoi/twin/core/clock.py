"""Simulated time for the twin: the twin's logic reads only this clock, never the wall clock."""

from __future__ import annotations

import functools
from datetime import UTC, datetime

# One RFC 3339 parser for the twin and the shell, re-exported here (shellsim sits below the twin).
from aoi.shellsim.pod import parse_time as parse_time

# A fixed origin keeps episodes deterministic: 2025-06-02T09:00:00Z.
EPISODE_EPOCH = 1748854800.0


class SimClock:
    """A clock that moves only when told to.

    Example:
        >>> clock = SimClock(EPISODE_EPOCH)
        >>> clock.advance_to(EPISODE_EPOCH + 5)
        >>> rfc3339(clock.now())
        '2025-06-02T09:00:05Z'
    """

    def __init__(self, start: float = EPISODE_EPOCH):
        self._now = float(start)

    def now(self) -> float:
        """Return the current simulated time in epoch seconds."""
        return self._now

    def advance_to(self, t: float) -> None:
        """Move the clock forward to `t`; moving backwards is ignored."""
        if t > self._now:
            self._now = float(t)


def rfc3339(t: float) -> str:
    """Format epoch seconds as Kubernetes metav1.Time (second precision, UTC).

    Example:
        >>> rfc3339(0)
        '1970-01-01T00:00:00Z'
    """
    return _rfc3339_second(int(t))


@functools.lru_cache(maxsize=1024)  # pure; the events, conditions and statuses of one moment share its seconds
def _rfc3339_second(second: int) -> str:
    """Format whole epoch seconds as metav1.Time."""
    return datetime.fromtimestamp(second, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def rfc3339_micro(t: float) -> str:
    """Format epoch seconds as Kubernetes metav1.MicroTime.

    Example:
        >>> rfc3339_micro(1.5)
        '1970-01-01T00:00:01.500000Z'
    """
    return datetime.fromtimestamp(t, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


