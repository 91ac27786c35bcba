"""Request bodies: bounded reads (Content-Length or chunked) and nesting depth."""

from __future__ import annotations

import re

from aoi.twin.core import errors
from aoi.twin.core.errors import ApiError

MAX_BYTES = 3 * 1024 * 1024  # the API server's default request body limit
MAX_DEPTH = 100  # deeper than any real object; well inside what the encoders and deepcopy can recurse through
_STRINGS = re.compile(rb'"(?:\\.|[^"\\])*"')
_BRACKETS = re.compile(rb"[\[\]{}]")


def too_large(size: int) -> ApiError:
    """Return the 413 for a body over the limit."""
    return ApiError(413, "RequestEntityTooLarge",
                    f"the request body is too large: {size} bytes, the limit is {MAX_BYTES}; send a smaller object")


def content_length(value: str | None) -> int:
    """Return the body length a Content-Length header declares, refusing malformed and oversized values.

    Example:
        >>> content_length("12"), content_length(None)
        (12, 0)
    """
    if value is None or value == "":
        return 0
    if not value.isascii() or not value.isdigit():
        raise errors.bad_request(f"the Content-Length header must be a non-negative decimal integer, got {value!r}")
    if int(value) > MAX_BYTES:
        raise too_large(int(value))
    return int(value)


def read_exactly(rfile, size: int) -> bytes:
    """Read `size` bytes; a body that ends early (closed, or stalled past the socket timeout) is an error."""
    try:
        data = rfile.read(size) if size else b""
    except TimeoutError as exc:
        raise ApiError(408, "Timeout", f"the request body did not arrive in time: Content-Length said {size} "
                                       "bytes; send the whole body") from exc
    if len(data) < size:
        raise errors.bad_request(f"the request body ended after {len(data)} of the {size} bytes its "
                                 "Content-Length declared; send the whole body")
    return data


def read_chunked(rfile) -> bytes:
    """Read a `Transfer-Encoding: chunked` body, bounded by MAX_BYTES."""
    body = b""
    while True:
        line = read_line(rfile)
        try:
            size = int(line.split(b";", 1)[0].strip(), 16)
        except ValueError as exc:
            raise errors.bad_request(f"malformed chunk size {line[:20]!r} in a chunked request body") from exc
        if size < 0 or len(body) + size > MAX_BYTES:
            raise too_large(len(body) + size)
        if size == 0:
            break
        body += read_exactly(rfile, size)
        read_line(rfile)
    while read_line(rfile).strip():  # trailer fields, up to the blank line
        pass
    return body


def read_line(rfile) -> bytes:
    """Read one CRLF line of chunked framing."""
    try:
        line = rfile.readline(1024)
    except TimeoutError as exc:
        raise ApiError(408, "Timeout", "the chunked request body did not arrive in time; send the whole body") from exc
    if not line:
        raise errors.bad_request("the chunked request body ended early; send the whole body")
    return line


def bracket_depth(body: bytes) -> int:
    """Return how deeply JSON arrays and objects nest in a body (strings skipped), without decoding it.

    Example:
        >>> bracket_depth(b'{"a": [1, {"b": "]]]"}]}')
        3
    """
    depth = deepest = 0
    for bracket in _BRACKETS.findall(_STRINGS.sub(b"", body)):
        depth += 1 if bracket in b"[{" else -1
        deepest = max(deepest, depth)
    return deepest


def depth(value) -> int:
    """Return the nesting depth of decoded JSON/YAML data (iteratively: deep data cannot exhaust the stack).

    Example:
        >>> depth({"a": [1, {"b": 2}]}), depth("x")
        (3, 0)
    """
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, (dict, list)):
            deepest = max(deepest, level)
            stack += [(child, level + 1) for child in (item.values() if isinstance(item, dict) else item)]
    return deepest


def too_deep() -> ApiError:
    """Return the 400 for a body nested beyond MAX_DEPTH."""
    return errors.bad_request(f"the request body nests deeper than {MAX_DEPTH} levels; no Kubernetes object does, "
                              "flatten it")


def check_depth(body: bytes) -> None:
    """Refuse a body whose brackets nest beyond MAX_DEPTH (JSON, and YAML in flow style)."""
    if body and bracket_depth(body) > MAX_DEPTH:
        raise too_deep()


def unsupported_dry_run(options_kind: str, values) -> ApiError:
    """Return the 422 for a dryRun value other than All."""
    return errors.invalid(options_kind, "meta.k8s.io", "",
                          [("dryRun", f"Unsupported value: {values!r}: supported values: \"All\"")])
