"""One `aoi eval` per run directory: an flock on `<out>/eval.lock`, which names its holder (pid, host, start).

The kernel releases an flock when its process dies, however it dies, so a lock left by a killed eval never blocks
the next one; the file itself stays (removing it would race with the next locker) and only says who held it last.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

LOCK_NAME = "eval.lock"


class RunLocked(ValueError):
    """Another live process is running an eval into the same directory."""


@contextmanager
def run_lock(out_dir: str | Path) -> Iterator[Path]:
    """Hold the run directory's lock for the block; RunLocked naming the holder when another process has it.

    Example:
        >>> import tempfile
        >>> with run_lock(tempfile.mkdtemp()) as path:
        ...     json.loads(path.read_text())["pid"] == os.getpid()
        True
    """
    path = Path(out_dir) / LOCK_NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        _acquire(fd, path)
        _write_holder(fd)
        yield path
    finally:
        os.close(fd)  # closing the only descriptor releases the lock


def _acquire(fd: int, path: Path) -> None:
    """Take the lock without waiting; raise RunLocked saying who holds it."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise RunLocked(f"{path.parent} is in use by another `aoi eval` ({holder(path)}); wait for it to finish, "
                        f"stop it (Ctrl-C or kill PID), or pass another --out") from None


def _write_holder(fd: int) -> None:
    """Record this process as the holder."""
    record = {"pid": os.getpid(), "host": socket.gethostname(), "started_at": time.time()}
    os.ftruncate(fd, 0)
    os.pwrite(fd, json.dumps(record).encode() + b"\n", 0)


def holder(path: str | Path) -> str:
    """Describe the holder recorded in a lock file, e.g. "pid 4242 on host-1 since 2026-12-01 15:20:03 UTC".

    Example:
        >>> holder("/nonexistent/eval.lock")
        'holder unknown'
    """
    try:
        record = json.loads(Path(path).read_text())
        since = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(record["started_at"]))
        return f"pid {record['pid']} on {record['host']} since {since}"
    except (OSError, ValueError, KeyError, TypeError):
        return "holder unknown"  # it has locked the file but not yet written to it
