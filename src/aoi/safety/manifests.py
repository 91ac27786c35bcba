"""Manifests piped into `kubectl apply -f -` by exec_shell's shell: the objects they name, read before kubectl runs."""

from __future__ import annotations

import yaml

from aoi.safety.resources import resource
from aoi.safety.shellwords import Refused

MAX_BYTES = 1024 * 1024  # a large ConfigMap fits; more is a payload
ONE_BY_ONE = "pipe one object per YAML document into kubectl apply -f - (e.g. kubectl get cm X -o yaml | sed ...)"


def resources(data: bytes) -> list[str]:
    """Return the resource of each object in a manifest stream (YAML or JSON); raise Refused when it cannot be read.

    Example:
        >>> resources(b"kind: ConfigMap\\nmetadata: {name: a}\\n---\\nkind: Service\\nmetadata: {name: b}\\n")
        ['configmaps', 'services']
        >>> resources(b"kind: List\\nitems: []\\n")  # doctest: +NORMALIZE_WHITESPACE
        Traceback (most recent call last):
        aoi.safety.shellwords.Refused: Each document must be one object with a kind and a name, not a List — pipe one
        object per YAML document into kubectl apply -f - (e.g. kubectl get cm X -o yaml | sed ...).
    """
    if len(data) > MAX_BYTES:
        raise Refused(f"A manifest of {len(data)} bytes is refused (at most {MAX_BYTES}) — apply fewer objects.")
    try:
        docs = [doc for doc in yaml.safe_load_all(data.decode()) if doc is not None]
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise Refused(f"The manifest on stdin is not valid YAML ({' '.join(str(exc).split())[:120]}) — "
                      f"{ONE_BY_ONE}.") from None
    if not docs:
        raise Refused(f"kubectl apply -f - received no objects on stdin — {ONE_BY_ONE}.")
    return [_resource(doc) for doc in docs]


def _resource(doc: object) -> str:
    """Return one document's resource, or refuse a document that is not one named object."""
    kind = doc.get("kind") if isinstance(doc, dict) else None
    name = (doc.get("metadata") or {}).get("name") if isinstance(doc, dict) and isinstance(doc.get("metadata"),
                                                                                               dict) else None
    if not isinstance(kind, str) or not kind or kind.endswith("List") or not isinstance(name, str):
        raise Refused(f"Each document must be one object with a kind and a name, not a List — {ONE_BY_ONE}.")
    return resource(kind)
