"""exec_shell's simulated host with a scripted kubectl: what kubectl is fed, when a script ends, what it answers."""

from __future__ import annotations

import pytest

from aoi.env import shell


class Kubectl:
    """A scripted kubectl that records each call's arguments and stdin."""

    def __init__(self, out: str = "pod/a\npod/b\n"):
        self.out, self.calls = out, []

    def __call__(self, args, stdin, timeout):
        self.calls.append((args, stdin))
        return self.out, "", 0, False


def test_the_pipe_feeds_kubectl_apply_and_a_host_file_becomes_stdin():
    kubectl = Kubectl("")
    observation = shell.exec_shell("echo 'kind: ConfigMap' | kubectl apply -f -; printf 'k: v' > m.yaml; "
                                   "kubectl apply -f m.yaml; kubectl create --filename=m.yaml; "
                                   "kubectl apply -f /etc/passwd", kubectl, 0.0).observation
    assert kubectl.calls == [(["apply", "-f", "-"], b"kind: ConfigMap\n"), (["apply", "-f", "-"], b"k: v"),
                             (["create", "--filename=-"], b"k: v")]
    assert "-f/--filename reads host files" in observation  # a real host file never reaches kubectl


def test_each_kubectl_is_judged_after_expansion_and_a_refusal_ends_the_script():
    kubectl = Kubectl()
    outcome = shell.exec_shell("v=delete; kubectl get pods; kubectl $v pod a; kubectl get pods", kubectl, 0.0,
                               role="probe")
    assert outcome.observation.startswith("Error: Forbidden by AOI's command policy (probe role): kubectl delete is a")
    assert (outcome.refused, outcome.exit_status, outcome.cut) == (True, None, None)  # data, not words to read back
    assert kubectl.calls == [(["get", "pods"], None)]


def test_the_exit_status_travels_beside_the_observation():
    failed = shell.exec_shell("kubectl get pods; exit 3", Kubectl(), 0.0, role="probe")
    assert failed.observation.startswith("[ERROR] Docker command execution failed")
    assert (failed.refused, failed.exit_status, failed.cut) == (False, 3, None)
    assert shell.exec_shell("kubectl get pods", Kubectl(), 0.0, role="probe").exit_status == 0


def test_xargs_and_loops_reach_kubectl_with_each_name():
    kubectl = Kubectl()
    shell.exec_shell("kubectl get pods -o name | xargs -n1 kubectl logs --tail 1", kubectl, 0.0, role="probe")
    assert [args for args, _ in kubectl.calls] == [["get", "pods", "-o", "name"], ["logs", "--tail", "1", "pod/a"],
                                                   ["logs", "--tail", "1", "pod/b"]]


@pytest.mark.parametrize("script, expected", [
    ("x=a; while :; do x=$x$x; done", "variable x grew past"),
    ("while :; do :; done", "stopped after 20000 commands"),
    ("kubectl get pods | jq .", "the cluster host has no jq"),
    ("cat /etc/kubernetes/admin.conf", "No such file"),
])
def test_runaway_scripts_and_missing_tools_answer_clearly(script, expected):
    assert expected in shell.exec_shell(script, Kubectl(), 0.0).observation


def test_a_script_past_its_budget_answers_aiopslab_timeout():
    outcome = shell.exec_shell("echo a > f; while :; do cat f f >> f; done", Kubectl(), 0.0, timeout=1)
    assert outcome.observation.startswith("Failed to execute command in Docker container: kind-control-plane\nError: "
                                          "Command")
    assert (outcome.refused, outcome.exit_status, outcome.cut) == (False, None, "timeout")
