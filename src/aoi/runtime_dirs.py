"""Private temporary folders that live as long as their process: kubeconfigs, keys and episode files.

Each folder is made 0700 under the temp dir (or a root of the caller's: memory_root for what is rewritten all the
time) and named aoi-<kind>-<pid>-<random>. It is removed by `remove()` or at exit; a process killed before that
(SIGKILL, SIGTERM without a handler, a crash) leaves it behind, and the next process that makes a folder there sweeps
every leftover of ours whose owner is gone, and the aoi-tls-* key folders that older versions never removed.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import shutil
import tempfile
import threading
import time
from pathlib import Path

PREFIX = "aoi-"
_NAME = re.compile(r"aoi-[a-z][a-z-]*-(\d+)-[a-z0-9_]{8}")  # mkdtemp's random part is 8 of [a-z0-9_]
_LEGACY_TLS = re.compile(r"aoi-tls-[a-z0-9_]{8}")  # before names carried the pid (and the key stayed on disk)
LEGACY_GRACE = 60.0  # seconds
_KIND = re.compile(r"[a-z][a-z-]*[a-z]")
MEMORY_ROOT = "/dev/shm"  # tmpfs on Linux; absent on macOS
SWEEP_EVERY = 30.0  # wall seconds between one process's sweeps of a temp dir (~1.3 ms per sweep of 1,000 entries)
_live: dict[Path, int] = {}  # folder -> pid that made it (a forked child must not remove its parent's folders)
_swept: dict[str, float] = {}  # temp dir -> when this process last swept it (time.monotonic)
_lock = threading.Lock()


def private_dir(kind: str, root: str | Path | None = None) -> Path:
    """Make a folder only this user can enter (0700), removed at exit; sweep dead processes' leftovers first (at most
    every SWEEP_EVERY seconds: an eval worker makes a folder per episode).

    Example:
        >>> folder = private_dir("doctest")
        >>> oct(folder.stat().st_mode & 0o777), folder.name.startswith(f"aoi-doctest-{os.getpid()}-")
        ('0o700', True)
        >>> remove(folder); folder.exists()
        False
    """
    if not _KIND.fullmatch(kind):
        raise ValueError(f"folder kind {kind!r} must be lowercase letters and dashes, e.g. 'episode' or 'serve-env'")
    now, where = time.monotonic(), str(root or tempfile.gettempdir())
    if now - _swept.get(where, -SWEEP_EVERY) >= SWEEP_EVERY:
        _swept[where] = now
        sweep(root)
    path = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{kind}-{os.getpid()}-", dir=root))  # mkdtemp makes it 0700
    with _lock:
        _live[path] = os.getpid()
    return path


def memory_root() -> Path | None:
    """Return the memory-backed folder (tmpfs) where private folders of many small writes belong, or None where there
    is none to write to (the temp dir then serves).

    kubectl rewrites its HTTP cache entries on every call by writing a temporary file and renaming it over the old
    one; on ext4 such a rename starts writing the new file out (auto_da_alloc), and sampled kubectl processes were
    often blocked in disk I/O (submit_bio_wait) or in the rename. Measured here with two loops of `kubectl get pods`
    side by side, one per core: the cache in the temp dir kept each core 89-90% busy, in /dev/shm 99%.
    """
    path = Path(MEMORY_ROOT)
    return path if path.is_dir() and os.access(path, os.W_OK | os.X_OK) else None


def remove(path: str | Path) -> None:
    """Remove a folder made by private_dir (and everything in it); a missing folder is fine."""
    path = Path(path)
    shutil.rmtree(path, ignore_errors=True)
    with _lock:
        _live.pop(path, None)


def write_private(path: str | Path, data: bytes) -> Path:
    """Write a file only its owner can read or write: 0600 from the first byte, and whole once it is there (written
    under a temporary name in the same folder, then renamed into place, so a reader never sees it empty or cut).

    Example:
        >>> folder = private_dir("doctest"); p = write_private(folder / "key", b"secret")
        >>> oct(p.stat().st_mode & 0o777), p.read_bytes(), sorted(f.name for f in folder.iterdir())
        ('0o600', b'secret', ['key'])
        >>> remove(folder)
    """
    path = Path(path)
    temporary = path.with_name(f".{path.name}.{os.getpid()}-{threading.get_ident()}.tmp")
    with contextlib.suppress(FileNotFoundError):
        temporary.unlink()  # a leftover of a killed writer; O_EXCL follows no symlink
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.fchmod(fd, 0o600)  # exactly 0600 whatever the umask
        os.write(fd, data)
    except BaseException:
        os.close(fd)
        temporary.unlink()
        raise
    os.close(fd)
    # Unlink, then rename onto a free name: renaming over a file makes ext4 flush it (auto_da_alloc; measured here:
    # 0.19 ms per write against 0.04 ms, and every reset writes three kubeconfigs).
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    os.rename(temporary, path)
    return path


def sweep(root: str | Path | None = None) -> list[Path]:
    """Remove this user's folders of ended processes and older versions' TLS key folders; return them."""
    removed = []
    with os.scandir(root or tempfile.gettempdir()) as entries:
        for entry in entries:
            if _stale(entry):
                shutil.rmtree(entry.path, ignore_errors=True)
                removed.append(Path(entry.path))
    return removed


def _stale(entry: os.DirEntry) -> bool:
    """Tell whether a folder is one of this user's that nobody needs any more."""
    match, legacy = _NAME.fullmatch(entry.name), _LEGACY_TLS.fullmatch(entry.name)
    if not (match or legacy) or not entry.is_dir(follow_symlinks=False):
        return False
    try:
        stat = entry.stat(follow_symlinks=False)
    except OSError:  # another process swept it first
        return False
    if stat.st_uid != os.getuid():
        return False
    if legacy:  # a private key older versions left for good; read once at start-up, so a minute old is done with
        return time.time() - stat.st_mtime > LEGACY_GRACE
    pid = int(match.group(1))
    return pid != os.getpid() and (not _alive(pid) or _started_after(pid, stat.st_mtime))


def _alive(pid: int) -> bool:
    """Tell whether a process with this pid exists."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive (and its folders are not ours anyway)
        return True
    return True


def _started_after(pid: int, when: float) -> bool:
    """Tell whether the process now holding pid started after `when` (so the pid was reused; Linux only)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        boot = next(int(line.split()[1]) for line in Path("/proc/stat").read_text().splitlines()
                    if line.startswith("btime "))
    except (OSError, IndexError, StopIteration, ValueError):
        return False  # cannot tell: keep the folder
    started = boot + int(fields[19]) / os.sysconf("SC_CLK_TCK")
    return started > when + 1.0  # btime has whole seconds


@atexit.register
def _remove_all() -> None:
    """Remove the folders this process made and has not removed yet."""
    with _lock:
        mine = [path for path, pid in _live.items() if pid == os.getpid()]
    for path in mine:
        remove(path)
