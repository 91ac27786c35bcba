"""Call a component the same way whether it is a local object or a Ray actor handle."""

from __future__ import annotations

from typing import Any


def call(target: Any, method: str, *args: Any, **kwargs: Any) -> Any:
    """Return target.method(*args): directly for an object, through ray.get for an actor handle.

    Example:
        >>> call([3, 1, 2], "index", 1)
        1
    """
    bound = getattr(target, method)
    if hasattr(bound, "remote"):
        import ray

        return ray.get(bound.remote(*args, **kwargs))
    return bound(*args, **kwargs)
