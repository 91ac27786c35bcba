"""Bearer tokens of the environment server: generated, kept in files only their owner can read."""

from __future__ import annotations

import secrets
import stat
from pathlib import Path

from aoi import runtime_dirs


def new_token() -> str:
    """Return a fresh random token (43 URL-safe characters)."""
    return secrets.token_urlsafe(32)


def write_token(path: Path, token: str) -> Path:
    """Write a token to a file readable by its owner only (0600), creating the folder (0700) if needed.

    Example:
        >>> p = write_token(runtime_dirs.private_dir("doctest") / "token", "x" * 20)
        >>> oct(p.stat().st_mode & 0o777), read_token(p) == "x" * 20
        ('0o600', True)
    """
    path = Path(path).expanduser()
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    return runtime_dirs.write_private(path, (token + "\n").encode())


def read_token(path: Path) -> str:
    """Read a token file; refuse one that others can read or that is empty."""
    path = Path(path).expanduser()
    mode = path.stat().st_mode
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise ValueError(f"token file {path} is readable by others (mode {oct(mode & 0o777)}); run chmod 600 {path}")
    token = path.read_text().strip()
    if not token:
        raise ValueError(f"token file {path} is empty; delete it to have a new token generated")
    return token


def load_or_create(path: Path) -> str:
    """Return the token in `path`, or generate one and write it there when the file does not exist."""
    path = Path(path).expanduser()
    return read_token(path) if path.exists() else _written(path, new_token())


def _written(path: Path, token: str) -> str:
    write_token(path, token)
    return token
