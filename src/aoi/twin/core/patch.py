"""Apply PATCH bodies the way the Kubernetes API server does: strategic merge, merge, JSON and apply patches.

The strategic merge follows k8s.io/apimachinery `strategicpatch` (server side: parallel lists merged, unmatched
nulls ignored), including its list order: items named by the patch (or by `$setElementOrder/<list>`) come in
that order, and live items the patch does not name are slotted back in by their live position. So a container
added without `$setElementOrder` lands first, as on a real cluster. Two simplifications: `$patch: delete` on
a map removes the key (upstream leaves `{}`, which Go then mostly drops), and directives inside values that
are added or replaced whole are stripped instead of being stored.
"""

from __future__ import annotations

import copy

import jsonpatch
import orjson
import yaml

from aoi.twin.core.patch_keys import NONE, Meta, schema_for
from aoi.twin.core.structure import as_json

SMP, MERGE, JSON_PATCH, APPLY = PATCH_TYPES = (
    "application/strategic-merge-patch+json", "application/merge-patch+json",
    "application/json-patch+json", "application/apply-patch+yaml",
)
_DELETED = object()  # what a map merges to under `$patch: delete`
_ORDER = "$setElementOrder/"
_DELETE_FROM = "$deleteFromPrimitiveList/"
_JSON_TYPES = {dict: "object", list: "array", str: "string", int: "number", float: "number", bool: "boolean"}


class PatchError(ValueError):
    """A PATCH body that cannot be applied; `code` is the HTTP status to answer (400, 415 or 422)."""

    def __init__(self, message: str, code: int = 400):
        super().__init__(message)
        self.code = code


def apply_patch(obj: dict, body: bytes, content_type: str, kind: str) -> dict:
    """Return a new object: `obj` with the PATCH `body` of `content_type` applied; `obj` is left untouched.

    Args:
        obj: the live object (`{}` when an apply patch creates it).
        body: the raw request body.
        content_type: the request's Content-Type, parameters allowed (`...; charset=utf-8`).
        kind: the object's kind, which selects the strategic-merge keys.

    Raises:
        PatchError: 415 for an unsupported content type, 400 for a malformed body, 422 when it cannot apply.

    Example:
        >>> apply_patch({"spec": {"replicas": 1}}, b'{"spec":{"replicas":0}}', MERGE, "Deployment")
        {'spec': {'replicas': 0}}
    """
    media = content_type.split(";", 1)[0].strip().lower()
    if media not in PATCH_TYPES:
        raise PatchError(f"unsupported patch content type {media!r}: send one of {', '.join(PATCH_TYPES)}", 415)
    doc = _load_yaml(body) if media == APPLY else _load_json(body)
    if media == JSON_PATCH:
        return json_patch(obj, doc)
    _require_object(doc, media)
    if media == MERGE:
        return merge_patch(obj, doc)
    return strategic_merge(obj, doc, kind or str(doc.get("kind", "")))


def strategic_merge(original: dict, patch: dict, kind: str) -> dict:
    """Return `original` with a strategic merge `patch` applied, using the merge keys of `kind`.

    Example:
        >>> pod = {"spec": {"containers": [{"name": "a", "image": "x:1"}, {"name": "b", "image": "y"}]}}
        >>> strategic_merge(pod, {"spec": {"containers": [{"name": "a", "image": "x:2"}]}}, "Pod")["spec"]
        {'containers': [{'name': 'a', 'image': 'x:2'}, {'name': 'b', 'image': 'y'}]}
    """
    _require_object(patch, SMP)
    merged = _merge_map(copy.deepcopy(original), copy.deepcopy(patch), schema_for(kind))
    return {} if merged is _DELETED else merged


