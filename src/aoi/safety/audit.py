"""The audit log: one JSON line per change attempt, appended with a single write so lines never interleave."""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

TEXT_LIMIT = 2000  # characters kept of a preview or an outcome


def truncate(text: str | None, limit: int = TEXT_LIMIT) -> str | None:
    """Cut text to a limit, saying how much was left out.

    Example:
        >>> truncate("abcdef", 3)
        'abc… [3 more characters]'
    """
    if text is None or len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text) - limit} more characters]"


def _plain(value: Any) -> Any:
    """Turn a Verdict or Decision (NamedTuples) into a dict; pass dicts and None through."""
    return value._asdict() if hasattr(value, "_asdict") else value


class AuditLog:
    """Append one JSON line per change attempt to a file.

    Args:
        path: the JSONL file (created with mode 0600; parent folders too).
        episode: the episode id recorded when record() is given none.
        clock: returns the time to record (seconds since the epoch); injectable for tests and replays.
    """

    def __init__(self, path: str | Path, episode: str | None = None, clock: Callable[[], float] = time.time):
        self.path, self.episode, self.clock = Path(path), episode, clock
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()

    def record(self, role: str, command: str, verdict: Any = None, approval: Any = None, preview: str | None = None,
               outcome: str | None = None, exit_status: int | None = None, episode: str | None = None) -> dict:
        """Append one entry and return it.

        Example:
            >>> import tempfile; log = AuditLog(tempfile.mkdtemp() + "/audit.jsonl", "ep-1", clock=lambda: 0.0)
            >>> log.record("executor", "kubectl scale deploy/a --replicas=1", exit_status=0)["episode"]
            'ep-1'
        """
        entry = {"time": self.clock(), "episode": episode or self.episode, "role": role, "command": command,
                 "verdict": _plain(verdict), "approval": _plain(approval), "preview": truncate(preview),
                 "outcome": truncate(outcome), "exit_status": exit_status}
        self._append((json.dumps(entry, ensure_ascii=False) + "\n").encode())
        return entry

    def _append(self, line: bytes) -> None:
        """Write the line with one O_APPEND write, so concurrent writers never split each other's lines."""
        with self._lock:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                written = os.write(fd, line)
            finally:
                os.close(fd)
        if written != len(line):
            raise OSError(f"the audit log {self.path} took only {written} of {len(line)} bytes; check the free space")


def read(path: str | Path) -> list[dict]:
    """Return the entries of an audit log, oldest first (a torn last line, without its newline, is skipped).

    Example:
        >>> import tempfile; p = tempfile.mkdtemp() + "/a.jsonl"; _ = AuditLog(p).record("executor", "kubectl x")
        >>> [e["command"] for e in read(p)]
        ['kubectl x']
    """
    text = Path(path).read_text(encoding="utf-8") if Path(path).exists() else ""
    lines = text.split("\n")
    return [json.loads(line) for line in lines[:-1] if line.strip()]
