"""The twin's bearer tokens: drawn from `secrets`, never from the seed, and new for every twin and every clone.

Determinism is about the simulation, not the keys: a token that followed from the seed would let any local process
that knows the seed act as cluster admin on any twin.
"""

from __future__ import annotations

import secrets

from aoi.rbac import IDENTITY_NAMESPACE
from aoi.twin.api.authz import ADMIN, User, service_account_user

ROLE_USERS: dict[str, User] = {"admin": ADMIN,
                               "probe": service_account_user(IDENTITY_NAMESPACE, "probe"),
                               "executor": service_account_user(IDENTITY_NAMESPACE, "executor")}
# Tokens used to be the first draws of the seeded generator; drawing (and discarding) as many keeps every uid,
# name and IP where it was, so the same seed still gives byte-identical observations.
RETIRED_SEEDED_BITS = 256 * len(ROLE_USERS)


def new_token() -> str:
    """Return a fresh bearer token (64 hex characters, as before).

    Example:
        >>> len(new_token()), new_token() == new_token()
        (64, False)
    """
    return secrets.token_hex(32)


def issue(twin) -> None:
    """Give each role (admin, probe, executor) its own fresh bearer token."""
    twin.ids.rng.getrandbits(RETIRED_SEEDED_BITS)
    for role, user in ROLE_USERS.items():
        token = new_token()
        twin.tokens[token] = user
        twin.credentials[role] = token


def reissue(twin) -> None:
    """Replace every token of a copied twin: roles keep their users under new tokens, other tokens are dropped.

    A clone must not answer to its original's tokens (two episodes never share credentials); the seeded
    generator is not touched, so the clone's simulation stays the original's.
    """
    users = {role: twin.tokens[token] for role, token in twin.credentials.items()}
    twin.tokens.clear()
    for role, user in users.items():
        token = new_token()
        twin.tokens[token] = user
        twin.credentials[role] = token
