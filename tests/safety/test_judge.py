"""gate.judge: each kubectl invocation of exec_shell's shell, judged after expansion, with the bytes piped into it."""

from __future__ import annotations

import pytest

from aoi.safety.gate import judge
from aoi.safety.shellwords import Refused

CM = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: flagd-config\n  namespace: shop\ndata:\n  a: b\n"


@pytest.mark.parametrize("args, role, kind", [
    (["get", "pods", "-n", "shop"], "probe", "read"),
    (["delete", "pod", "x", "-n", "shop"], "executor", "write"),
    (["delete", "pod", "x", "-n", "shop"], None, "admin"),
    (["apply", "-f", "-", "--dry-run=server"], None, "admin"),
])
def test_allowed(args, role, kind):
    assert judge(args, role, b"").kind == kind


def test_the_executor_applies_objects_piped_into_it():
    assert judge(["apply", "-f", "-", "-n", "shop", "--dry-run=server", "-o", "name"], "executor", CM).kind == "write"


@pytest.mark.parametrize("args, role, stdin, reason", [
    (["apply", "-f", "-"], "probe", CM, "the probe is read-only"),
    (["apply", "-f", "-"], "executor", b"", "received no objects"),
    (["apply", "-f", "-", "--force"], "executor", CM, "--force is refused with kubectl apply"),
    (["apply", "-f", "-"], "executor", b"kind: List\nitems: []\n", "not a List"),
    (["apply", "-f", "-"], "executor", b"kind: Node\nmetadata: {name: n}\n", "cluster-scoped nodes"),
    (["apply", "-f", "-"], "executor", b"kind: ClusterRole\nmetadata: {name: n}\n", "changes permissions"),
    (["apply", "-f", "-"], "executor", CM + b"  x: hostPath\n", "host paths"),
    (["apply", "-f", "-"], "executor", b"kind: [", "not valid YAML"),
    (["apply", "-f", "/etc/passwd"], None, CM, "-f/--filename reads host files"),
    (["get", "pods", "--token=x"], None, b"", "--token is refused"),
])
def test_refused(args, role, stdin, reason):
    with pytest.raises(Refused, match=reason):
        judge(args, role, stdin)
