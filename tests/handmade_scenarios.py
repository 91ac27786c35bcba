"""Hand-made HotelReservation scenarios for the reward and execution tests: one healthy baseline and its variants."""

from __future__ import annotations

import copy

NS = "test-hotel-reservation"


def scale_zero() -> dict:
    """Return a scenario that scales geo to zero and scales it back."""
    return {
        "id": "geo-scaled-to-zero", "app": "hotel-reservation", "namespace": NS,
        "description": "The geo deployment is scaled to zero replicas, so nearby-hotel searches fail.",
        "fault": [{"kubectl": f"kubectl scale deployment geo --replicas=0 -n {NS}"}],
        "symptoms": [{"command": f"kubectl get deployment geo -n {NS}", "pattern": r"geo\s+0/0",
                      "description": "geo runs no replica"}],
        "root_cause": {"system_level": "Application", "fault_type": "Operation Error", "components": ["geo"]},
        "diagnostic_commands": [f"kubectl get deployments -n {NS}"],
        "solution_commands": [f"kubectl scale deployment geo --replicas=1 -n {NS}"],
    }


def variant(base: dict, **changes) -> dict:
    """Return a deep copy of a scenario with some fields replaced."""
    return {**copy.deepcopy(base), **changes}


def renamed(base: dict) -> dict:
    """Return the scenario under a new id and a reworded description: a renamed copy, same fault."""
    return variant(base, id="geo-replicas-gone",
                   description="Someone scaled the geo deployment down to zero replicas; searches by location fail.")


def bad_image() -> dict:
    """Return a different fault kind: the profile deployment's image does not exist (pods cannot pull it)."""
    return {
        "id": "profile-image-missing", "app": "hotel-reservation", "namespace": NS,
        "description": "The profile service was rolled out with an image tag that does not exist, so its new pod "
                       "cannot pull the image and hotel profiles stop loading.",
        "fault": [{"kubectl": f"kubectl set image deployment/profile hotel-reserv-profile="
                              f"yinfangchen/hotel-profile-missing:0.0 -n {NS}"}],
        "symptoms": [{"command": f"kubectl get pods -n {NS} -l io.kompose.service=profile",
                      "pattern": "ErrImagePull|ImagePullBackOff", "description": "profile's pod cannot pull"}],
        "root_cause": {"system_level": "Virtualization", "fault_type": "Misconfiguration",
                       "components": ["profile"]},
        "diagnostic_commands": [f"kubectl get pods -n {NS}", f"kubectl describe deployment profile -n {NS}"],
        "solution_commands": [f"kubectl rollout undo deployment/profile -n {NS}"],
    }
