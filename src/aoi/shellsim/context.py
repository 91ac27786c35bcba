"""What a simulated program sees: its pod, environment, files, processes and clock; and what it leaves behind."""

from __future__ import annotations

import errno
import functools
import posixpath
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from aoi.shellsim.limits import FILE_LIMIT
from aoi.shellsim.pod import SA_DIR, abs_path, container_spec

_READ_ONLY_VOLUMES = ("configMap", "secret", "projected", "downwardAPI")


@dataclass
class ExecResult:
    """What a program leaves behind: its two output streams and exit code."""

    stdout: bytes = b""
    stderr: bytes = b""
    exit_code: int = 0


Program = Callable[[list[str], "ExecContext"], ExecResult]


_STRERROR = {errno.ENOSPC: "No space left on device",
             errno.ENOENT: "No such file or directory", errno.EISDIR: "Is a directory",
             errno.ENOTDIR: "Not a directory", errno.EEXIST: "File exists", errno.EROFS: "Read-only file system",
             errno.ENOTEMPTY: "Directory not empty"}


def _os_error(cls: type[OSError], code: int, path: str) -> OSError:
    return cls(code, _STRERROR[code], path)


@dataclass
class ExecContext:
    """One exec into a container: the pod, its files (a scratch copy per exec) and the twin's clock.

    Example:
        >>> ctx = ExecContext({"metadata": {"name": "web-0"}}, "web", {}, {"/etc/a": b"x"}, [], 0.0)
        >>> ctx.hostname, ctx.is_dir("/etc"), ctx.list_dir("/etc"), ctx.with_(cwd="/etc").read("a")
        ('web-0', True, ['a'], b'x')
    """

    pod: dict
    container: str
    env: dict[str, str]
    files: dict[str, bytes]  # absolute path -> content; a key ending in "/" is an empty directory
    processes: list[tuple[int, str, str]]  # (pid, user, command line); pid 1 is the main process
    now: float  # the twin's clock in epoch seconds; programs never read the wall clock
    stdin: bytes = b""
    programs: Any = None  # a Registry (aoi.shellsim.registry.default_registry() and the caller's own programs)
    hostname: str = ""
    cwd: str = "/"
    binaries: frozenset[str] | None = None  # executables the image has; None: every registered program
    node: dict | None = None  # the Node the pod runs on, for uname and nproc, when known
    steps: list[int] = field(default_factory=lambda: [0])  # commands run so far, shared by the exec's nested shells
    watchdog: Callable[[], None] | None = None  # called before each command; may raise to end the run (a timeout)

    def __post_init__(self):
        if not self.hostname:
            spec, meta = self.pod.get("spec") or {}, self.pod.get("metadata") or {}
            self.hostname = spec.get("hostname") or meta.get("name", "")

    def with_(self, **changes) -> ExecContext:
        """Return a copy with some fields changed (the files stay shared)."""
        return replace(self, **changes)

    def path(self, name: str) -> str:
        """Return `name` as a normalised absolute path, relative names taken from cwd."""
        return abs_path(posixpath.join(self.cwd, name))

    def is_file(self, name: str) -> bool:
        """Return whether `name` is a regular file (or /dev/null)."""
        p = self.path(name)
        return p in self.files or p == "/dev/null"

    def is_dir(self, name: str) -> bool:
        """Return whether `name` is a directory (directories are implied by the paths below them)."""
        prefix = self.path(name).rstrip("/") + "/"
        return prefix == "/" or any(k.startswith(prefix) for k in self.files)

    def exists(self, name: str) -> bool:
        """Return whether `name` is a file or a directory."""
        return self.is_file(name) or self.is_dir(name)

    def list_dir(self, name: str) -> list[str]:
        """Return the sorted names directly inside directory `name`."""
        prefix = self.path(name).rstrip("/") + "/"
        return sorted({k[len(prefix):].split("/")[0] for k in self.files if k.startswith(prefix) and k != prefix})

    def tree(self) -> list[str]:
        """Return every file and directory path, sorted."""
        out = {"/"}
        for key in self.files:
            parts = key.rstrip("/").split("/")
            out.update("/".join(parts[:n]) for n in range(2, len(parts) + 1))
        return sorted(out)

    def read(self, name: str) -> bytes:
        """Return a file's content; raise FileNotFoundError or IsADirectoryError like open()."""
        p = self.path(name)
        if p in self.files:
            return self.files[p]
        if p == "/dev/null":
            return b""
        raise _os_error(IsADirectoryError if self.is_dir(p) else FileNotFoundError,
                        errno.EISDIR if self.is_dir(p) else errno.ENOENT, name)

    def writable(self, name: str) -> None:
        """Raise the OSError writing `name` would meet (missing parent, directory, read-only mount)."""
        p = self.path(name)
        if self.is_dir(p):
            raise _os_error(IsADirectoryError, errno.EISDIR, name)
        if not self.is_dir(posixpath.dirname(p)):
            raise _os_error(FileNotFoundError, errno.ENOENT, name)
        if self.read_only(p):
            raise _os_error(OSError, errno.EROFS, name)

    def write(self, name: str, data: bytes, append: bool = False) -> None:
        """Write a file in the scratch overlay; raise OSError as writable() says."""
        if self.path(name) == "/dev/null":
            return
        self.writable(name)
        p = self.path(name)
        if len(data) + (len(self.files.get(p, b"")) if append else 0) > FILE_LIMIT:
            raise _os_error(OSError, errno.ENOSPC, name)
        self.files[p] = (self.files.get(p, b"") if append else b"") + data

    def make_dir(self, name: str) -> None:
        """Create directory `name`; raise FileExistsError, FileNotFoundError or a read-only OSError."""
        p = self.path(name)
        if self.exists(p):
            raise _os_error(FileExistsError, errno.EEXIST, name)
        if not self.is_dir(posixpath.dirname(p)):
            raise _os_error(FileNotFoundError, errno.ENOENT, name)
        if self.read_only(p):
            raise _os_error(OSError, errno.EROFS, name)
        self.files[p + "/"] = b""

    def remove(self, name: str, recursive: bool = False) -> None:
        """Remove a file (or a directory tree when `recursive`); raise OSError like unlink()."""
        p = self.path(name)
        if not self.exists(p) or p == "/dev/null":
            raise _os_error(FileNotFoundError, errno.ENOENT, name)
        if self.read_only(p):
            raise _os_error(OSError, errno.EROFS, name)
        if self.is_dir(p) and not recursive:
            raise _os_error(IsADirectoryError, errno.EISDIR, name)
        for key in [k for k in self.files if k == p or k.startswith(p.rstrip("/") + "/")]:
            del self.files[key]
        parent = posixpath.dirname(p)
        if parent != "/" and not self.is_dir(parent):
            self.files[parent + "/"] = b""  # the parent stays, now empty

    def read_only(self, name: str) -> bool:
        """Return whether `name` lies on a read-only mount (configMap, secret, projected, downwardAPI, readOnly)."""
        p = self.path(name)
        return any(p == m or p.startswith(m.rstrip("/") + "/") for m in self._read_only_mounts())

    def _read_only_mounts(self) -> tuple[str, ...]:
        volumes = {v.get("name"): v for v in (self.pod.get("spec") or {}).get("volumes") or []}
        out = [SA_DIR]
        for m in container_spec(self.pod, self.container).get("volumeMounts") or []:
            volume = volumes.get(m.get("name"), {})
            if m.get("readOnly") or any(k in volume for k in _READ_ONLY_VOLUMES):
                out.append(abs_path(m.get("mountPath", "/")))
        return tuple(out)

    def program(self, name: str) -> Program | None:
        """Return the registered program called `name` (by basename) if the image has it."""
        base = posixpath.basename(name)
        if self.binaries is not None and base not in self.binaries:
            return None
        if self.programs is None:
            raise ValueError("this ExecContext has no programs: pass programs=default_registry() "
                             "(aoi.shellsim.registry) when making it")
        return self.programs.lookup(base)

    def resolve(self, name: str) -> Program | None:
        """Return what exec'ing `name` runs: a `#!` script among the files, or a registered program."""
        if "/" in name and self.is_file(name) and self.read(name).startswith(b"#!"):
            return functools.partial(_run_script, self.path(name))
        return self.program(name)


def _run_script(path: str, argv: list[str], ctx: ExecContext) -> ExecResult:
    """Run a `#!` script with its interpreter, as the kernel does."""
    line = ctx.read(path).split(b"\n", 1)[0][2:].decode("utf-8", "replace").split()
    interpreter = ctx.program(line[0]) if line else None
    if interpreter is None:
        shown = line[0] if line else ""
        return ExecResult(b"", f"{argv[0]}: {shown}: bad interpreter: No such file or directory\n".encode(), 126)
    return interpreter([line[0], *line[1:], path, *argv[1:]], ctx)
