"""Evaluation at scale: K attempts per problem over a worker pool, resumable; avg@k/best@k metrics; reports."""

from aoi.evaluate.metrics import avg_at_k, best_at_k, std_over_attempts, summarize
from aoi.evaluate.runner import run_eval
from aoi.evaluate.summary import Summary

__all__ = ["Summary", "avg_at_k", "best_at_k", "run_eval", "std_over_attempts", "summarize"]
