"""The environment agents and RL see: AIOpsLab's problems, actions and scoring on the twin (or a real cluster)."""

from aoi.env.core import Env, backend_options, make
from aoi.env.limits import StepLimit
from aoi.env.version import ENV_VERSION

__all__ = ["ENV_VERSION", "EnvClient", "Env", "RemoteEnv", "StepLimit", "backend_options", "make"]


def __getattr__(name: str):
    """Import the HTTP client (and httpx) only when `from aoi.env import EnvClient` or `RemoteEnv` asks for it."""
    if name in ("EnvClient", "RemoteEnv"):
        from aoi.env import client

        return getattr(client, name)
    raise AttributeError(f"module 'aoi.env' has no attribute {name!r}")