def merge_patch(original, patch):
    """Return `original` with an RFC 7386 JSON merge `patch` applied (`null` deletes a key, lists replace).

    Example:
        >>> merge_patch({"metadata": {"labels": {"a": "1", "b": "2"}}}, {"metadata": {"labels": {"a": None}}})
        {'metadata': {'labels': {'b': '2'}}}
    """
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    return _merge_into(copy.deepcopy(original) if isinstance(original, dict) else {}, patch)


def json_patch(original, ops: list):
    """Return `original` with the RFC 6902 operations `ops` applied.

    Raises:
        PatchError: 400 when `ops` is not a list of operations, 422 when an operation fails (a `test` included).

    Example:
        >>> json_patch({"spec": {"replicas": 3}}, [{"op": "replace", "path": "/spec/replicas", "value": 1}])
        {'spec': {'replicas': 1}}
    """
    if not isinstance(ops, list):
        raise PatchError(f"a JSON patch must be an array of operations, not a JSON {_json_type(ops)}: send "
                         '[{"op": "replace", "path": "/spec/replicas", "value": 1}]', 400)
    try:
        return jsonpatch.JsonPatch(ops).apply(original, in_place=False)
    except jsonpatch.InvalidJsonPatch as exc:
        raise PatchError(f"invalid JSON patch ({exc}): give every operation an op, a path and a value", 400) from None
    except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException) as exc:
        raise PatchError(f"JSON patch operation failed ({exc}): check its path and value against the "
                         "current object", 422) from None


def _merge_into(target: dict, patch: dict) -> dict:
    """Apply a merge patch to `target` in place and return it."""
    for key, value in patch.items():
        if value is None:
            target.pop(key, None)
        elif isinstance(value, dict):
            target[key] = _merge_into(_of(target.get(key), dict), value)
        else:
            target[key] = copy.deepcopy(value)
    return target


def _merge_map(orig: dict, patch: dict, meta: Meta):
    """Merge a strategic patch map into `orig` in place; return it, a replacement, or `_DELETED`."""
    directive = patch.pop("$patch", "merge")
    if directive == "replace":
        return _clean(patch)
    if directive == "delete":
        return _DELETED
    if directive != "merge":
        raise PatchError(f"unknown $patch directive {directive!r}: use replace, delete or merge", 422)
    _retain_keys(orig, patch)
    _set_element_orders(orig, patch, meta)
    for key in sorted(patch, key=lambda k: k.startswith(_DELETE_FROM)):  # deletions after additions
        _merge_field(orig, key, patch[key], meta)
    return orig


def _merge_field(orig: dict, key: str, value, meta: Meta) -> None:
    """Merge one patch field into `orig`, following the field's patch metadata."""
    if key.startswith(_DELETE_FROM):
        return _delete_from_list(orig, key[len(_DELETE_FROM):], value)
    if key.startswith("$"):
        raise PatchError(f"unknown patch directive {key!r}: use $patch, $retainKeys, $setElementOrder/<list> "
                         "or $deleteFromPrimitiveList/<list>", 422)
    field = meta.fields.get(key, NONE)
    if value is None:
        orig.pop(key, None)
    elif isinstance(value, dict):
        _put(orig, key, _merge_map(_of(orig.get(key), dict), value, field))
    elif isinstance(value, list):
        orig[key] = _merge_list(_of(orig.get(key), list), value, field)
    else:
        orig[key] = value


def _put(orig: dict, key: str, value) -> None:
    """Store a merged map, or drop the key when the patch deleted it."""
    if value is _DELETED:
        orig.pop(key, None)
    else:
        orig[key] = value


def _merge_list(live: list, patch: list, meta: Meta) -> list:
    """Return a list field merged by its strategy: replaced, a set of scalars, or objects by merge key."""
    if meta.strategy != "merge":
        return _clean(patch)
    if meta.key:
        return _merge_keyed(live, patch, meta)
    both = live + patch
    return _order([v for i, v in enumerate(both) if v not in both[:i]], patch, live, "")


