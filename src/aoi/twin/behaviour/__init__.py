"""The behaviour model: app health from cluster and app state, traffic through call graphs, telemetry."""

from aoi.twin.behaviour.model import Behaviour, install

__all__ = ["Behaviour", "install"]
