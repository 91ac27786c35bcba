"""The RFC 6455 pieces the exec endpoint needs: handshake, frame reading and writing (v5.channel.k8s.io)."""

from __future__ import annotations

import base64
import hashlib
import struct

import orjson

GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
CHANNEL_PROTOCOLS = ("v5.channel.k8s.io", "v4.channel.k8s.io")
STDIN, STDOUT, STDERR, ERROR, RESIZE, CLOSE = 0, 1, 2, 3, 4, 255


def accept_key(key: str) -> str:
    """Return the Sec-WebSocket-Accept value for a client key.

    Example:
        >>> accept_key("dGhlIHNhbXBsZSBub25jZQ==")
        's3pPLMBiTxaQ9kYGzzhZRbK+xOo='
    """
    return base64.b64encode(hashlib.sha1((key + GUID).encode()).digest()).decode()


def choose_protocol(header: str | None) -> str | None:
    """Pick the channel protocol to echo from the client's offer, preferring v5."""
    offered = [p.strip() for p in (header or "").split(",")]
    return next((p for p in CHANNEL_PROTOCOLS if p in offered), None)


def frame(payload: bytes, opcode: int = 0x2) -> bytes:
    """Encode one unmasked server frame (FIN set)."""
    head = bytes([0x80 | opcode])
    n = len(payload)
    if n < 126:
        head += bytes([n])
    elif n < 1 << 16:
        head += bytes([126]) + struct.pack(">H", n)
    else:
        head += bytes([127]) + struct.pack(">Q", n)
    return head + payload


def read_frame(rfile) -> tuple[int, bytes] | None:
    """Read one client frame and return (opcode, unmasked payload); None when the stream ends."""
    head = rfile.read(2)
    if len(head) < 2:
        return None
    opcode, n = head[0] & 0x0F, head[1] & 0x7F
    if n == 126:
        n = struct.unpack(">H", rfile.read(2))[0]
    elif n == 127:
        n = struct.unpack(">Q", rfile.read(8))[0]
    mask = rfile.read(4) if head[1] & 0x80 else b""
    data = rfile.read(n)
    if mask:
        data = bytes(b ^ mask[i % 4] for i, b in enumerate(data))
    return opcode, data


def read_stdin(rfile) -> bytes:
    """Collect stdin frames until the client signals end of stdin or closes."""
    chunks = []
    while True:
        got = read_frame(rfile)
        if got is None or got[0] == 0x8:
            break
        opcode, data = got
        if opcode in (0x1, 0x2) and data:
            if data[0] == STDIN:
                chunks.append(data[1:])
            elif data[0] == CLOSE:
                break
    return b"".join(chunks)


def exit_status(code: int, argv: list[str]) -> bytes:
    """Return the channel-3 Status that tells kubectl the exit code."""
    if code == 0:
        return orjson.dumps({"metadata": {}, "status": "Success"})
    message = (f"command terminated with non-zero exit code: error executing command [{' '.join(argv)}], "
               f"exit code {code}")
    return orjson.dumps({"metadata": {}, "status": "Failure", "message": message, "reason": "NonZeroExitCode",
                         "details": {"causes": [{"reason": "ExitCode", "message": str(code)}]}})