def _merge_keyed(live: list, patch: list, meta: Meta) -> list:
    """Merge a list of objects by `meta.key`, honouring `$patch: delete` and `$patch: replace` items."""
    marks = _list_directives(patch, meta.key)
    items = [p for p, mark in zip(patch, marks) if mark == "merge"]
    if "replace" in marks:
        return [_merge_map({}, item, meta) for item in items]
    gone = [p[meta.key] for p, mark in zip(patch, marks) if mark == "delete"]
    live = [item for item in live if _ident(item, meta.key) not in gone]
    merged = list(live)
    for item in items:
        _upsert(merged, item, meta)
    return _order(merged, items, live, meta.key)


def _list_directives(patch: list, key: str) -> list[str]:
    """Return each item's `$patch` directive ("merge" by default), checking the items can be merged."""
    marks = []
    for item in patch:
        mark = item.get("$patch", "merge") if isinstance(item, dict) else None
        if mark not in ("merge", "delete", "replace"):
            raise PatchError(f"list item {item!r} cannot be merged: send objects carrying the merge key {key!r} "
                             "and at most a $patch of merge, delete or replace", 422)
        if mark != "replace" and key not in item:
            raise PatchError(f"list item {item!r} lacks its merge key {key!r}: add it so the server can "
                             "match the item", 422)
        marks.append(mark)
    return marks


def _upsert(merged: list, item: dict, meta: Meta) -> None:
    """Merge `item` into the element with the same merge key, or append it."""
    for i, current in enumerate(merged):
        if _ident(current, meta.key) == item[meta.key]:
            merged[i] = _merge_map(current, item, meta)
            return
    merged.append(_merge_map({}, item, meta))


def _order(merged: list, order: list, live: list, key: str) -> list:
    """Sort like the API server: items named in `order` in that order, others slotted in by `live` order."""
    wanted = [_ident(v, key) for v in order]
    seen = [_ident(v, key) for v in live]
    front = sorted((m for m in merged if _ident(m, key) in wanted), key=lambda m: wanted.index(_ident(m, key)))
    rest = sorted((m for m in merged if _ident(m, key) not in wanted), key=lambda m: _pos(seen, _ident(m, key)))
    out = []
    while rest and front:  # upstream mergeSortedSlice: a live item goes first only if both are live, in order
        live_first = 0 <= _pos(seen, _ident(rest[0], key)) < _pos(seen, _ident(front[0], key))
        out.append((rest if live_first else front).pop(0))
    return out + rest + front


def _set_element_orders(orig: dict, patch: dict, meta: Meta) -> None:
    """Merge each list that has a `$setElementOrder/<list>` and put its items in that order."""
    for directive in [k for k in patch if k.startswith(_ORDER)]:
        name, order = directive[len(_ORDER):], patch.pop(directive)
        if not isinstance(order, list):
            raise PatchError(f"{directive} must be a list of items, not a JSON {_json_type(order)}: send a list", 400)
        field = _infer_merge(meta.fields.get(name, NONE), order)
        live = _of(orig.get(name), list)
        if isinstance(patch.get(name), list):
            _check_order(patch[name], order, field.key, directive)
            merged = _merge_list(live, patch.pop(name), field)
        elif name in orig:
            merged = live
        else:
            continue
        orig[name] = _order(merged, order, live, field.key)


def _infer_merge(field: Meta, order: list) -> Meta:
    """Return `field`, or for a list the schema does not know, the merge key its order list implies."""
    if field.strategy == "merge" or not order:
        return field
    if all(isinstance(v, dict) and len(v) == 1 for v in order) and len({next(iter(v)) for v in order}) == 1:
        return Meta("merge", next(iter(order[0])), field.fields)
    if all(not isinstance(v, (dict, list)) for v in order):
        return Meta("merge", "", field.fields)
    return field


