"""Who may act in an episode, and with which credentials: the env's view of aoi.protocols' roles."""

from __future__ import annotations

from aoi.protocols import ENV_ROLES, Role

ROLES = ENV_ROLES  # what env.step accepts; None is AIOpsLab parity (unrestricted, as admin)
SUBMITTERS = (None, Role.OBSERVER, Role.ADMIN)  # only the Observer (and AIOpsLab's unrestricted agent) submits


def credential(role: str | None) -> Role:
    """Return the identity a role's commands run as: the Observer and AIOpsLab's agent act as admin.

    Example:
        >>> credential(None), credential("probe")
        (<Role.ADMIN: 'admin'>, <Role.PROBE: 'probe'>)
    """
    return Role.ADMIN if role in SUBMITTERS else Role(role)
