"""Decode the Kubernetes protobuf request bodies kubectl sends into the object's JSON form.

kubectl's typed clients (`create configmap`, `auth can-i`, `create token`, ...) post
`application/vnd.kubernetes.protobuf` bodies: the magic `k8s\\x00` followed by a
`runtime.Unknown{1: typeMeta{1: apiVersion, 2: kind}, 2: raw, 3: contentEncoding, 4: contentType}`
whose `raw` is the typed message. This module reads the wire format by hand and maps fields through
the declarative tables in `protobuf_schema`; fields not listed there are skipped.
"""

from __future__ import annotations

import base64
import functools
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any, NamedTuple

from aoi.twin.api.protobuf_schema import KINDS, MESSAGES

MAGIC = b"k8s\x00"
VARINT, FIXED64, LENGTH, FIXED32 = 0, 1, 2, 5
_SCALARS = {"string", "bytes", "raw", "int32", "int64", "bool"}  # raw: bytes kept as bytes
_ENVELOPE = {1: ("typeMeta", "TypeMeta"), 2: ("raw", "raw"),
             3: ("contentEncoding", "string"), 4: ("contentType", "string")}
_ENVELOPE_MESSAGES = {"Unknown": _ENVELOPE,
                      "TypeMeta": {1: ("apiVersion", "string"), 2: ("kind", "string")}}


class ProtobufError(ValueError):
    """A request body that is not a Kubernetes protobuf object this decoder can read."""


class Spec(NamedTuple):
    """One parsed field type from the schema: `[]T`, `map[string]T` or `*T`."""

    type: str
    repeated: bool = False
    is_map: bool = False
    keep_zero: bool = False


@functools.cache
def parse_spec(text: str) -> Spec:
    """Parse a schema type such as `*int32`, `[]Container` or `map[string]Quantity`."""
    if text.startswith("[]"):
        return Spec(text[2:], repeated=True)
    if text.startswith("map[string]"):
        return Spec(text[len("map[string]"):], is_map=True)
    if text.startswith("*"):
        return Spec(text[1:], keep_zero=True)
    return Spec(text)


def read_varint(buf: bytes, pos: int) -> tuple[int, int]:
    """Read a base-128 varint at `pos`; return (value, position after it)."""
    value = shift = 0
    for i in range(pos, min(pos + 10, len(buf))):
        value |= (buf[i] & 0x7F) << shift
        shift += 7
        if buf[i] < 0x80:
            return value, i + 1
    if len(buf) - pos >= 10:
        raise ProtobufError(f"varint at byte {pos} is longer than 10 bytes; the body is corrupt")
    raise ProtobufError(f"truncated varint at byte {pos} of {len(buf)}; the body was cut short")


def _take(buf: bytes, pos: int, size: int, what: str) -> tuple[bytes, int]:
    """Return `size` bytes at `pos` and the next position, or fail if the buffer is short."""
    if pos + size > len(buf):
        raise ProtobufError(
            f"truncated {what} at byte {pos}: needs {size} bytes, only {len(buf) - pos} left")
    return buf[pos:pos + size], pos + size


def iter_fields(buf: bytes) -> Iterator[tuple[int, int, int | bytes]]:
    """Yield (field number, wire type, value) for every field of one message."""
    pos = 0
    while pos < len(buf):
        key, pos = read_varint(buf, pos)
        number, wire = key >> 3, key & 7
        if wire == VARINT:
            value, pos = read_varint(buf, pos)
        elif wire == LENGTH:
            size, pos = read_varint(buf, pos)
            value, pos = _take(buf, pos, size, f"length-delimited field {number}")
        elif wire in (FIXED64, FIXED32):
            value, pos = _take(buf, pos, 8 if wire == FIXED64 else 4, f"fixed field {number}")
        else:
            raise ProtobufError(f"field {number} has unsupported wire type {wire} at byte {pos}")
        yield number, wire, value


def _signed(value: int) -> int:
    """Reinterpret a varint as a two's-complement 64-bit integer (negative int32/int64)."""
    return value - (1 << 64) if value >= 1 << 63 else value


def _scalar(kind: str, value: int | bytes, where: str) -> Any:
    """Convert one wire value of scalar type `kind` to its JSON form."""
    if kind == "raw":
        return bytes(value)
    if kind == "bytes":
        return base64.b64encode(value).decode("ascii")
    if kind == "string":
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            raise ProtobufError(f"{where} is not valid UTF-8 text") from None
    return bool(value) if kind == "bool" else _signed(value)


def _expected_wire(spec: Spec) -> set[int]:
    """Return the wire types a field of this spec may arrive with (packed repeats use LENGTH)."""
    if spec.type in ("int32", "int64", "bool") and not spec.is_map:
        return {VARINT, LENGTH} if spec.repeated else {VARINT}
    return {LENGTH}


def _value(spec: Spec, wire: int, value: int | bytes, where: str) -> Any:
    """Convert one field occurrence; a packed repeated scalar yields a list."""
    if spec.is_map:
        return _map_entry(spec.type, value, where)
    if spec.type not in _SCALARS:
        return decode_message(value, spec.type)
    if wire == LENGTH and spec.type not in ("string", "bytes", "raw"):
        return [_scalar(spec.type, v, where) for v in _packed(value)]
    return _scalar(spec.type, value, where)