def _check_order(items: list, order: list, key: str, directive: str) -> None:
    """Reject a patch list whose items are missing from, or out of order with, its `$setElementOrder`."""
    wanted = [_ident(v, key) for v in order]
    named = [_ident(v, key) for v in items if not (isinstance(v, dict) and "$patch" in v)]
    positions = [wanted.index(v) if v in wanted else -1 for v in named]
    if -1 in positions or positions != sorted(positions):
        raise PatchError(f"the patch list does not match {directive} {order!r}: list every patched item there, "
                         "in the same order", 422)


def _retain_keys(orig: dict, patch: dict) -> None:
    """Apply `$retainKeys`: drop every live key it does not list."""
    keep = patch.pop("$retainKeys", None)
    if keep is None:
        return
    if not isinstance(keep, list):
        raise PatchError(f"$retainKeys must list field names, not be a JSON {_json_type(keep)}: send a list", 400)
    stray = [k for k, v in patch.items() if v is not None and not k.startswith("$") and k not in keep]
    if stray:
        raise PatchError(f"$retainKeys {keep!r} must name every field the patch sets: add {stray!r}", 400)
    for key in [k for k in orig if k not in keep]:
        del orig[key]


def _delete_from_list(orig: dict, name: str, values) -> None:
    """Apply `$deleteFromPrimitiveList/<name>`: remove these scalars from the live list."""
    if not isinstance(values, list):
        raise PatchError(f"$deleteFromPrimitiveList/{name} must be a list, not a JSON {_json_type(values)}: "
                         "send the values to remove as a list", 400)
    if isinstance(orig.get(name), list):
        orig[name] = [v for v in orig[name] if v not in values]


def _clean(value):
    """Return a value stored whole: nulls and `$` directives dropped, as decoding into Go types would."""
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items() if v is not None and not k.startswith("$")}
    if isinstance(value, list):
        return [_clean(v) for v in value if not (isinstance(v, dict) and "$patch" in v)]
    return value


def _ident(item, key: str):
    """Return what identifies a list item: its merge key value, or the scalar itself."""
    if not key:
        return item
    return item.get(key) if isinstance(item, dict) else None


def _pos(seq: list, value) -> int:
    """Return the index of `value` in `seq`, or -1."""
    return seq.index(value) if value in seq else -1


def _of(value, kind: type):
    """Return `value` if it has type `kind`, else an empty one."""
    return value if isinstance(value, kind) else kind()


class _YamlLoader(yaml.SafeLoader):
    """Safe YAML loader that keeps timestamps as strings, as the API's JSON does."""


_YamlLoader.yaml_implicit_resolvers = {
    first: [r for r in resolvers if r[0] != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _load_json(body: bytes):
    """Parse a JSON patch body, or raise a 400 naming the syntax error."""
    _require_body(body)
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise PatchError(f"the patch body is not valid JSON ({exc}): fix the syntax and resend it", 400) from None


def _load_yaml(body: bytes):
    """Parse an apply patch body (YAML or JSON), or raise a 400 naming the syntax error."""
    _require_body(body)
    try:
        return as_json(yaml.load(body, Loader=_YamlLoader))
    except yaml.YAMLError as exc:
        detail = " ".join(str(exc).split())
        raise PatchError(f"the apply patch is not valid YAML or JSON ({detail}): fix the syntax", 400) from None
    except ValueError as exc:
        raise PatchError(str(exc), 400) from None


def _require_body(body: bytes) -> None:
    """Reject an empty request body."""
    if not body or not body.strip():
        raise PatchError("the patch body is empty: send the change as a JSON document", 400)


def _require_object(doc, media: str) -> None:
    """Reject a patch document that is not a JSON object."""
    if not isinstance(doc, dict):
        raise PatchError(f"a {media} body must be a JSON object such as {{\"spec\": {{...}}}}, not a JSON "
                         f"{_json_type(doc)}: wrap the change in an object", 400)


def _json_type(value) -> str:
    """Return the JSON name of a value's type."""
    return "null" if value is None else _JSON_TYPES.get(type(value), type(value).__name__)
