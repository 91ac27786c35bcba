"""The replay buffer between samplers and the trainer: bounded, whole groups, staleness filter on the way out.

A plain class; aoi.echo.actors runs it as a Ray actor, so it lives in its own process and outlives any sampler.
"""

from __future__ import annotations

from collections import deque

from aoi.echo.groups import Group

OK, FULL, CLOSED, DUPLICATE = "ok", "full", "closed", "duplicate"


class ReplayBuffer:
    """Hold up to `capacity` groups in arrival order; hand out the fresh ones, drop and count the stale ones.

    Example:
        >>> buffer = ReplayBuffer(capacity=2)
        >>> g = lambda i, v: Group(group_id=f"s0-i0-{i}", sampler=0, version=v, row=0, samples=(), busy_s=1.0)
        >>> buffer.put(g(0, 0)), buffer.put(g(1, 2)), buffer.put(g(2, 2))
        ('ok', 'ok', 'full')
        >>> taken, dropped = buffer.take(2, min_version=1)
        >>> [t.group_id for t in taken], dropped
        (['s0-i0-1'], 1)
    """

    def __init__(self, capacity: int = 8):
        if capacity < 1:
            raise ValueError(f"buffer capacity {capacity} must be at least 1 group")
        self.capacity, self.closed = capacity, False
        self.groups: deque[Group] = deque()
        self.seen: set[str] = set()  # every group id ever accepted: a re-sent group is refused, never counted twice
        self.incarnations: dict[int, int] = {}
        self.accepted = self.consumed = self.dropped_stale = 0
        self.busy_s = 0.0  # sampler seconds behind the accepted groups
        self.tokens = 0

    def register(self, sampler: int) -> int:
        """Return a sampler's incarnation number: 0 at its first start, one more at each restart."""
        self.incarnations[sampler] = self.incarnations.get(sampler, -1) + 1
        return self.incarnations[sampler]

    def put(self, group: Group) -> str:
        """Add a whole group; say "full" (try again later), "closed" (stop sampling) or "duplicate"."""
        if self.closed:
            return CLOSED
        if group.group_id in self.seen:
            return DUPLICATE
        if len(self.groups) >= self.capacity:
            return FULL
        self.groups.append(group)
        self.seen.add(group.group_id)
        self.accepted += 1
        self.busy_s, self.tokens = self.busy_s + group.busy_s, self.tokens + group.tokens
        return OK

    def take(self, count: int, min_version: int) -> tuple[list[Group], int]:
        """Pop up to `count` groups drawn at `min_version` or later, oldest first; drop older ones; return both."""
        taken, dropped = [], 0
        while self.groups and len(taken) < count:
            group = self.groups.popleft()
            if group.version < min_version:
                dropped += 1
            else:
                taken.append(group)
        self.consumed, self.dropped_stale = self.consumed + len(taken), self.dropped_stale + dropped
        return taken, dropped

    def close(self) -> None:
        """Refuse further groups: samplers read "closed" and stop."""
        self.closed = True

    def stats(self) -> dict:
        """Return the buffer's counters (depth, accepted, consumed, dropped, sampler busy seconds)."""
        return {"depth": len(self.groups), "accepted": self.accepted, "consumed": self.consumed,
                "dropped_stale": self.dropped_stale, "busy_s": self.busy_s, "tokens": self.tokens,
                "ids": [g.group_id for g in self.groups],
                "incarnations": {str(k): v for k, v in self.incarnations.items()}}
