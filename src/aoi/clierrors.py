"""Clear command-line errors for paths and ports: one sentence naming the path, the reason and the fix, exit 2."""

from __future__ import annotations

import contextlib
import errno
from collections.abc import Iterator
from pathlib import Path

import typer

RUN_FIX = ("run from a writable folder, or set AOI_STORE and AOI_AUDIT_LOG (store.path, store.audit_log) to writable "
           "paths")
OUT_FIX = "pass --out DIR in a writable place"


def os_message(exc: OSError, fix: str) -> str:
    """Say in one sentence which path could not be used, why, and how to fix it.

    Example:
        >>> os_message(PermissionError(13, "Permission denied", "runs"), "pass --out DIR")
        'cannot write to runs: Permission denied; pass --out DIR'
        >>> os_message(FileExistsError(17, "File exists", "notes.txt"), "pass --out DIR")
        'cannot use notes.txt as a folder: it is a file; pass --out DIR'
    """
    where = exc.filename if exc.filename is not None else "the path given"
    if exc.errno == errno.EEXIST:
        return f"cannot use {where} as a folder: it is a file; {fix}"
    return f"cannot write to {where}: {exc.strerror or exc}; {fix}"


def writable(*files: str | Path) -> None:
    """Create each file's folder and open the file for appending, so an unusable path fails before any work does.

    Example:
        >>> import tempfile, pathlib
        >>> writable(pathlib.Path(tempfile.mkdtemp()) / "runs" / "audit.jsonl")
    """
    for file in map(Path, files):
        file.parent.mkdir(parents=True, exist_ok=True)
        with open(file, "ab"):
            pass


@contextlib.contextmanager
def path_errors(print_line, fix: str) -> Iterator[None]:
    """Turn an OSError raised in the block into one red line (through `print_line`) and exit status 2."""
    try:
        yield
    except OSError as exc:
        print_line(f"[red]error:[/] {os_message(exc, fix)}")
        raise typer.Exit(2) from None
