"""Authentication by bearer token and authorization by the RBAC objects stored in the twin."""

from __future__ import annotations

from dataclasses import dataclass, field

from aoi.twin.core.errors import ApiError


@dataclass(frozen=True)
class User:
    """An authenticated identity."""

    name: str
    groups: tuple[str, ...] = field(default_factory=tuple)

    @property
    def is_admin(self) -> bool:
        """Tell whether the user is in system:masters (bypasses RBAC, as on a real cluster)."""
        return "system:masters" in self.groups


def service_account_user(namespace: str, name: str) -> User:
    """Return the user a service account token authenticates as."""
    return User(f"system:serviceaccount:{namespace}:{name}",
                ("system:serviceaccounts", f"system:serviceaccounts:{namespace}", "system:authenticated"))


# system:basic-user, bound to system:authenticated on every cluster: anyone may ask what they may do.
BASIC_USER_RULES = (
    {"verbs": ["create"], "apiGroups": ["authorization.k8s.io"],
     "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"]},
    {"verbs": ["create"], "apiGroups": ["authentication.k8s.io"], "resources": ["selfsubjectreviews"]},
)
# system:discovery and system:public-info-viewer, also bound to system:authenticated: the discovery and health paths.
DISCOVERY_RULES = (
    {"verbs": ["get"], "nonResourceURLs": ["/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi",
                                           "/openapi/*", "/readyz", "/version", "/version/"]},
)
ADMIN = User("kubernetes-admin", ("kubeadm:cluster-admins", "system:masters", "system:authenticated"))


def authenticate(tokens: dict[str, User], header: str | None) -> User:
    """Return the user of an `Authorization: Bearer <token>` header, or raise 401."""
    if header and header.lower().startswith("bearer "):
        user = tokens.get(header[7:].strip())
        if user is not None:
            return user
    raise ApiError(401, "Unauthorized", "Unauthorized")


def _subject_matches(subject: dict, user: User) -> bool:
    """Tell whether an RBAC subject names the user or one of its groups."""
    kind = subject.get("kind")
    if kind == "User":
        return subject.get("name") == user.name
    if kind == "Group":
        return subject.get("name") in user.groups
    if kind == "ServiceAccount":
        return user.name == f"system:serviceaccount:{subject.get('namespace')}:{subject.get('name')}"
    return False


def _rule_allows(rule: dict, verb: str, group: str, resource: str, name: str) -> bool:
    """Tell whether one PolicyRule allows the request (resource is 'plural' or 'plural/sub')."""
    verbs, groups, resources = rule.get("verbs") or [], rule.get("apiGroups") or [], rule.get("resources") or []
    names = rule.get("resourceNames") or []
    return (("*" in verbs or verb in verbs) and ("*" in groups or group in groups)
            and ("*" in resources or resource in resources
                 or ("/" in resource and f"*/{resource.split('/', 1)[1]}" in resources))
            and (not names or name in names))


def rules_for(twin, user: User, namespace: str) -> list[dict]:
    """Return every PolicyRule bound to the user cluster-wide or in the namespace."""
    rules = [dict(r) for r in BASIC_USER_RULES] if "system:authenticated" in user.groups else []
    for binding in twin.list("clusterrolebindings"):
        if any(_subject_matches(s, user) for s in binding.get("subjects") or []):
            role = twin.get("clusterroles", "", binding["roleRef"]["name"])
            rules += (role or {}).get("rules") or []
    if namespace:
        for binding in twin.list("rolebindings", namespace):
            if any(_subject_matches(s, user) for s in binding.get("subjects") or []):
                ref = binding["roleRef"]
                role = (twin.get("clusterroles", "", ref["name"]) if ref.get("kind") == "ClusterRole"
                        else twin.get("roles", namespace, ref["name"]))
                rules += (role or {}).get("rules") or []
    return rules


def allowed(twin, user: User, verb: str, group: str, resource: str, subresource: str = "", namespace: str = "",
            name: str = "") -> bool:
    """Decide a resource request as the RBAC authorizer would."""
    if user.is_admin:
        return True
    target = f"{resource}/{subresource}" if subresource else resource
    return any(_rule_allows(r, verb, group, target, name) for r in rules_for(twin, user, namespace))



def non_resource_rules(twin, user: User) -> list[dict]:
    """Return the rules granting non-resource URLs to the user (only cluster-wide bindings can grant them)."""
    rules = [dict(r) for r in DISCOVERY_RULES] if "system:authenticated" in user.groups else []
    return rules + [r for r in rules_for(twin, user, "") if r.get("nonResourceURLs")]


def _url_matches(pattern: str, path: str) -> bool:
    """Tell whether a nonResourceURLs entry covers a path (`*` at the end matches any suffix)."""
    return pattern == path or (pattern.endswith("*") and path.startswith(pattern[:-1]))


def non_resource_allowed(twin, user: User, verb: str, path: str) -> bool:
    """Decide a non-resource request (a path such as /healthz) as the RBAC authorizer would.

    Example:
        >>> non_resource_allowed(None, ADMIN, "get", "/metrics")
        True
    """
    if user.is_admin:
        return True
    return any(("*" in (r.get("verbs") or []) or verb in (r.get("verbs") or []))
               and any(_url_matches(p, path) for p in r.get("nonResourceURLs") or [])
               for r in non_resource_rules(twin, user))
