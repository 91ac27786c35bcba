"""Warning events: scheduling failures and their reasons, back-offs, failed pulls, volume provisioning."""

from __future__ import annotations

import re

from aoi.models.expert.analyzers import Evidence
from aoi.models.expert.analyzers.table import owner, rows

SCHEDULING = (("node affinity/selector", "unschedulable_selector"),
              ("unbound immediate PersistentVolumeClaims", "unbound_claim"),
              ("persistentvolumeclaim", "unbound_claim"),
              ("Insufficient", "insufficient_resources"),
              ("untolerated taint", "untolerated_taint"))
REASONS = {"BackOff": "crash_loop", "Failed": "image_pull", "ErrImagePull": "image_pull", "InspectFailed": "image_pull",
           "ProvisioningFailed": "claim_provisioning", "FailedMount": "mount_failed", "Unhealthy": "probe_failed",
           "FailedCreate": "create_failed", "OOMKilling": "crash_loop", "Evicted": "evicted"}


def analyze(table: str) -> list[Evidence]:
    """Turn `kubectl get events --field-selector type=Warning` rows into evidence.

    Example:
        >>> t = ("LAST SEEN   TYPE      REASON             OBJECT                         MESSAGE\\n"
        ...      "51s         Warning   FailedScheduling   pod/api-7d9f8c6b5d-bcdfg       "
        ...      "0/2 nodes are available: 1 node(s) didn't match Pod's node affinity/selector.\\n")
        >>> [(e.kind, e.component) for e in analyze(t)]
        [('unschedulable_selector', 'api')]
    """
    found = []
    for event in rows(table):
        if event.get("TYPE", "Warning") != "Warning":
            continue
        found += _event(event.get("REASON", ""), event.get("OBJECT", ""), event.get("MESSAGE", ""))
    return found


def _event(reason: str, obj: str, message: str) -> list[Evidence]:
    """Classify one Warning event."""
    kind_name = obj.split("/", 1)
    name = kind_name[-1]
    component = owner(name) if kind_name[0] == "pod" else name
    facts = {"object": obj, "reason": reason, "message": message[:300]}
    if reason == "FailedScheduling":
        kinds = [kind for needle, kind in SCHEDULING if needle.lower() in message.lower()]
        main = kinds[0] if kinds else "unschedulable"
        return [Evidence(main, component, f"{obj} cannot be scheduled: {_short(message)}", facts)]
    if reason == "BackOff" and "pulling image" in message:
        return [Evidence("image_pull", component, f"{obj}: {_short(message)}", facts)]
    kind = REASONS.get(reason)
    if kind == "image_pull" and "image" not in message.lower():
        kind = "create_failed"
    return [Evidence(kind, component, f"{obj} {reason}: {_short(message)}", facts)] if kind else []


def _short(message: str) -> str:
    """Return the first sentence of an event message, without pod UIDs."""
    message = re.sub(r"\([0-9a-f-]{36}\)", "", message)
    return message.split(". ")[0][:160]
