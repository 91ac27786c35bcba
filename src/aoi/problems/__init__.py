"""Fault families -> AIOpsLab problem ids, task types, expected answers and mitigation oracles."""

from aoi.problems.model import Answers, Family, Fault, Problem, Workload
from aoi.problems.registry import list_problems, make, problem_ids

__all__ = ["Answers", "Family", "Fault", "Problem", "Workload", "list_problems", "make", "problem_ids"]
