"""Run the real kubectl against a served twin, with a budget of simulated time for commands that wait."""

from __future__ import annotations

import functools
import os
import re
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from aoi import runtime_dirs

STALL_GRACE = 0.3  # wall seconds a command may keep waiting after simulated time can no longer move
POLL = 0.05  # wall seconds between checks for a stall (communicate returns at once when kubectl exits)
# Environment variables that would change kubectl's identity, config or behaviour behind the command line's back.
DROPPED = ("KUBECONFIG", "KUBECACHEDIR", "KUBECTL_EXTERNAL_DIFF", "KUBERC", "KUBECTL_REMOTE_COMMAND_WEBSOCKETS")
NO_EDITOR = "/bin/false"  # an editor that fails at once, should any kubectl command still try to open one
# Go runtime settings for the short-lived kubectl processes (the caller's own values win). A kubectl call is mostly
# start-up: ~5 MB of allocations in package init (its translations) that the collector walks on 2 threads for
# nothing. No collection below 512 MiB and one thread for Go code cut a call's CPU time by about a third (90 -> 60 ms
# measured with perf stat on `get pods`); output is unchanged, and a huge list still collects at the limit.
GO_RUNTIME = {"GOGC": "off", "GOMEMLIMIT": "512MiB", "GOMAXPROCS": "1"}


@dataclass
class Completed:
    """The outcome of one kubectl run."""

    args: list[str]
    returncode: int
    stdout: str
    stderr: str
    timed_out: bool = False


def kubectl_binary() -> str:
    """Return the kubectl on PATH, or explain how to get one."""
    found = shutil.which("kubectl")
    if not found:
        raise FileNotFoundError("kubectl is not on PATH; install kubectl 1.32 (e.g. apt-get install kubectl) "
                                "or put it on PATH")
    return found


def kubectl_env(kubeconfig: Path, cache_dir: Path) -> dict[str, str]:
    """Return the environment kubectl runs in: the role's kubeconfig and cache, no editor, no external diff, and
    the cheaper Go runtime settings of GO_RUNTIME unless the caller set its own.

    Example:
        >>> env = kubectl_env(Path("/k/probe.yaml"), Path("/k/cache"))
        >>> env["KUBECONFIG"], env["KUBE_EDITOR"]
        ('/k/probe.yaml', '/bin/false')
        >>> all(env[key] == os.environ.get(key, value) for key, value in GO_RUNTIME.items())
        True
    """
    env = {**GO_RUNTIME, **{key: value for key, value in os.environ.items() if key not in DROPPED}}
    env.update(KUBECONFIG=str(kubeconfig), KUBECACHEDIR=str(cache_dir), EDITOR=NO_EDITOR, KUBE_EDITOR=NO_EDITOR,
               VISUAL=NO_EDITOR)
    return env


def share_discovery(cache_dir: Path, server_url: str) -> Path:
    """Point kubectl's discovery cache for the twin at `server_url` at this process's one shared copy; return its path.

    Every twin serves the same discovery documents (the static resource catalog of aoi.twin.core.resources), so
    what kubectl writes on its first call in this process serves every later twin: a later episode's first call
    reads ~20 documents from disk instead of fetching and writing them (20-40 ms of kubectl's CPU). kubectl treats
    files it did not write as possibly stale and fetches again when a resource type is missing, as with any warm
    cache, and writes through the link atomically, so concurrent episodes can share it.

    Example:
        >>> cache = runtime_dirs.private_dir("doctest") / "kubecache"
        >>> link = share_discovery(cache, "https://127.0.0.1:6443")
        >>> link.name, link.resolve() == _shared_discovery_dir().resolve()
        ('127.0.0.1_6443', True)
    """
    # client-go's folder for a host: the URL without its scheme, each character outside [(\w/.)] made "_"
    link = cache_dir / "discovery" / re.sub(r"[^(\w/.)]", "_", server_url.split("://", 1)[-1])
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(_shared_discovery_dir(), target_is_directory=True)
    return link


@functools.cache
def _shared_discovery_dir() -> Path:
    return runtime_dirs.private_dir("kubectl-discovery")


def spawn(argv: list[str], env: dict[str, str], stdin: bytes | None) -> subprocess.Popen:
    """Start a process in its own session (no terminal; its whole group can be killed), stdin closed unless fed."""
    return subprocess.Popen(argv, stdin=subprocess.PIPE if stdin else subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, start_new_session=True)


def stop(proc: subprocess.Popen) -> tuple[bytes, bytes]:
    """Kill the process's whole group (an editor or pager it started too) and collect what it printed."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:  # already gone
        pass
    try:
        return proc.communicate(timeout=5)
    except subprocess.TimeoutExpired:  # a descendant left the group and holds the pipes: give up on its output
        proc.kill()
        return b"", b""


class KubectlRunner:
    """Run kubectl as one role against a twin.

    In manual time, a command that waits (rollout status, delete, get -w, drain) may pull the twin's clock forward by
    up to `budget` simulated seconds; once it cannot progress any further it is stopped, as a real command would time
    out.
    """

    def __init__(self, twin, kubeconfig: Path, cache_dir: Path, budget: float = 30.0):
        self.twin = twin
        self.cache_dir = cache_dir
        self.env = kubectl_env(kubeconfig, cache_dir)
        self.budget = budget
        self.binary = kubectl_binary()

    def run(self, args: list[str], stdin: bytes | None = None, timeout: float = 30.0) -> Completed:
        """Run `kubectl ARGS...` and return its output."""
        with self.twin.lock:
            outer = self.twin.sim_deadline
            self.twin.sim_deadline = self.twin.clock.now() + self.budget
            self.twin.stalled = False
        try:
            proc = spawn([self.binary, *args], self.env, stdin)
            try:
                out, err, timed_out = self._wait(proc, stdin, timeout)
            except BaseException:  # Ctrl-C mid-command: kubectl runs in its own session, so it would outlive us
                stop(proc)
                raise
        finally:
            with self.twin.lock:
                self.twin.sim_deadline = outer
        return Completed(args, proc.returncode, out.decode(errors="replace"), err.decode(errors="replace"), timed_out)

    def _wait(self, proc: subprocess.Popen, stdin: bytes | None, timeout: float) -> tuple[bytes, bytes, bool]:
        """Wait for the process; stop it when it stalls in simulated time or exceeds the wall timeout."""
        deadline = time.monotonic() + timeout
        stalled_since = None
        feed = stdin or None
        while True:
            try:
                out, err = proc.communicate(input=feed, timeout=POLL)
                return out, err, False
            except subprocess.TimeoutExpired:
                feed = None  # communicate() takes input only on its first call
            now = time.monotonic()
            if self.twin.stalled:
                stalled_since = stalled_since or now
            if now > deadline or (stalled_since and now - stalled_since > STALL_GRACE):
                out, err = stop(proc)
                return out, err, True
