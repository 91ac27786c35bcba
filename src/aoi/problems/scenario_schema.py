"""The JSON Schema of a fault scenario (docs/scenarios.md documents every field) and the kinds API ops may name."""

from __future__ import annotations

from aoi.apps.catalog import APP_NAMES

# Kind -> resource name (aoi.kube.kinds) of the namespaced kinds a fault's API operation may create, patch, ...
API_KINDS = {
    "Pod": "pods", "Service": "services", "ConfigMap": "configmaps", "Secret": "secrets",
    "ServiceAccount": "serviceaccounts", "PersistentVolumeClaim": "persistentvolumeclaims",
    "Deployment": "deployments", "ReplicaSet": "replicasets", "StatefulSet": "statefulsets",
    "DaemonSet": "daemonsets", "Job": "jobs", "PodChaos": "podchaos", "NetworkChaos": "networkchaos",
}
VERBS = ("create", "patch", "replace", "delete")
PATCH_TYPES = ("strategic", "merge", "json")

_TEXT = {"type": "string", "minLength": 1}
_COMMANDS = {"type": "array", "minItems": 1, "items": _TEXT}

KUBECTL_OP = {
    "type": "object", "required": ["kubectl"], "additionalProperties": False,
    "properties": {"kubectl": _TEXT, "stdin": {"type": "string"}},
}
API_OP = {
    "type": "object", "required": ["api"], "additionalProperties": False,
    "properties": {"api": {
        "type": "object", "required": ["verb", "kind"], "additionalProperties": False,
        "properties": {
            "verb": {"enum": list(VERBS)}, "kind": _TEXT, "namespace": _TEXT, "name": _TEXT,
            "body": {"type": "object"}, "patch": {"type": ["object", "array"]},
            "patch_type": {"enum": list(PATCH_TYPES)},
        },
        "allOf": [
            {"if": {"properties": {"verb": {"enum": ["create", "replace"]}}}, "then": {"required": ["body"]}},
            {"if": {"properties": {"verb": {"const": "patch"}}}, "then": {"required": ["name", "patch"]}},
            {"if": {"properties": {"verb": {"enum": ["delete", "replace"]}}}, "then": {"required": ["name"]}},
        ],
    }},
}
SYMPTOM = {
    "type": "object", "required": ["command", "pattern"], "additionalProperties": False,
    "properties": {"command": _TEXT, "pattern": _TEXT, "description": {"type": "string"}},
}
ROOT_CAUSE = {
    "type": "object", "required": ["system_level", "fault_type", "components"], "additionalProperties": False,
    "properties": {"system_level": _TEXT, "fault_type": _TEXT,
                   "components": {"type": "array", "minItems": 1, "items": _TEXT}},
}

SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "AOI fault scenario",
    "description": "One fault scenario; a file holds one per line (JSON Lines). See docs/scenarios.md.",
    "type": "object",
    "required": ["id", "app", "namespace", "description", "fault", "symptoms", "root_cause",
                 "diagnostic_commands", "solution_commands"],
    "additionalProperties": False,
    "properties": {
        "id": {"type": "string", "pattern": "^[a-z0-9]([a-z0-9-]*[a-z0-9])?$", "maxLength": 120},
        "app": {"enum": list(APP_NAMES)},
        "namespace": _TEXT,
        "description": _TEXT,
        "fault": {"type": "array", "minItems": 1, "items": {"oneOf": [KUBECTL_OP, API_OP]}},
        "symptoms": {"type": "array", "minItems": 1, "items": SYMPTOM},
        "root_cause": ROOT_CAUSE,
        "diagnostic_commands": _COMMANDS,
        "solution_commands": _COMMANDS,
        "source": {"type": "object"},
    },
}
