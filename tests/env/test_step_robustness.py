"""env.step never hangs and never raises: interactive kubectl, NUL bytes, huge commands and odd arguments all answer
a clear observation. Each step runs in a thread joined with a generous limit, so a hang fails instead of blocking."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import pytest

from aoi.env import make, shell
from aoi.problems import solutions
from aoi.twin.kubectl import kubectl_env, spawn, stop

NS = "test-social-network"
LIMIT = 90.0  # seconds a step may take before the test calls it a hang (a bounded step takes far less)


@pytest.fixture(scope="module")
def env():
    episode = make("k8s_target_port-misconfig-localization-1", max_steps=1000)
    episode.reset()
    yield episode
    episode.close()


def bounded_step(env, action: str, role=None) -> str:
    """Run env.step in a thread; fail if it hangs or raises, else return the observation."""
    result: dict = {}

    def run():
        try:
            result["observation"] = env.step(action, role=role)[0]
        except BaseException as exc:  # noqa: BLE001 - the test reports any exception as a failure
            result["error"] = exc

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(LIMIT)
    assert not worker.is_alive(), f"env.step hung on {action[:120]!r}"
    assert "error" not in result, f"env.step raised {result.get('error')!r}"
    return result["observation"]


INTERACTIVE = [f"kubectl edit deploy user-service -n {NS}", f"kubectl -n {NS} edit deploy user-service",
               f"kubectl --namespace={NS} edit svc user-service", "kubectl proxy",
               f"kubectl port-forward svc/user-service 18080:9090 -n {NS}",
               f"kubectl attach -i deploy/user-service -n {NS}",
               f"kubectl exec -it deploy/user-service -n {NS}", f"kubectl run x -i --image=busybox -n {NS}",
               f"kubectl debug deploy/user-service -it --image=busybox -n {NS}",
               f"kubectl logs -f deploy/user-service -n {NS}",
               f"kubectl get pods -n {NS} -w", f"kubectl get pods -n {NS} --watch"]


@pytest.mark.parametrize("role", [None, "probe", "executor"])
@pytest.mark.parametrize("command", INTERACTIVE)
def test_interactive_commands_are_refused(env, command, role):
    observation = bounded_step(env, solutions.shell(command), role)
    assert observation.startswith(("Error", "[ERROR]")), observation


@pytest.mark.parametrize("role", [None, "probe"])
@pytest.mark.parametrize("action, expected", [
    (solutions.shell(f"kubectl get pods -n {NS}\x00--kubeconfig=/tmp/x"), "NUL byte"),
    (solutions.shell(f"kubectl get pods -n {NS} -l " + "a" * 1_000_000), "characters"),
    (solutions.shell(f"kubectl get pods -n {NS} -l " + "a" * 2_000_000), "characters"),
    (solutions.shell(f"kubectl get pods -n {NS} -l " + "a" * 70_000), "characters is refused"),
    (solutions.shell(f"kubectl get pods -n {NS} -l " + "a|" * 40_000), "characters is refused"),
    (solutions.shell(f"kubectl get pods -n {NS} -l " + "a|" * 30_000), "[ERROR]"),  # the shell: a syntax error
    ("x" * 2_000_000, "characters"),
    (solutions.action("get_metrics", NS, "abc"), "invalid argument"),
    (f"```\nget_metrics('{NS}', 1e999)\n```", "invalid argument"),
    (solutions.action("get_logs", NS, "a" * 5_000), "printable names"),
    (solutions.action("get_logs", NS + "\x00", "user-service"), "printable names"),
    (solutions.action("read_metrics", "a\x00b"), "not found"),
    (solutions.action("read_traces", "x" * 5_000), "not found"),
    (solutions.action("read_traces", "x" * 1_000_000), "characters is refused"),
])
def test_bad_input_answers_a_clear_error(env, action, expected, role):
    assert expected in bounded_step(env, action, role)


def test_a_normal_command_still_runs_after_the_refusals(env):
    assert "user-service" in bounded_step(env, solutions.shell(f"kubectl get deploy -n {NS}"), "probe")


def test_a_timed_out_command_takes_its_whole_process_group_with_it(tmp_path):
    """A child that keeps the pipes open (as vi did under kubectl edit) must not outlive the timeout."""
    pidfile = tmp_path / "child.pid"
    script = f"import os, subprocess, time; p = subprocess.Popen(['sleep', '300']); open({str(pidfile)!r}, 'w')" \
             ".write(str(p.pid)); time.sleep(300)"
    proc = spawn([sys.executable, "-c", script], kubectl_env(tmp_path / "k.yaml", tmp_path / "cache"), None)
    while not pidfile.exists() or not pidfile.read_text():
        time.sleep(0.05)
    stop(proc)
    child = int(pidfile.read_text())
    time.sleep(0.2)
    assert proc.poll() is not None
    assert not Path(f"/proc/{child}").exists() or "Z" in Path(f"/proc/{child}/stat").read_text().split()[2]


def test_kubectl_runs_without_an_editor_and_without_stdin(tmp_path):
    env = kubectl_env(tmp_path / "k.yaml", tmp_path / "cache")
    assert env["EDITOR"] == env["KUBE_EDITOR"] == "/bin/false"
    done = spawn(["sh", "-c", "cat; $KUBE_EDITOR; echo $?"], env, None)
    out, _ = done.communicate(timeout=30)
    assert out.decode().strip() == "1"


def test_kubectl_runs_in_its_own_session(tmp_path):
    proc = spawn([sys.executable, "-c", "import os; print(os.getsid(0) == os.getpid())"],
                 kubectl_env(tmp_path / "k.yaml", tmp_path / "cache"), None)
    assert proc.communicate(timeout=30)[0].decode().strip() == "True"


def test_a_huge_output_answers_a_clear_error_before_the_filters():
    def run_kubectl(argv, stdin, timeout):
        return "x" * (shell.MAX_OUTPUT + 1), "", 0, False

    outcome = shell.exec_shell("kubectl get pods -A | grep x", run_kubectl, 0.0, role="probe")
    assert outcome.observation.startswith("Error: the command printed") and "narrow it" in outcome.observation
    assert (outcome.refused, outcome.exit_status, outcome.cut) == (False, None, "output_limit")


def test_the_probe_runs_exactly_the_kubectl_its_policy_judged():
    seen = []

    def run_kubectl(argv, stdin, timeout):
        seen.append(argv)
        return "a\nb\n", "", 0, False

    assert shell.exec_shell("kubectl get pods -n x | head -1", run_kubectl, 0.0, role="probe").observation == "a\n"
    assert seen == [["get", "pods", "-n", "x"]]
