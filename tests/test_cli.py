"""The `aoi` command as a user runs it (a subprocess): clear errors with exit 2 for unusable paths and ports, the
eval lock, Ctrl-C in `aoi run` saving the partial trajectory, and every subcommand listed by `aoi --help`."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from aoi.store.sqlite import TrajectoryStore

PROBLEM = "noop_detection_hotel_reservation-1"
SUBCOMMANDS = ("run", "eval", "report", "rbac", "aiopslab", "problems", "serve-env", "trajectories", "twin")


def aoi(*args: str, cwd: Path | None = None, env: dict | None = None,
        timeout: float = 300) -> subprocess.CompletedProcess:
    """Run `python -m aoi ARGS` and return the finished process (output in .stdout, stderr merged)."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("AOI_")} | (env or {})
    return subprocess.run([sys.executable, "-m", "aoi", *args], cwd=cwd, env=environ, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=timeout, check=False)


def start(*args: str, cwd: Path, as_background_job: bool = False) -> subprocess.Popen:
    """Start `python -m aoi ARGS` in the background, output unbuffered (SIGINT ignored, as `&` leaves it, if asked)."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("AOI_")} | {"PYTHONUNBUFFERED": "1"}
    ignore = (lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if as_background_job else None
    return subprocess.Popen([sys.executable, "-m", "aoi", *args], cwd=cwd, env=environ, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, preexec_fn=ignore)


def clear_error(done: subprocess.CompletedProcess, *phrases: str) -> None:
    """Assert exit 2 with one error naming each phrase, and no traceback."""
    assert done.returncode == 2, done.stdout
    assert "Traceback" not in done.stdout, done.stdout
    for phrase in phrases:
        assert phrase in " ".join(done.stdout.replace("│", " ").split()), done.stdout  # rich wraps and boxes lines


@pytest.mark.parametrize("out, phrases", [
    ("/proc/aoi-test/run", ("cannot write to /proc/aoi-test", "No such file or directory", "--out")),
    ("/dev/null/run", ("cannot write to /dev/null/run", "Not a directory", "--out")),
])
def test_eval_out_on_special_paths_is_a_clear_error(tmp_path, out, phrases):
    clear_error(aoi("eval", "--problems", PROBLEM, "--out", out, cwd=tmp_path), *phrases)


def test_eval_out_that_is_a_file_is_a_clear_error(tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("keep me\n")
    clear_error(aoi("eval", "--problems", PROBLEM, "--out", str(notes), cwd=tmp_path),
                f"cannot use {notes} as a folder: it is a file", "--out")
    assert notes.read_text() == "keep me\n"


def test_run_in_a_read_only_folder_names_the_store_settings():
    # /proc takes no new folders, even from root (a chmod'ed folder would not stop root)
    done = aoi("run", PROBLEM, "--model", "expert", cwd=Path("/proc"))
    clear_error(done, "cannot write to runs", "AOI_STORE")


def test_run_with_an_unwritable_store_path_names_it(tmp_path):
    done = aoi("run", PROBLEM, "--model", "expert", cwd=tmp_path, env={"AOI_STORE": "/dev/null/t.db"})
    clear_error(done, "cannot use /dev/null as a folder: it is a file", "AOI_STORE")


@pytest.mark.parametrize("command, port, bound", [
    (["serve-env"], "99999", "less than or equal to 65535"), (["serve-env"], "-1", "greater than or equal to 0"),
    (["twin", "up", "--kubeconfig-dir", "k"], "99999", "less than or equal to 65535")])
def test_ports_out_of_range_are_a_clear_error(tmp_path, command, port, bound):
    done = aoi(*command, "--port", port, cwd=tmp_path, timeout=60)
    clear_error(done, "--port", bound)


def test_serve_env_with_an_unusable_workdir_is_refused_at_start(tmp_path):
    done = aoi("serve-env", "--port", "0", "--workdir", "/proc/aoi-test/sessions", cwd=tmp_path, timeout=60)
    clear_error(done, "--workdir", "cannot write to /proc/aoi-test", "No such file or directory")


def test_twin_up_with_an_unwritable_kubeconfig_dir_names_it(tmp_path):
    done = aoi("twin", "up", "--kubeconfig-dir", "/dev/null/k", "--port", "0", cwd=tmp_path, timeout=60)
    clear_error(done, "cannot write to /dev/null/k: Not a directory", "--kubeconfig-dir")


def test_twin_up_writes_admin_yaml_whole_or_not_at_all_in_a_private_folder(tmp_path):
    """A script that waits for admin.yaml to appear (as docs/twin.md's snippet test does) never reads it empty: the
    twin is built for seconds after the folder is checked."""
    proc = start("twin", "up", "--kubeconfig-dir", "kube", "--port", "0", "--app", "hotel-reservation", cwd=tmp_path)
    admin, seen = tmp_path / "kube" / "admin.yaml", []
    try:
        deadline = time.monotonic() + 120
        while not seen and proc.poll() is None and time.monotonic() < deadline:
            try:
                seen.append(admin.read_text())
            except FileNotFoundError:
                time.sleep(0.005)
        assert seen, f"admin.yaml never appeared: {proc.returncode=}"
        assert json.loads(seen[0])["current-context"] == "aoi-twin-admin"
        assert oct((tmp_path / "kube").stat().st_mode & 0o777) == "0o700"
        wait_for(proc, "twin ready at")
        assert sorted(p.name for p in (tmp_path / "kube").iterdir()) == ["admin.yaml", "executor.yaml", "probe.yaml"]
    finally:
        proc.terminate()
        proc.wait(30)


def slow_script(folder: Path, first_delay: float = 0.0) -> str:
    """Write a replay script: the Observer probes, the Probe runs one command, then answers after a minute."""
    decide = {"phase": "survey", "next": "probe", "instruction": "list the pods", "context": ""}
    command = {"thought": "", "tool": "exec_shell", "args": {"command": "kubectl get pods -A"}}
    finish = {"thought": "", "tool": "finish", "args": {"findings": "late"}}
    steps = [{"role": "observer", "text": json.dumps(decide), "delay": first_delay},
             {"role": "probe", "text": json.dumps(command)},
             {"role": "probe", "text": json.dumps(finish), "delay": 120}]
    path = folder / "slow.json"
    path.write_text(json.dumps(steps))
    return f"replay:{path}"


def wait_for(proc: subprocess.Popen, phrase: str, limit: float = 180.0) -> str:
    """Read the process's output until a line holds `phrase`; return what was read."""
    seen, deadline = [], time.monotonic() + limit
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        seen.append(line)
        if phrase in line:
            return "".join(seen)
    proc.kill()
    raise AssertionError(f"{phrase!r} never appeared; output:\n{''.join(seen)}")


@pytest.mark.parametrize("as_background_job", [False, True])  # `aoi run ... &` inherits SIGINT ignored
def test_ctrl_c_in_run_saves_the_partial_trajectory_marked_interrupted(tmp_path, as_background_job):
    proc = start("run", PROBLEM, "--model", slow_script(tmp_path), cwd=tmp_path, as_background_job=as_background_job)
    try:
        wait_for(proc, "kubectl get pods -A")  # the probe's command ran; its next answer takes two minutes
        time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        rest = proc.communicate(timeout=60)[0]
    finally:
        proc.kill()
    assert proc.returncode == 130, rest
    assert "interrupted: partial trajectory saved as" in rest and "runs/trajectories.db" in rest, rest
    saved_id = rest.split("saved as ")[1].split()[0]
    traj = TrajectoryStore(tmp_path / "runs" / "trajectories.db").get(saved_id)
    assert traj is not None and traj.error.startswith("interrupted")
    assert [s.role for s in traj.steps[:2]] == ["observer", "probe"] and "kubectl get pods" in traj.steps[1].action


def test_a_second_eval_on_the_same_out_is_refused_naming_the_first(tmp_path):
    out = tmp_path / "run"
    first = start("eval", "--problems", PROBLEM, "--out", str(out), "--executor", "thread",
                  "--model", slow_script(tmp_path, first_delay=120), cwd=tmp_path)
    try:
        wait_for(first, "1 problem(s)")
        lock, deadline = out / "eval.lock", time.monotonic() + 60
        while not (lock.exists() and lock.read_text()) and time.monotonic() < deadline:
            time.sleep(0.1)
        second = aoi("eval", "--problems", PROBLEM, "--out", str(out), "--model", "expert", cwd=tmp_path)
        clear_error(second, f"{out} is in use by another `aoi eval`", f"pid {first.pid}", "since")
    finally:
        first.kill()  # kill -9: the kernel releases its lock
        first.wait()
    assert json.loads((out / "summary.json").read_text())["sessions"][-1]["interrupted"] is True
    third = aoi("eval", "--problems", PROBLEM, "--out", str(out), "--model", "expert", cwd=tmp_path)
    assert third.returncode == 2 and "other options" in third.stdout  # past the lock: refused for another model
    fourth = aoi("eval", "--problems", PROBLEM, "--out", str(tmp_path / "other"), "--model", "expert", cwd=tmp_path)
    assert fourth.returncode == 0, fourth.stdout


def test_help_lists_every_subcommand():
    done = aoi("--help", timeout=60)
    assert done.returncode == 0 and all(f" {name} " in done.stdout for name in SUBCOMMANDS), done.stdout
    problems = aoi("problems", "list", timeout=60)
    assert problems.returncode == 0 and PROBLEM in problems.stdout


def test_help_imports_no_subcommand():
    probe = ("import sys\nfrom aoi.cli import app\ntry:\n    app(['--help'])\nexcept SystemExit:\n    pass\n"
             "print(sorted(m for m in sys.modules if m.split('.')[:2] in (['aoi', 'twin'], ['aoi', 'problems'], "
             "['aoi', 'evaluate'], ['aoi', 'env'], ['aoi', 'agents'], ['aoi', 'aiopslab'])))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stdout


def test_each_lazy_subcommand_loads_under_its_name_with_its_options():
    from aoi.cli import LAZY, load

    for name in LAZY:
        command = load(name)
        assert command.name == name and (command.params or getattr(command, "commands", None)), name
