"""Tests for the hand-written decoder of kubectl's protobuf request bodies."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
import yaml

from aoi.twin.api.protobuf import ProtobufError, decode_body, parse_spec, supported_kinds
from aoi.twin.api.protobuf_schema import KINDS, MESSAGES

FIXTURES = Path(__file__).parent / "fixtures" / "protobuf"
EXPECTED = yaml.safe_load((FIXTURES / "expected.yaml").read_text())


def varint(value: int) -> bytes:
    """Encode a non-negative or two's-complement 64-bit integer as a varint."""
    value &= (1 << 64) - 1
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    return bytes(out + bytes([value]))


def field(number: int, value: int | bytes | str, wire: int | None = None) -> bytes:
    """Encode one field: ints as varints, bytes and str as length-delimited (or a given wire)."""
    if isinstance(value, str):
        value = value.encode()
    if wire in (1, 5):
        return varint(number << 3 | wire) + value
    if isinstance(value, int):
        return varint(number << 3) + varint(value)
    return varint(number << 3 | 2) + varint(len(value)) + value


def envelope(api_version: str, kind: str, raw: bytes) -> bytes:
    """Wrap a typed message the way kubectl does: magic plus runtime.Unknown."""
    type_meta = field(1, api_version) + field(2, kind)
    return b"k8s\x00" + field(1, type_meta) + field(2, raw) + field(3, "") + field(4, "")


def entry(key: str, value: bytes | str) -> bytes:
    """Encode one proto map entry."""
    return field(1, key) + field(2, value)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_kubectl_body_decodes_to_expected_json(name: str) -> None:
    body = (FIXTURES / f"{name}.pb").read_bytes()
    assert decode_body(body) == EXPECTED[name]["expect"], EXPECTED[name]["command"]


def test_every_fixture_has_an_expectation() -> None:
    bodies = {path.stem for path in FIXTURES.glob("*.pb")}
    assert bodies == set(EXPECTED) | {"create_secret_tls"}


def test_secret_tls_carries_the_pem_files_as_base64() -> None:
    decoded = decode_body((FIXTURES / "create_secret_tls.pb").read_bytes())
    pem = {key: base64.b64encode((FIXTURES / f"secret_{key}").read_bytes()).decode()
           for key in ("tls.crt", "tls.key")}
    assert decoded == {"apiVersion": "v1", "kind": "Secret",
                       "metadata": {"name": "tls1", "namespace": "test"},
                       "data": pem, "type": "kubernetes.io/tls"}


def test_round_trip_of_a_hand_encoded_secret() -> None:
    time = field(1, 1_700_000_000) + field(2, 0)
    meta = (field(1, "s") + field(3, "") + field(7, 0) + field(8, time) + field(10, -1)
            + field(11, entry("app", "web")) + field(12, entry("note", "")))
    raw = (field(1, meta) + field(2, entry("k", b"\x00\xff")) + field(2, entry("e", b""))
           + field(4, entry("plain", "text")) + field(5, 0) + field(3, ""))
    assert decode_body(envelope("v1", "Secret", raw)) == {
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "s", "creationTimestamp": "2023-11-14T22:13:20Z",
                     "deletionGracePeriodSeconds": -1, "labels": {"app": "web"},
                     "annotations": {"note": ""}},
        "data": {"k": "AP8=", "e": ""}, "stringData": {"plain": "text"}, "immutable": False}


def test_special_types_and_packed_repeats() -> None:
    rolling = field(1, field(1, 1) + field(3, "25%")) + field(2, field(1, 0) + field(2, 0))
    limits = field(1, entry("cpu", field(1, "500m")))
    security = field(4, varint(1000) + varint(2000)) + field(2, 0)
    pod = field(2, field(1, "c") + field(8, limits)) + field(14, security)
    spec = field(1, 0) + field(3, field(2, pod)) + field(4, field(2, rolling)) + field(7, 0)
    container = {"name": "c", "resources": {"limits": {"cpu": "500m"}}}
    security_context = {"supplementalGroups": [1000, 2000], "runAsUser": 0}
    assert decode_body(envelope("apps/v1", "Deployment", field(2, spec)))["spec"] == {
        "replicas": 0,
        "template": {"spec": {"containers": [container], "securityContext": security_context}},
        "strategy": {"rollingUpdate": {"maxUnavailable": "25%", "maxSurge": 0}}}


def test_every_schema_type_resolves() -> None:
    known = set(MESSAGES) | {"string", "bytes", "int32", "int64", "bool"}
    for name, table in MESSAGES.items():
        for json_name, text in table.values():
            assert parse_spec(text).type in known, f"{name}.{json_name}: {text}"
    assert set(KINDS.values()) <= set(MESSAGES)


def test_unknown_fields_are_skipped() -> None:
    unknown = field(99, 7) + field(98, b"\x00" * 8, wire=1) + field(97, b"\x00" * 4, wire=5)
    raw = field(1, field(1, "cm") + unknown) + unknown + field(96, b"\xff\xfe")
    body = envelope("v1", "ConfigMap", raw) + field(9, "trailing envelope field")
    expected = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}}
    assert decode_body(body) == expected


def test_missing_magic_is_refused() -> None:
    with pytest.raises(ProtobufError, match="magic"):
        decode_body(b'{"kind": "ConfigMap"}')


@pytest.mark.parametrize("cut", [5, 7, 20, -3])
def test_truncated_body_is_refused(cut: int) -> None:
    body = (FIXTURES / "create_configmap.pb").read_bytes()
    with pytest.raises(ProtobufError, match="truncated"):
        decode_body(body[:cut])


def test_truncated_varint_names_the_position() -> None:
    with pytest.raises(ProtobufError, match=r"truncated varint at byte 1"):
        decode_body(b"k8s\x00\x0a\x80")


def test_unknown_kind_lists_the_supported_ones() -> None:
    with pytest.raises(ProtobufError, match=r"unsupported kind `Pod` \(apiVersion `v1`\)") as err:
        decode_body(envelope("v1", "Pod", b""))
    assert "apps/v1/Deployment" in str(err.value)
    assert "v1/ConfigMap" in supported_kinds()


def test_wrong_wire_type_names_the_field() -> None:
    with pytest.raises(ProtobufError, match=r"field 1 \(replicas\) of DeploymentSpec"):
        decode_body(envelope("apps/v1", "Deployment", field(2, field(1, "two"))))


@pytest.mark.parametrize("raw, message", [
    (varint(1 << 3 | 3), "unsupported wire type 3"),
    (b"\xff" * 11, "longer than 10 bytes"),
    (field(1, field(1, b"\xff")), "not valid UTF-8"),
])
def test_malformed_messages_are_refused(raw: bytes, message: str) -> None:
    with pytest.raises(ProtobufError, match=message):
        decode_body(envelope("v1", "Namespace", raw))


def test_encoded_content_is_refused() -> None:
    body = b"k8s\x00" + field(1, field(1, "v1") + field(2, "Namespace")) + field(3, "gzip")
    with pytest.raises(ProtobufError, match="contentEncoding 'gzip'"):
        decode_body(body)
