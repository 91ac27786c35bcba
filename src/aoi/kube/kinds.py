"""The resources `Kube` reaches by name, and which generated client method serves each verb on them.

The official client has one method per (verb, resource, scope): `read_namespaced_service`, `list_persistent_volume`,
`create_namespaced_custom_object`, ... This table maps a resource name as kubectl writes it ("services",
"podchaos") to that method and its positional arguments, so callers say what they want and not which API holds it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Kind:
    """One resource: the API class that serves it, the noun in its method names, its scope, a custom group."""

    api: str              # key of aoi.kube.client.APIS
    noun: str             # e.g. "config_map" in read_namespaced_config_map, or a custom resource's plural
    namespaced: bool = True
    custom: tuple[str, str] | None = None  # (group, version) of a custom resource (served by CustomObjectsApi)


def _custom(group: str, version: str, plural: str) -> Kind:
    return Kind("custom", plural, True, (group, version))


KINDS: dict[str, Kind] = {
    "pods": Kind("core", "pod"), "services": Kind("core", "service"), "configmaps": Kind("core", "config_map"),
    "secrets": Kind("core", "secret"), "serviceaccounts": Kind("core", "service_account"),
    "serviceaccounts/token": Kind("core", "service_account_token"),  # TokenRequest: create with name=<account>
    "persistentvolumeclaims": Kind("core", "persistent_volume_claim"),
    "persistentvolumes": Kind("core", "persistent_volume", namespaced=False),
    "namespaces": Kind("core", "namespace", namespaced=False), "nodes": Kind("core", "node", namespaced=False),
    "deployments": Kind("apps", "deployment"), "replicasets": Kind("apps", "replica_set"),
    "statefulsets": Kind("apps", "stateful_set"), "daemonsets": Kind("apps", "daemon_set"),
    "jobs": Kind("batch", "job"), "roles": Kind("rbac", "role"), "rolebindings": Kind("rbac", "role_binding"),
    "podchaos": _custom("chaos-mesh.org", "v1alpha1", "podchaos"),
    "networkchaos": _custom("chaos-mesh.org", "v1alpha1", "networkchaos"),
}
VERBS = ("get", "list", "create", "replace", "delete", "patch")


def kind_of(name: str) -> Kind:
    """Return the Kind of a resource name (ValueError listing the known ones otherwise).

    Example:
        >>> kind_of("configmaps").noun
        'config_map'
    """
    if name not in KINDS:
        raise ValueError(f"unknown resource {name!r}; use one of: {', '.join(KINDS)} (or add it to aoi.kube.kinds)")
    return KINDS[name]


def method_name(kind: Kind, verb: str, namespace: str | None) -> str:
    """Return the generated method that does `verb` on `kind` (in one namespace, or across all when None).

    Example:
        >>> method_name(kind_of("services"), "get", "shop"), method_name(kind_of("pods"), "list", None)
        ('read_namespaced_service', 'list_pod_for_all_namespaces')
        >>> method_name(kind_of("podchaos"), "create", "shop")
        'create_namespaced_custom_object'
    """
    if verb not in VERBS:
        raise ValueError(f"unknown verb {verb!r}; use one of: {', '.join(VERBS)}")
    if kind.custom:
        return f"{verb}_{'namespaced' if namespace else 'cluster'}_custom_object"
    if kind.namespaced and namespace is None:
        if verb != "list":
            raise ValueError(f"{verb} of {kind.noun} needs a namespace; pass the namespace the object lives in")
        return f"list_{kind.noun}_for_all_namespaces"
    scope = "namespaced_" if kind.namespaced else ""
    return f"{'read' if verb == 'get' else verb}_{scope}{kind.noun}"


def arguments(kind: Kind, namespace: str | None, name: str | None = None) -> list:
    """Return the positional arguments the generated method takes before its keyword ones.

    Example:
        >>> arguments(kind_of("services"), "shop", "cart"), arguments(kind_of("namespaces"), None, "shop")
        (['cart', 'shop'], ['shop'])
        >>> arguments(kind_of("podchaos"), "shop", "kill")
        ['chaos-mesh.org', 'v1alpha1', 'shop', 'podchaos', 'kill']
    """
    named = [name] if name is not None else []
    if kind.custom:
        return [*kind.custom, *([namespace] if namespace else []), kind.noun, *named]
    return [*named, *([namespace] if kind.namespaced and namespace else [])]
