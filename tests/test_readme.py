"""The Python snippets of the README and docs/ run as written: each in a fresh interpreter, in a folder where what
its page says to start first (a served twin, a served environment) is running."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def snippets(page: Path) -> list[str]:
    """Return a page's Python snippets (a fence is a whole line: a snippet may hold ``` inside a string)."""
    return re.findall(r"^```python\n(.*?)^```$", page.read_text(encoding="utf-8"), re.S | re.M)


SNIPPETS = [(page.relative_to(ROOT), code) for page in PAGES for code in snippets(page)]


def free_port() -> int:
    """Return a port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def started(command: list[str], cwd: Path, ready):
    """Run `command` in the background in cwd until the block ends; wait until ready() holds (60 s at most)."""
    process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not ready():
            if process.poll() is not None:
                pytest.fail(f"{' '.join(command)} exited {process.returncode}: {process.stderr.read()}")
            if time.monotonic() > deadline:
                pytest.fail(f"{' '.join(command)} was not ready within 60 s")
            time.sleep(0.2)
        yield
    finally:
        process.terminate()
        process.wait(30)


def run_snippet(code: str, cwd: Path) -> str:
    """Run one snippet in a fresh interpreter in cwd; return its stdout (fail with its stderr)."""
    done = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"snippet failed:\n{code}\n{done.stderr}"
    return done.stdout


def aoi(*args: str) -> list[str]:
    return [sys.executable, "-m", "aoi", *args]


def twin_served(code: str, cwd: Path) -> str:
    """Serve the twin as docs/twin.md's `aoi twin up --kubeconfig-dir ./kube --app hotel-reservation` does."""
    with started(aoi("twin", "up", "--kubeconfig-dir", "kube", "--app", "hotel-reservation"), cwd,
                 lambda: (cwd / "kube" / "admin.yaml").is_file()):
        return run_snippet(code, cwd)


def env_served(code: str, cwd: Path) -> str:
    """Serve the environment as docs/environment.md's `aoi serve-env --port 8765 --token-file token.txt` does, on a
    free port (8765 may be taken on a test machine: the snippet's URL is pointed at it)."""
    port = free_port()

    def healthy() -> bool:
        try:
            return httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200
        except httpx.TransportError:
            return False

    with started(aoi("serve-env", "--port", str(port), "--token-file", "token.txt"), cwd, healthy):
        return run_snippet(code.replace("127.0.0.1:8765", f"127.0.0.1:{port}"), cwd)


# What each snippet needs, by a line only it has, and the page it is on; a snippet no entry names fails the test.
SETUPS = {
    'config.new_client_from_config("kube/admin.yaml")': (twin_served, "geo-", "docs/twin.md"),
    'from aoi.env import make': (run_snippet, "", "README.md"),
    'from aoi.env import EnvClient': (env_served, "Correct", "docs/environment.md"),
}


def setup_of(code: str):
    """Return the (runner, expected output, page) of a snippet."""
    found = [setup for marker, setup in SETUPS.items() if marker in code]
    assert len(found) == 1, f"add the snippet to tests/test_readme.py's SETUPS:\n{code}"
    return found[0]


def test_every_snippet_this_test_knows_is_on_its_page_once():
    assert sorted(str(page) for page, code in SNIPPETS) == sorted(page for _, _, page in SETUPS.values())
    assert all(str(page) == setup_of(code)[2] for page, code in SNIPPETS)
    assert "EnvClient.from_token_file" in (ROOT / "docs" / "environment.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("page,code", SNIPPETS, ids=[f"{p}:{s.splitlines()[0][:40]}" for p, s in SNIPPETS])
def test_a_snippet_runs(page, code, tmp_path):
    runner, expected, _ = setup_of(code)
    output = runner(code, tmp_path)
    assert expected in output
