"""A self-signed certificate for 127.0.0.1, made at start (bearer tokens only travel over TLS)."""

from __future__ import annotations

import datetime
import functools
import ipaddress
import os
import ssl
import threading

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from aoi import runtime_dirs

_LOCK = threading.Lock()  # lru_cache alone may run the body twice under threads: two certificates, one server


def certificate() -> tuple[bytes, bytes]:
    """Return (certificate PEM, key PEM) for 127.0.0.1 and localhost, made once per process."""
    with _LOCK:
        return _certificate()


@functools.lru_cache(maxsize=1)
def _certificate() -> tuple[bytes, bytes]:
    """Make the certificate (call certificate(), which serialises the first call)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "aoi-twin")])
    start = datetime.datetime(2025, 1, 1, tzinfo=datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(start).not_valid_after(start + datetime.timedelta(days=3650 * 3))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"),
                                                        x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
            .sign(key, hashes.SHA256()))
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    return cert.public_bytes(serialization.Encoding.PEM), key_pem


def server_context() -> ssl.SSLContext:
    """Return a TLS server context holding the certificate (HTTP/1.1 only: WebSocket needs it)."""
    with _LOCK:
        return _server_context(*_certificate())


@functools.lru_cache(maxsize=1)
def _server_context(cert: bytes, key: bytes) -> ssl.SSLContext:
    """Build the context once."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        _load_from_memory(ctx, cert, key)
    except (AttributeError, OSError):  # no memfd_create (not Linux) or no /proc: fall back to files
        _load_from_private_files(ctx, cert, key)
    ctx.set_alpn_protocols(["http/1.1"])
    return ctx


def _load_from_memory(ctx: ssl.SSLContext, cert: bytes, key: bytes) -> None:
    """Load the pair through anonymous in-memory files (Linux), so the key never reaches a file system."""
    fds: list[int] = []  # ssl loads keys from paths only; /proc/self/fd/N names a memory file
    try:
        for name, data in (("tls.crt", cert), ("tls.key", key)):
            fds.append(os.memfd_create(name, os.MFD_CLOEXEC))
            os.write(fds[-1], data)
        ctx.load_cert_chain(*(f"/proc/self/fd/{fd}" for fd in fds))
    finally:
        for fd in fds:
            os.close(fd)


def _load_from_private_files(ctx: ssl.SSLContext, cert: bytes, key: bytes) -> None:
    """Load the pair from 0600 files in a private folder that is removed as soon as they are read."""
    folder = runtime_dirs.private_dir("tls")
    try:
        ctx.load_cert_chain(runtime_dirs.write_private(folder / "tls.crt", cert),
                            runtime_dirs.write_private(folder / "tls.key", key))
    finally:
        runtime_dirs.remove(folder)
