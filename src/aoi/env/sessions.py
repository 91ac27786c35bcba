"""Sessions of the environment server: one Env per session, a lock per session, a cap and an idle timeout.

Everything here blocks (building a twin, stepping it), so the server calls it from worker threads. The pool lock
guards only the table; each session's lock serializes its steps, so different sessions step concurrently.
"""

from __future__ import annotations

import secrets
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from aoi.env.core import make
from aoi.env.limits import StepLimit
from aoi.env.roles import ROLES

IDLE_TIMEOUT = 30 * 60.0


class InvalidRequest(ValueError):
    """A problem id, target or role the environment refuses; the message says which values are valid."""


class TooManySessions(RuntimeError):
    """The pool is full."""


class UnknownSession(KeyError):
    """No open session has this id (never created, deleted, or closed after idling)."""


class EpisodeOver(RuntimeError):
    """The session's episode has ended; only a new session can play again."""


@dataclass(kw_only=True)
class Session:
    """One open episode and its bookkeeping: `task` and `info` are what the env's reset() returned."""

    id: str
    env: StepLimit
    task: str
    info: dict
    created_at: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))
    last_used: float = field(default_factory=time.monotonic)
    lock: threading.Lock = field(default_factory=threading.Lock)
    closed: bool = False

    def step(self, action: str, role: str | None) -> tuple[str, float, bool, bool, dict]:
        """Play one action under the session's lock; raise EpisodeOver once the episode has ended."""
        if role not in ROLES:
            raise InvalidRequest(f"unknown role {role!r}; use null, 'observer', 'admin', 'probe' or 'executor'")
        with self.lock:
            if self.closed:
                raise UnknownSession(self.id)
            if self.env.done:
                raise EpisodeOver(f"session {self.id} has finished its episode ({self.env.steps} steps); "
                                  f"create a new session (POST /sessions) to play again")
            try:
                return self.env.step(action, role)
            finally:
                self.last_used = time.monotonic()

    def close(self) -> None:
        """Close the env once no step is running; later calls do nothing."""
        with self.lock:
            if not self.closed:
                self.closed = True
                self.env.close()


class SessionPool:
    """The open sessions of one server."""

    def __init__(self, max_sessions: int = 16, idle_timeout: float = IDLE_TIMEOUT, workdir: Path | None = None):
        if max_sessions < 1:
            raise ValueError(f"max_sessions must be at least 1, got {max_sessions}")
        self.max_sessions, self.idle_timeout, self.workdir = max_sessions, idle_timeout, workdir
        self._sessions: dict[str, Session] = {}
        self._pending = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        with self._lock:
            return len(self._sessions) + self._pending

    def create(self, problem_id: str, seed: int = 0, target: str | None = None, max_steps: int = 30) -> Session:
        """Build an Env, reset it and register it; raise InvalidRequest or TooManySessions."""
        self._reserve()
        try:
            sid = secrets.token_hex(8)
            workdir = self.workdir / sid if self.workdir else None
            env, (task, info) = _built(problem_id, seed, target, max_steps, workdir)
            session = Session(id=sid, env=env, task=task, info=info)
        finally:
            with self._lock:
                self._pending -= 1
        with self._lock:
            self._sessions[sid] = session
        return session

    def get(self, session_id: str) -> Session:
        """Return an open session and mark it used; raise UnknownSession."""
        with self._lock:
            session = self._sessions.get(session_id)
        if session is None or session.closed:
            raise UnknownSession(session_id)
        session.last_used = time.monotonic()
        return session

    def list(self) -> list[Session]:
        """Return the open sessions, oldest first."""
        with self._lock:
            return list(self._sessions.values())

    def close(self, session_id: str) -> None:
        """Close one session; raise UnknownSession."""
        with self._lock:
            session = self._sessions.pop(session_id, None)
        if session is None:
            raise UnknownSession(session_id)
        session.close()

    def reap(self) -> list[str]:
        """Close the sessions idle longer than the timeout (never one mid-step); return their ids."""
        now = time.monotonic()
        with self._lock:
            idle = [s for s in self._sessions.values()
                    if now - s.last_used > self.idle_timeout and not s.lock.locked()]
            for s in idle:
                del self._sessions[s.id]
        for s in idle:
            s.close()
        return [s.id for s in idle]

    def close_all(self) -> None:
        """Close every session (server shutdown)."""
        with self._lock:
            sessions, self._sessions = list(self._sessions.values()), {}
        for s in sessions:
            s.close()

    def _reserve(self) -> None:
        """Take a slot for a session being built, or raise TooManySessions."""
        with self._lock:
            if len(self._sessions) + self._pending >= self.max_sessions:
                raise TooManySessions(f"{self.max_sessions} sessions are open, the server's limit; DELETE finished "
                                      f"ones, or start the server with a larger --max-sessions")
            self._pending += 1


def _built(problem_id: str, seed: int, target: str | None, max_steps: int,
           workdir: Path | None) -> tuple[StepLimit, tuple[str, dict]]:
    """Make and reset an env; return it and what reset() returned; raise InvalidRequest for a bad id or target."""
    try:
        env = make(problem_id, seed=seed, target=target, max_steps=max_steps, workdir=workdir)
    except ValueError as exc:  # unknown id, invalid target, a backend the twin cannot run
        raise InvalidRequest(str(exc)) from None
    return env, _reset(env)


def _reset(env: StepLimit) -> tuple[str, dict]:
    """Reset a new env, closing it when reset fails so no twin is left serving."""
    try:
        return env.reset()
    except BaseException:
        env.close()
        raise
