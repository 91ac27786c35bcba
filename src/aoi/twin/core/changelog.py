"""The watch history: the store's recent changes, bounded by their size in bytes rather than by their count.

A count bound lets a cluster of large objects (an Endpoints of 1,000 addresses is ~120 KB) hold gigabytes of
history; a byte budget holds memory flat whatever the objects weigh. A watch that asks for a version older than
the oldest change kept is answered 410 Expired, as kube-apiserver answers one its watch cache has dropped.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from typing import Protocol

HISTORY_BYTES = 64 * 1024 * 1024  # default budget: the JSON of the changes kept, plus a fixed cost per entry
ENTRY_OVERHEAD = 200  # bytes an entry costs beyond its JSON (the Change object, the deque slot, the bytes header)


class Entry(Protocol):
    """What the log keeps: a change with its resource version and its object as JSON."""

    rv: int
    data: bytes


class ChangeLog:
    """Changes in resource-version order, the oldest dropped while their bytes exceed the budget.

    Example:
        >>> from types import SimpleNamespace as Change
        >>> log = ChangeLog(budget=1000)
        >>> for rv in range(2, 7):
        ...     log.append(Change(rv=rv, data=b"x" * 200))
        >>> [c.rv for c in log.since(0)], log.oldest_rv(current=6), log.bytes <= 1000
        ([5, 6], 4, True)
    """

    def __init__(self, budget: int = HISTORY_BYTES):
        self.bytes = 0
        self._entries: deque[Entry] = deque()
        self.budget = budget

    @property
    def budget(self) -> int:
        """The most bytes the kept changes may hold; setting it drops the oldest at once when they exceed it."""
        return self._budget

    @budget.setter
    def budget(self, value: int) -> None:
        if not isinstance(value, int) or value < 0:
            raise ValueError(f"the watch history budget must be a whole number of bytes, 0 or more; got {value!r}")
        self._budget = value
        self._trim()

    def __len__(self) -> int:
        return len(self._entries)

    def fresh(self) -> ChangeLog:
        """Return an empty log with the same budget (a cloned twin's watches start afresh)."""
        return ChangeLog(self.budget)

    def copy(self) -> ChangeLog:
        """Return a log holding the same changes (entries are immutable and shared)."""
        new = ChangeLog(self.budget)
        new._entries, new.bytes = deque(self._entries), self.bytes
        return new

    def append(self, entry: Entry) -> None:
        """Keep a change, then drop the oldest ones until the log fits its budget."""
        self._entries.append(entry)
        self.bytes += _size(entry)
        self._trim()

    def _trim(self) -> None:
        """Drop the oldest changes until the kept ones fit the budget."""
        while self.bytes > self._budget and self._entries:
            self.bytes -= _size(self._entries.popleft())

    def since(self, rv: int) -> Iterator[Entry]:
        """Yield the changes after resource version rv, oldest first (walks back from the newest: followers are
        usually only a few changes behind)."""
        newer = []
        for entry in reversed(self._entries):
            if entry.rv <= rv:
                break
            newer.append(entry)
        return reversed(newer)

    def oldest_rv(self, current: int) -> int:
        """Return the oldest resource version a watch can replay from (`current` when nothing is kept)."""
        return self._entries[0].rv - 1 if self._entries else current


def _size(entry: Entry) -> int:
    """Estimate the memory an entry holds: its JSON, already serialized when it was logged, plus a fixed cost."""
    return len(entry.data) + ENTRY_OVERHEAD
