"""The smallest valid body of each built-in kind, for the soak's creates of kinds the twin holds none of yet."""

from __future__ import annotations

import copy

CONTAINERS = [{"name": "c", "image": "busybox:1.36", "command": ["sleep", "3600"]}]
SELECTED = {"matchLabels": {"app": "soak"}}
TEMPLATE = {"metadata": {"labels": {"app": "soak"}}, "spec": {"containers": CONTAINERS}}
RULES = [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]
ROLE_REF = {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"}
BODIES: dict[str, dict] = {
    "Pod": {"spec": {"containers": CONTAINERS}},
    "Service": {"spec": {"selector": {"app": "soak"}, "ports": [{"port": 80, "targetPort": 8080}]}},
    "Endpoints": {"subsets": [{"addresses": [{"ip": "10.244.1.250"}], "ports": [{"port": 80}]}]},
    "ConfigMap": {"data": {"k": "v"}},
    "Secret": {"stringData": {"k": "v"}},
    "ServiceAccount": {},
    "PersistentVolumeClaim": {"spec": {"accessModes": ["ReadWriteOnce"],
                                       "resources": {"requests": {"storage": "1Gi"}}}},
    "Event": {"involvedObject": {"kind": "Pod", "name": "x"}, "reason": "Soak", "message": "m", "type": "Normal"},
    "ReplicationController": {"spec": {"replicas": 1, "selector": {"app": "soak"}, "template": TEMPLATE}},
    "ResourceQuota": {"spec": {"hard": {"pods": "50"}}},
    "LimitRange": {"spec": {"limits": [{"type": "Container", "default": {"cpu": "100m"}}]}},
    "Namespace": {},
    "Node": {"metadata": {"labels": {"kubernetes.io/hostname": "soak"}}},
    "PersistentVolume": {"spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                                  "hostPath": {"path": "/tmp/soak"}}},
    "Deployment": {"spec": {"replicas": 1, "selector": SELECTED, "template": TEMPLATE}},
    "ReplicaSet": {"spec": {"replicas": 1, "selector": SELECTED, "template": TEMPLATE}},
    "StatefulSet": {"spec": {"replicas": 1, "serviceName": "soak", "selector": SELECTED, "template": TEMPLATE}},
    "DaemonSet": {"spec": {"selector": SELECTED, "template": TEMPLATE}},
    "ControllerRevision": {"revision": 1, "data": {}},
    "Job": {"spec": {"template": {"spec": {"containers": CONTAINERS, "restartPolicy": "Never"}}}},
    "CronJob": {"spec": {"schedule": "*/1 * * * *", "jobTemplate": {"spec": {"template": {
        "spec": {"containers": CONTAINERS, "restartPolicy": "OnFailure"}}}}}},
    "HorizontalPodAutoscaler": {"spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                                            "name": "geo"}, "minReplicas": 1, "maxReplicas": 3}},
    "EndpointSlice": {"addressType": "IPv4", "endpoints": [{"addresses": ["10.244.1.250"]}], "ports": [{"port": 80}]},
    "NetworkPolicy": {"spec": {"podSelector": {}}},
    "Ingress": {"spec": {"rules": [{"host": "soak.example"}]}},
    "IngressClass": {"spec": {"controller": "example.com/soak"}},
    "PodDisruptionBudget": {"spec": {"minAvailable": 1, "selector": SELECTED}},
    "PriorityClass": {"value": 1000},
    "CustomResourceDefinition": {"spec": {"group": "soak.example.com", "scope": "Namespaced",
                                          "names": {"plural": "soaks", "kind": "Soak"},
                                          "versions": [{"name": "v1", "served": True, "storage": True}]}},
    "Lease": {"spec": {"holderIdentity": "soak"}},
    "StorageClass": {"provisioner": "example.com/soak"},
    "Role": {"rules": RULES},
    "RoleBinding": {"roleRef": ROLE_REF, "subjects": [{"kind": "User", "name": "soak"}]},
    "ClusterRole": {"rules": RULES},
    "ClusterRoleBinding": {"roleRef": ROLE_REF, "subjects": [{"kind": "User", "name": "soak"}]},
    "PodChaos": {"spec": {"action": "pod-kill", "mode": "one", "selector": {"labelSelectors": {"app": "soak"}}}},
    "NetworkChaos": {"spec": {"action": "delay", "mode": "all", "selector": {"labelSelectors": {"app": "soak"}},
                              "delay": {"latency": "10ms"}, "duration": "30s"}},
}


def minimal(kind: str, namespace: str) -> dict:
    """Return a fresh copy of a kind's smallest valid body (no name yet); chaos selects within namespace.

    Example:
        >>> minimal("ConfigMap", "default")
        {'data': {'k': 'v'}, 'metadata': {}}
    """
    body = copy.deepcopy(BODIES.get(kind, {}))
    body.setdefault("metadata", {})
    if kind in ("PodChaos", "NetworkChaos"):
        body["spec"]["selector"]["namespaces"] = [namespace]
    return body
