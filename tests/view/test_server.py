"""The viewer's server: it binds 127.0.0.1 only, answers from the run folders it was given and nothing else, is
read-only, and `aoi view` prints its URL and stops on SIGTERM."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from aoi.view.server import serve


def get(url: str) -> tuple[int, str]:
    """Return (status, body) of a GET."""
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def listening_addresses(port: int) -> set[str]:
    """Return the local addresses of the listening TCP sockets on `port`, as /proc/net/tcp{,6} lists them."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, hex_port = local.split(":")
            if state == "0A" and int(hex_port, 16) == port:  # 0A: LISTEN
                found.add(address)
    return found


def outward_address() -> str | None:
    """Return an address of this machine other than loopback, or None when it has none."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))  # TEST-NET-1: nothing is sent, the kernel only picks a route
        except OSError:
            return None
        address = probe.getsockname()[0]
    return None if address.startswith("127.") else address


def test_it_binds_only_127_0_0_1(viewer):
    port = viewer.server_address[1]
    assert viewer.server_address[0] == "127.0.0.1" and viewer.url == f"http://127.0.0.1:{port}/"
    assert listening_addresses(port) == {"0100007F"}  # 127.0.0.1, and no wildcard or IPv6 socket
    other = outward_address()
    if other is not None:
        with pytest.raises(ConnectionRefusedError), socket.create_connection((other, port), timeout=5):
            pass


def test_it_refuses_paths_outside_the_run_folders(viewer, runs, more, tmp_path):
    secret = tmp_path / "secret.json"
    secret.write_text('{"token": "outside"}')
    linked = more / "linked"
    linked.mkdir()
    (linked / "results.jsonl").write_text("")
    (linked / "config.json").symlink_to(secret)  # a run file that leads out of its folder
    key = f"{more.name}/linked"
    status, body = get(f"{viewer.url}file?key={key}&name=config.json")
    assert status == 403 and body.startswith(f"{key}/config.json leads outside the run folder")
    assert get(f"{viewer.url}api/run?key={key}")[1].count("outside") == 0  # its config is not read either
    status, body = get(f"{viewer.url}file?key={key}&name=../../{secret.name}")
    assert status == 403 and "is not a run file the viewer serves" in body
    status, body = get(f"{viewer.url}file?key={key}&name=/etc/passwd")
    assert status == 403 and "root:" not in body
    status, body = get(f"{viewer.url}api/run?key={runs.name}/../{tmp_path.name}")
    assert status == 404 and body.startswith(f"no run '{runs.name}/../{tmp_path.name}' in the folders given")
    for path in ("assets/../server.py", "assets/%2e%2e/server.py", "..%2F..%2Fetc%2Fpasswd", "etc/passwd"):
        assert get(viewer.url + path)[0] == 404, path
    status, body = get(f"{viewer.url}file?key={runs.name}/expert&name=results.jsonl")
    assert status == 200 and json.loads(body.splitlines()[0])["model"] == "expert"  # what it does serve


def test_it_is_read_only(viewer, runs):
    before = {p: p.stat().st_mtime_ns for p in runs.rglob("*") if p.is_file()}
    for method in ("POST", "PUT", "DELETE", "PATCH"):
        request = urllib.request.Request(f"{viewer.url}api/run?key={runs.name}/expert", data=b"{}", method=method)
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=10)
        assert refused.value.code == 501
    runs_listed = json.loads(get(f"{viewer.url}api/runs")[1])["runs"]
    for run in runs_listed:
        get(f"{viewer.url}api/run?key={run['key']}")
    ids = [json.loads(line)["trajectory_id"] for line in (runs / "expert" / "results.jsonl").read_text().splitlines()]
    status, body = get(f"{viewer.url}api/episode?key={runs.name}/expert&id={ids[0]}")
    assert status == 200 and json.loads(body)["id"] == ids[0]
    after = {p: p.stat().st_mtime_ns for p in runs.rglob("*") if p.is_file()}
    assert {p: t for p, t in after.items() if p in before} == before  # nothing written, the store not even opened
    assert not [p for p in after if p not in before and p.parent.name == "expert"]  # for writing (no -wal, -shm)


def test_an_unknown_trajectory_is_a_404_naming_it(viewer, runs):
    status, body = get(f"{viewer.url}api/episode?key={runs.name}/expert&id=nope")
    assert (status, body) == (404, f"no trajectory 'nope' in run {runs.name}/expert")


def test_aoi_view_prints_its_url_and_stops_on_sigterm(runs):
    process = subprocess.Popen([sys.executable, "-m", "aoi", "view", str(runs), "--port", "0"],  # as a user types
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = process.stdout.readline()
        assert line.startswith(f"aoi view: 2 run(s) under {runs} at http://127.0.0.1:")
        url = line.split(" at ")[1].split()[0]
        keys = [r["key"] for r in json.loads(get(url + "api/runs")[1])["runs"]]
        assert f"{runs.name}/expert" in keys and f"{runs.name}/replay-no" in keys
    finally:
        os.kill(process.pid, signal.SIGTERM)
        assert process.wait(10) == 0


def test_aoi_view_names_a_missing_folder(tmp_path):
    done = subprocess.run([sys.executable, "-m", "aoi", "view", str(tmp_path / "gone")], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr == (f"error: {tmp_path / 'gone'} is not a folder; pass run folders (`aoi eval --out DIR`, "
                           "`aoi train ... --out DIR`) or folders holding them\n")


def test_serve_names_a_busy_port(runs):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(OSError):
            serve([runs], port)
        done = subprocess.run([sys.executable, "-m", "aoi", "view", str(runs), "--port", str(port)],
                              capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr == f"error: cannot listen on 127.0.0.1:{port} (Address already in use); pick another --port\n"
