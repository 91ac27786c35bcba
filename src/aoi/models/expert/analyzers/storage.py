"""Storage: claims stuck Pending, and volumes Released with a stale claimRef that blocks them."""

from __future__ import annotations

from aoi.models.expert.analyzers import Evidence
from aoi.models.expert.analyzers.table import rows


def pending_claims(table: str) -> list[Evidence]:
    """Return PersistentVolumeClaims that are not Bound (`kubectl get pvc`).

    Example:
        >>> [e.component for e in pending_claims("NAME     STATUS    VOLUME\\ndata-0   Pending   \\n")]
        ['data-0']
    """
    return [Evidence("claim_pending", r["NAME"], f"PersistentVolumeClaim {r['NAME']} is {r.get('STATUS')}",
                     {"claim": r["NAME"], "storageclass": r.get("STORAGECLASS", "")})
            for r in rows(table) if r.get("STATUS") not in ("Bound", None)]


def released_volumes(table: str, namespace: str = "") -> list[Evidence]:
    """Return PersistentVolumes Released but still holding a claimRef (`kubectl get pv`), in `namespace` if given.

    Example:
        >>> t = "NAME    CAPACITY   STATUS     CLAIM\\nvol-1   1Gi        Released   shop/data-0\\n"
        >>> [(e.component, e.facts["claim"]) for e in released_volumes(t)]
        [('vol-1', 'shop/data-0')]
    """
    found = []
    for r in rows(table):
        claim = r.get("CLAIM", "")
        if r.get("STATUS") != "Released" or (namespace and not claim.startswith(namespace + "/")):
            continue
        found.append(Evidence("volume_released", r["NAME"], f"PersistentVolume {r['NAME']} is Released but still "
                              f"claimed by {claim}", {"volume": r["NAME"], "claim": claim}))
    return found