def _packed(buf: bytes) -> Iterator[int]:
    """Yield the varints of a packed repeated field."""
    pos = 0
    while pos < len(buf):
        value, pos = read_varint(buf, pos)
        yield value


def _map_entry(value_type: str, buf: bytes, where: str) -> tuple[str, Any]:
    """Decode one proto map entry {1: key, 2: value} into a (key, value) pair."""
    entry = {1: ("key", "string"), 2: ("value", value_type)}
    fields = _decode_fields(buf, entry, where, keep_all=True)
    if "value" not in fields:  # an entry with an empty value omits field 2
        fields["value"] = "" if value_type in _SCALARS else decode_message(b"", value_type)
    return fields.get("key", ""), fields["value"]


def _is_empty(spec: Spec, value: Any) -> bool:
    """Tell whether a decoded value is a Go zero value that its JSON form would omit."""
    if spec.keep_zero or value is None:
        return value is None
    return value in ("", 0, False) or value == [] or value == {}


def _decode_fields(buf: bytes, table: dict, name: str, keep_all: bool = False) -> dict:
    """Decode the fields of `buf` listed in `table`, skipping unknown ones and zero values."""
    out: dict[str, Any] = {}
    specs: dict[str, Spec] = {}
    for number, wire, value in iter_fields(buf):
        if number not in table:
            continue
        json_name, text = table[number]
        spec = specs[json_name] = parse_spec(text)
        where = f"field {number} ({json_name}) of {name}"
        if wire not in _expected_wire(spec):
            expected = " or ".join(map(str, sorted(_expected_wire(spec))))
            raise ProtobufError(f"{where} has wire type {wire}, expected {expected}")
        _store(out, json_name, spec, _value(spec, wire, value, where))
    return {k: v for k, v in out.items() if keep_all or not _is_empty(specs[k], v)}


def _store(out: dict, json_name: str, spec: Spec, value: Any) -> None:
    """Put one decoded occurrence into `out`: append, add to the map, or overwrite."""
    if spec.is_map:
        out.setdefault(json_name, {})[value[0]] = value[1]
    elif spec.repeated:
        out.setdefault(json_name, []).extend(value if isinstance(value, list) else [value])
    else:
        out[json_name] = value


def _time(fields: dict) -> str | None:
    """Render meta/v1 Time as RFC 3339 seconds in UTC, or None for the zero time."""
    seconds = fields.get("seconds", 0)
    if not seconds and not fields.get("nanos"):
        return None
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _int_or_string(fields: dict) -> int | str:
    """Render intstr.IntOrString as the int or the string it holds (type 1 means string)."""
    return fields.get("strVal", "") if fields.get("type") == 1 else fields.get("intVal", 0)


_CONVERTERS = {"Time": _time, "Quantity": lambda f: f.get("string", ""),
               "IntOrString": _int_or_string}


def decode_message(buf: bytes, name: str) -> Any:
    """Decode the message `name` from `MESSAGES` into its Kubernetes JSON form."""
    table = MESSAGES.get(name) or _ENVELOPE_MESSAGES[name]
    keep_all = name in _CONVERTERS  # converters read zero values themselves
    fields = _decode_fields(buf, table, name, keep_all=keep_all)
    return _CONVERTERS[name](fields) if name in _CONVERTERS else fields


def supported_kinds() -> list[str]:
    """List the `apiVersion/kind` pairs decode_body accepts."""
    return [f"{api_version}/{kind}" for api_version, kind in KINDS]


def decode_body(data: bytes) -> dict:
    """Decode a `application/vnd.kubernetes.protobuf` request body into a JSON-ready object.

    Example:
        >>> decode_body(bytes.fromhex("6b3873000a0f0a027631120943"
        ...                           "6f6e6669674d617012080a060a04636f6e66"))
        {'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 'conf'}}
    """
    if not data.startswith(MAGIC):
        raise ProtobufError(f"body does not start with the magic {MAGIC!r} "
                            f"(got {bytes(data[:4])!r}); it is not a Kubernetes protobuf object")
    envelope = _decode_fields(data[len(MAGIC):], _ENVELOPE, "runtime.Unknown", keep_all=True)
    if envelope.get("contentEncoding"):
        raise ProtobufError(f"unsupported contentEncoding {envelope['contentEncoding']!r}; "
                            "only unencoded bodies are decoded")
    type_meta = envelope.get("typeMeta", {})
    api_version, kind = type_meta.get("apiVersion", ""), type_meta.get("kind", "")
    if (api_version, kind) not in KINDS:
        raise ProtobufError(f"unsupported kind `{kind}` (apiVersion `{api_version}`); "
                            f"supported: {', '.join(supported_kinds())}")
    raw = envelope.get("raw", b"")
    return {"apiVersion": api_version, "kind": kind,
            **decode_message(raw, KINDS[(api_version, kind)])}
