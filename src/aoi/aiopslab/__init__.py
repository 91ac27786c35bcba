"""AOI inside real AIOpsLab: an agent with AIOpsLab's contract that drives AOI's team, and a runner.

Example:
    >>> from aoi.aiopslab import AOIAgent, run_problem  # doctest: +SKIP
"""

from aoi.aiopslab.agent import AOIAgent
from aoi.aiopslab.runner import AIOpsLabMissing, eval_problems, require_aiopslab, run_problem

__all__ = ["AIOpsLabMissing", "AOIAgent", "eval_problems", "require_aiopslab", "run_problem"]
