"""The environment agents and RL see: AIOpsLab's problems, actions and scoring on the twin (or a real cluster)."""

from aoi.env.core import Env, backend_options, make
from aoi.env.limits import StepLimit
from aoi.env.version import ENV_VERSION

__all__ = ["ENV_VERSION", "Env", "StepLimit", "backend_options", "make"]
