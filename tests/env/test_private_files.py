"""Kubeconfigs and keys live in private folders (0700, files 0600) that die with their process; a killed process's
leftovers are swept by the next one; every episode's kubeconfigs carry tokens of their own."""

from __future__ import annotations

import json
import os
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from aoi import runtime_dirs
from aoi.env import make
from aoi.twin.api import tls

HOTEL_ID = "noop_detection_hotel_reservation-1"
SERVED = f"""
import sys, time
from aoi.env import make
env = make("{HOTEL_ID}")
env.reset()
env.step('```\\nexec_shell("kubectl get pods -n test-hotel-reservation")\\n```')
print(env.workdir, flush=True)
if sys.argv[1] == "wait":
    time.sleep(600)
"""


def run_served(tmp: Path, mode: str) -> subprocess.Popen:
    """Start a process that serves a problem's twin with TMPDIR=tmp and prints its episode folder."""
    return subprocess.Popen([sys.executable, "-c", SERVED, mode], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "TMPDIR": str(tmp)})


def test_a_killed_servers_files_are_private_and_swept_by_the_next_start(tmp_path):
    killed = run_served(tmp_path, "wait")
    try:
        folder = Path(killed.stdout.readline().strip())
        assert folder.parent == tmp_path and folder.name.startswith(f"aoi-episode-{killed.pid}-")
        kubeconfigs = sorted((folder / "kubeconfigs").iterdir())  # plus each client's own copy of the CA
        assert {"admin.yaml", "executor.yaml", "probe.yaml"} <= {p.name for p in kubeconfigs}
        assert all(p.name.endswith(".yaml") or p.name.startswith("certificate-authority-") for p in kubeconfigs)
        assert {oct(p.stat().st_mode & 0o777) for p in kubeconfigs} == {"0o600"}
        assert oct(folder.stat().st_mode & 0o777) == oct((folder / "kubeconfigs").stat().st_mode & 0o777) == "0o700"
    finally:
        killed.send_signal(signal.SIGKILL)
        killed.wait(10)
    left = set(tmp_path.iterdir())  # SIGKILL leaves no chance to clean up
    assert folder in left
    clean = run_served(tmp_path, "exit")
    assert clean.communicate(timeout=300)[0].strip() and clean.returncode == 0
    after = set(tmp_path.iterdir())
    assert folder not in after  # swept by the next start
    assert after <= left  # and the normal exit left nothing (no TLS key folder either)
    for path in after:  # the kubernetes client's copy of the CA certificate (public), from the killed process
        assert path.is_file() and b"PRIVATE KEY" not in path.read_bytes() and b"CERTIFICATE" in path.read_bytes()


def test_sweep_removes_only_our_folders_of_ended_processes(tmp_path):
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    try:
        dead = tmp_path / f"aoi-episode-{gone.stdout.strip()}-abcd1234"
        live = tmp_path / f"aoi-serve-env-{sleeper.pid}-abcd1234"
        reused = tmp_path / f"aoi-tls-{sleeper.pid}-zzzz9999"  # made by an earlier process that had the same pid
        legacy_key = tmp_path / "aoi-tls-abcd1234"  # older versions left every TLS key behind, pid-less
        loading = tmp_path / "aoi-tls-efgh5678"  # an older version's process may be loading this fresh one right now
        foreign = [tmp_path / "aoi-team", tmp_path / "aoi-episode-abcd1234",
                   tmp_path / f"other-{gone.stdout.strip()}-x", loading]
        for path in (dead, live, reused, legacy_key, *foreign):
            path.mkdir()
        old = time.time() - 3600
        for path in (reused, legacy_key):
            os.utime(path, (old, old))
        assert sorted(runtime_dirs.sweep(tmp_path)) == sorted([dead, reused, legacy_key])
        assert sorted(tmp_path.iterdir()) == sorted([live, *foreign])
    finally:
        sleeper.kill()
        sleeper.wait()


def test_a_forked_child_does_not_remove_its_parents_folders():
    folder = runtime_dirs.private_dir("test")
    try:
        pid = os.fork()
        if pid == 0:  # the child runs the exit handler as a normal exit would, then leaves at once
            runtime_dirs._remove_all()
            os._exit(0)
        os.waitpid(pid, 0)
        assert folder.is_dir()
    finally:
        runtime_dirs.remove(folder)
    assert not folder.exists()


def handshake(server_ctx: ssl.SSLContext) -> str:
    """Complete a TLS handshake against server_ctx, trusting the twin's certificate; return the TLS version."""
    client_ctx = ssl.create_default_context(cadata=tls.certificate()[0].decode())
    ours, theirs = socket.socketpair()
    server = threading.Thread(target=lambda: server_ctx.wrap_socket(ours, server_side=True).close())
    server.start()
    with client_ctx.wrap_socket(theirs, server_hostname="localhost") as client:
        version = client.version()
    server.join(10)
    return version


def test_tls_keys_load_without_files_or_from_files_removed_at_once():
    fallback = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls._load_from_private_files(fallback, *tls.certificate())
    for ctx in (tls.server_context(), fallback):
        assert handshake(ctx).startswith("TLS")
    assert list(Path(tempfile.gettempdir()).glob(f"aoi-tls-{os.getpid()}-*")) == []


def test_private_writes_replace_old_files_and_never_follow_a_symlink(tmp_path):
    loose, target = tmp_path / "loose", tmp_path / "elsewhere"
    loose.write_text("old")
    loose.chmod(0o644)
    target.write_text("keep me")
    (tmp_path / "link").symlink_to(target)
    for path in (loose, tmp_path / "link"):
        runtime_dirs.write_private(path, b"token")
        assert not path.is_symlink() and oct(path.stat().st_mode & 0o777) == "0o600" and path.read_bytes() == b"token"
    assert target.read_text() == "keep me"


def test_two_episodes_never_share_tokens():
    env = make(HOTEL_ID)
    try:
        seen = []
        for _ in range(2):
            env.reset()
            config = json.loads(env.backend.kubeconfigs["admin"].read_text())
            seen.append(config["users"][0]["user"]["token"])
        other = make(HOTEL_ID)
        other.reset()
        seen.append(other.backend.twin.credentials["admin"])
        other.close()
        assert len(set(seen)) == 3 and seen[1] == env.backend.twin.credentials["admin"]
    finally:
        env.close()
