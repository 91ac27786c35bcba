"""The Kubernetes digital twin: a deterministic simulated cluster that serves the real Kubernetes API."""

from aoi.twin.factory import build_twin
from aoi.twin.twin import Twin

__all__ = ["Twin", "build_twin"]
