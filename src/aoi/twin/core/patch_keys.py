"""Strategic-merge-patch metadata: which lists merge, and by which key, per kind and field path.

Facts come from the `patchStrategy` / `patchMergeKey` struct tags of k8s.io/api v0.32 (`core/v1/types.go`,
`apps/v1`, `batch/v1`, `meta/v1`). The schema is a tree shaped like the Go types, so one field name can
merge by different keys in different places (container `ports` by `containerPort`, Service `ports` by
`port`). A field missing from the tree has no tag: maps merge key by key and lists are replaced whole.

Deliberate choices worth knowing:

- Node `spec.taints` has no patch tags upstream (`+listType=atomic`), so it is replaced. `kubectl taint`
  relies on that: it sends the complete new taint list, and removes a taint by leaving it out.
- `tolerations`, `envFrom`, `args`, `command`, Endpoints `subsets` and `metadata.managedFields` are
  replaced (no tags), as upstream.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import NamedTuple


class Meta(NamedTuple):
    """Patch metadata of one field: the list strategy, its merge key and the nested schema."""

    strategy: str = ""  # "merge" for merged lists; "" for the default (maps merge, lists replace)
    key: str = ""  # merge key of list elements; "" with strategy "merge" means a set of scalars
    fields: Mapping[str, Meta] = MappingProxyType({})  # schema of the nested object or list element


NONE = Meta()


def _obj(**fields: Meta) -> Meta:
    """Return the metadata of a plain nested object with these fields."""
    return Meta(fields=MappingProxyType(fields))


def _merge(key: str = "", **fields: Meta) -> Meta:
    """Return the metadata of a list merged by `key` (a scalar set when `key` is empty)."""
    return Meta("merge", key, MappingProxyType(fields))


_BY_TYPE = _merge("type")
OBJECT_META = _obj(finalizers=_merge(), ownerReferences=_merge("uid"))
CONTAINER = (
    _merge("name", env=_merge("name"), ports=_merge("containerPort"),
           volumeMounts=_merge("mountPath"), volumeDevices=_merge("devicePath"))
)
POD_SPEC = _obj(
    containers=CONTAINER, initContainers=CONTAINER, ephemeralContainers=CONTAINER,
    volumes=_merge("name"), imagePullSecrets=_merge("name"), hostAliases=_merge("ip"),
    topologySpreadConstraints=_merge("topologyKey"), resourceClaims=_merge("name"),
    schedulingGates=_merge("name"),
)
POD_TEMPLATE = _obj(metadata=OBJECT_META, spec=POD_SPEC)
STATUS = _obj(conditions=_BY_TYPE)
_WORKLOAD = {"spec": _obj(template=POD_TEMPLATE)}

_KINDS: dict[str, dict[str, Meta]] = {
    "Pod": {"spec": POD_SPEC,
            "status": _obj(conditions=_BY_TYPE, podIPs=_merge("ip"), hostIPs=_merge("ip"))},
    "PodTemplate": {"template": POD_TEMPLATE},
    "Deployment": _WORKLOAD, "ReplicaSet": _WORKLOAD, "StatefulSet": _WORKLOAD,
    "DaemonSet": _WORKLOAD, "Job": _WORKLOAD, "ReplicationController": _WORKLOAD,
    "CronJob": {"spec": _obj(jobTemplate=_obj(metadata=OBJECT_META, spec=_obj(template=POD_TEMPLATE)))},
    "Service": {"spec": _obj(ports=_merge("port"))},
    "Node": {"status": _obj(conditions=_BY_TYPE, addresses=_merge("type"))},
    "ServiceAccount": {"secrets": _merge("name")},
}


def schema_for(kind: str) -> Meta:
    """Return the patch schema of an object of `kind`; unknown kinds get metadata and status conditions.

    Args:
        kind: the object's kind, e.g. "Deployment".

    Returns:
        The root `Meta`, whose `fields` map top-level field names to their metadata.

    Example:
        >>> schema_for("Service").fields["spec"].fields["ports"].key
        'port'
    """
    return _obj(**{"metadata": OBJECT_META, "status": STATUS, **_KINDS.get(kind, {})})
