"""The health paths, as the API server answers them: /livez, /readyz and /healthz, `?verbose` and one check by name
(/readyz/controllers). Beside the server's own checks, /readyz and /healthz carry the twin's: `controllers`, which
fails while a reconcile fault is active (aoi.twin.core.faults), naming the controllers, objects and errors."""

from __future__ import annotations

from aoi.twin.api import routes
from aoi.twin.api.handlers import Reply

TEXT = "text/plain; charset=utf-8"
PATHS = ("healthz", "livez", "readyz")
SERVER_CHECKS = ("ping", "log", "etcd")


def checks(twin, path: str) -> list[tuple[str, str]]:
    """Return (check, failure) pairs for a health path; an empty failure passed."""
    found = [(name, "") for name in SERVER_CHECKS]
    if path != "livez":  # a reconcile fault makes the twin unready, not dead: restarting it would not help
        with twin.lock:
            found.append(("controllers", twin.faults.report()))
    return found


def answer(twin, path: str) -> Reply | None:
    """Answer a health path (None when the path is not one): `ok`, or the verbose list with 500 on a failure.

    Example:
        >>> import threading
        >>> from aoi.twin.core.faults import Faults
        >>> class Twin:
        ...     lock, faults = threading.RLock(), Faults()
        >>> answer(Twin(), "/readyz").body, answer(Twin(), "/livez?verbose").body.splitlines()[-1]
        (b'ok', b'livez check passed')
    """
    segments, query = routes.split(path)
    if not segments or segments[0] not in PATHS or len(segments) > 2:
        return None
    results = checks(twin, segments[0])
    if len(segments) == 2:
        failure = dict(results).get(segments[1])
        if failure is None:
            return None
        return Reply(500, _text(f"internal server error: {failure}\n"), TEXT) if failure else Reply(200, b"ok", TEXT)
    failed = any(failure for _, failure in results)
    if not failed and "verbose" not in query:
        return Reply(200, b"ok", TEXT)
    lines = [f"[-]{name} failed: {failure}" if failure else f"[+]{name} ok" for name, failure in results]
    lines.append(f"{segments[0]} check {'failed' if failed else 'passed'}")
    return Reply(500 if failed else 200, _text("\n".join(lines) + "\n"), TEXT)


def _text(text: str) -> bytes:
    """Encode a report, whatever an object name in it holds."""
    return text.encode("utf-8", "backslashreplace")
