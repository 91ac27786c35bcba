"""The environment agents and RL see: AIOpsLab's problems, actions and scoring on the twin (or a real cluster)."""

from aoi.env.core import Env, backend_options, make

__all__ = ["Env", "backend_options", "make"]
