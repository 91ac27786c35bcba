"""Kubernetes resources as the policy sees them: aliases, scopes, and the objects a kubectl call names."""

from __future__ import annotations

from aoi.safety.kubeargs import Call

# Resources: short names and singulars -> plurals; then the scopes that writes care about.
ALIASES = {"po": "pods", "pod": "pods", "deploy": "deployments", "deployment": "deployments", "svc": "services",
           "service": "services", "ns": "namespaces", "namespace": "namespaces", "no": "nodes", "node": "nodes",
           "pv": "persistentvolumes", "persistentvolume": "persistentvolumes", "pvc": "persistentvolumeclaims",
           "persistentvolumeclaim": "persistentvolumeclaims", "cm": "configmaps", "configmap": "configmaps",
           "sa": "serviceaccounts", "serviceaccount": "serviceaccounts", "rs": "replicasets",
           "replicaset": "replicasets", "sts": "statefulsets", "statefulset": "statefulsets", "ds": "daemonsets",
           "daemonset": "daemonsets", "ep": "endpoints", "ev": "events", "event": "events", "secret": "secrets",
           "job": "jobs", "cj": "cronjobs", "cronjob": "cronjobs", "hpa": "horizontalpodautoscalers",
           "horizontalpodautoscaler": "horizontalpodautoscalers", "ing": "ingresses", "ingress": "ingresses",
           "netpol": "networkpolicies", "networkpolicy": "networkpolicies", "pdb": "poddisruptionbudgets",
           "poddisruptionbudget": "poddisruptionbudgets", "rc": "replicationcontrollers",
           "replicationcontroller": "replicationcontrollers", "quota": "resourcequotas",
           "resourcequota": "resourcequotas", "limits": "limitranges", "limitrange": "limitranges",
           "role": "roles", "rolebinding": "rolebindings", "clusterrole": "clusterroles",
           "clusterrolebinding": "clusterrolebindings", "sc": "storageclasses", "storageclass": "storageclasses",
           "crd": "customresourcedefinitions", "crds": "customresourcedefinitions",
           "customresourcedefinition": "customresourcedefinitions", "pc": "priorityclasses",
           "priorityclass": "priorityclasses", "csr": "certificatesigningrequests",
           "certificatesigningrequest": "certificatesigningrequests", "endpointslice": "endpointslices",
           "lease": "leases", "controllerrevision": "controllerrevisions", "ingressclass": "ingressclasses",
           "runtimeclass": "runtimeclasses", "apiservice": "apiservices", "volumeattachment": "volumeattachments",
           "mutatingwebhookconfiguration": "mutatingwebhookconfigurations",
           "validatingwebhookconfiguration": "validatingwebhookconfigurations", "cs": "componentstatuses"}
NAMESPACED = {"pods", "deployments", "replicasets", "statefulsets", "daemonsets", "services", "endpoints",
              "endpointslices", "configmaps", "secrets", "persistentvolumeclaims", "jobs", "cronjobs", "events",
              "horizontalpodautoscalers", "ingresses", "networkpolicies", "poddisruptionbudgets", "leases",
              "replicationcontrollers", "limitranges", "resourcequotas", "controllerrevisions", "podchaos",
              "networkchaos", "serviceaccounts", "roles", "rolebindings"}
CLUSTER_SCOPED = {"nodes", "persistentvolumes", "namespaces", "clusterroles", "clusterrolebindings", "storageclasses",
                  "customresourcedefinitions", "priorityclasses", "certificatesigningrequests", "ingressclasses",
                  "runtimeclasses", "apiservices", "volumeattachments", "mutatingwebhookconfigurations",
                  "validatingwebhookconfigurations", "componentstatuses", "csidrivers", "csinodes"}
IDENTITY = {"roles", "rolebindings", "clusterroles", "clusterrolebindings", "serviceaccounts"}
POD_DEFAULT = {"logs", "exec", "attach", "port-forward", "top pod"}
NODE_DEFAULT = {"top node", "cordon", "uncordon", "drain"}


def resource(word: str) -> str:
    """Return the plural resource a type names (short names, singulars and TYPE.GROUP resolved).

    Example:
        >>> resource("deploy"), resource("Deployments.apps"), resource("secret.v1.")
        ('deployments', 'deployments', 'secrets')
    """
    base = word.lower().split(".", 1)[0]
    return ALIASES.get(base, base)


def targets(call: Call) -> list[tuple[str, str | None]]:
    """Return the (resource, name) pairs a kubectl call acts on; name is None for a whole type.

    Example:
        >>> from aoi.safety.kubeargs import parse
        >>> targets(parse(["get", "po,svc", "a"]))
        [('pods', 'a'), ('services', 'a')]
    """
    words, path = call.operands, call.path
    if path.startswith("create "):
        kind = "secrets" if path.startswith("create secret") else resource(path.split(" ")[1])
        return [(kind, name) for name in words[:1] or [None]]
    if path in POD_DEFAULT | NODE_DEFAULT:
        default = "pods" if path in POD_DEFAULT else "nodes"
        return [(resource(w.partition("/")[0]), w.partition("/")[2]) if "/" in w else (default, w) for w in words]
    words = [w for i, w in enumerate(words) if "=" not in w and not (i and w.endswith("-"))]
    if not words:
        return []
    if "/" in words[0]:
        return [(resource(w.partition("/")[0]), w.partition("/")[2] or None) for w in words]
    return [(resource(t), name) for t in words[0].split(",") for name in words[1:] or [None]]
