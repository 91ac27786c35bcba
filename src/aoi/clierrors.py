"""Clear command-line errors: one line on stderr naming what went wrong and the fix (paths, ports, options), exit 2;
and what fits a terminal: `clip` (text cut with an ellipsis), `fit_columns` (which table columns fit, and how wide)."""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import click
import typer
from rich.console import Console
from rich.markup import escape

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


def writable_folder(folder: str | Path, mode: int = 0o777) -> None:
    """Create the folder (with `mode` if new) and check that files can be made in it, leaving no file behind (a file
    that appears there is whole: see runtime_dirs.write_private).

    Example:
        >>> import tempfile, pathlib
        >>> writable_folder(pathlib.Path(tempfile.mkdtemp()) / "kube", 0o700)
    """
    folder = Path(folder)
    folder.mkdir(mode=mode, parents=True, exist_ok=True)
    if not os.access(folder, os.W_OK | os.X_OK):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(folder))


def error_line(message: str) -> None:
    """Print `error: MESSAGE` on stderr as one line at any terminal width (red on a terminal; newlines joined)."""
    Console(stderr=True, soft_wrap=True).print(f"[red]error:[/] {escape(' '.join(str(message).split()))}")


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print the one-line error and return the exit to raise (status 2: the command was used wrongly).

    Example:
        >>> raise fail("no problem matches; check --problems")  # doctest: +SKIP
    """
    error_line(message)
    return typer.Exit(code)


# What click raises for bad usage: typer from 0.20 or so vendors click, raising its own classes (TyperException is
# their base); earlier ones raise click's.
CLICK_ERRORS = (click.ClickException, *(getattr(typer, name) for name in ("TyperException",) if hasattr(typer, name)))


def usage_line(exc: Exception) -> str:
    """Return a click error (an unknown option, a bad value, a missing argument) as one line saying where help is.

    Example:
        >>> usage_line(click.ClickException("something broke"))
        'something broke'
    """
    context = getattr(exc, "ctx", None)  # usage errors carry the command's context
    message = " ".join(exc.format_message().split())
    if context is None:
        return message
    return f"{message.rstrip('.')}; `{context.command_path} --help` lists the options"


@contextlib.contextmanager
def one_line_usage_errors() -> Iterator[None]:
    """Turn a click error raised in the block into one line on stderr and its exit status (2 for usage errors);
    the help a bare group prints (no_args_is_help) is not an error and passes through."""
    try:
        yield
    except CLICK_ERRORS as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":
            raise
        error_line(usage_line(exc))
        raise typer.Exit(exc.exit_code) from None


def clip(text: str, width: int) -> str:
    """Return one line of text at most `width` characters long; a cut one ends with "…" (at a space when one is near).

    Example:
        >>> clip("kubectl get pods -n test-hotel-reservation", 24)
        'kubectl get pods -n …'
        >>> clip("short", 24)
        'short'
    """
    text = " ".join(text.split())
    if len(text) <= width:
        return text
    cut = text[:width - 1]
    space = cut.rfind(" ")
    return (cut[:space + 1] if space >= width * 2 // 3 else cut) + "…"


GAP = 2  # columns between two table columns (rich's padding of 1 on each side; box=None, pad_edge=False)


def fit_columns(widths: dict[str, int], width: int, drop: list[str], shrink: dict[str, int] | None = None
                ) -> tuple[dict[str, int], list[str]]:
    """Return ({column: width} of the columns shown, in order; the columns hidden) for a table `width` wide.

    `widths` holds each column's natural width (its header or longest cell) in display order. Columns in `shrink`
    are narrowed first, down to their minimum (their cells then end with an ellipsis); then the columns in `drop` are
    hidden in that order until the rest fit. Any other column is never cut (ids).

    Example:
        >>> fit_columns({"id": 40, "family": 30, "target": 20}, 80, drop=["family"], shrink={"family": 12})
        ({'id': 40, 'family': 16, 'target': 20}, [])
        >>> fit_columns({"id": 60, "family": 30, "target": 20}, 80, drop=["family"], shrink={"family": 12})
        ({'id': 60, 'target': 20}, ['family'])
    """
    shown, hidden = dict(widths), []
    squeezed, over = _squeeze(shown, width, shrink or {})
    for name in drop:
        if over <= 0:
            break
        del shown[name]
        hidden.append(name)
        squeezed, over = _squeeze(shown, width, shrink or {})
    return squeezed, hidden


def _squeeze(widths: dict[str, int], width: int, shrink: dict[str, int]) -> tuple[dict[str, int], int]:
    """Narrow the shrinkable columns towards their minimum until the table fits; return them and the excess left."""
    squeezed, over = dict(widths), table_width(widths) - width
    for column in [c for c in widths if c in shrink]:
        cut = min(max(over, 0), widths[column] - min(shrink[column], widths[column]))
        squeezed[column], over = widths[column] - cut, over - cut
    return squeezed, over


def table_width(widths: dict[str, int]) -> int:
    """Return the width of a table of columns of these widths (box=None, pad_edge=False).

    Example:
        >>> table_width({"id": 40, "app": 9})
        51
    """
    return sum(widths.values()) + GAP * (len(widths) - 1)


@contextlib.contextmanager
def path_errors(print_line: Callable[[str], None] | None, fix: str) -> Iterator[None]:
    """Turn an OSError raised in the block into one red line (on stderr, or through `print_line`) and exit status 2."""
    try:
        yield
    except OSError as exc:
        if print_line is None:
            raise fail(os_message(exc, fix)) from None
        print_line(f"[red]error:[/] {os_message(exc, fix)}")
        raise typer.Exit(2) from None
