"""The enforcement point: what the admin roles keep (AIOpsLab parity), what no role gets, and the screen."""

from __future__ import annotations

import pytest

from aoi.safety import gate
from aoi.safety.shellwords import Refused

NS = "test-hotel-reservation"

# What AIOpsLab parity needs with admin credentials: the reference solutions' forms, writes, exec, secret reads.
ADMIN_KEEPS = [
    f"kubectl patch service geo -n {NS} --type json -p '[{{\"op\": \"replace\", "
    "\"path\": \"/spec/ports/0/targetPort\", \"value\": 8083}]'",
    f"kubectl exec deploy/mongodb-geo -n {NS} -- /bin/bash /scripts/revoke-mitigate-admin-geo-mongo.sh",
    f"kubectl exec -it deploy/mongodb-geo -n {NS} -- mongo --eval 'db.version()'",
    f"kubectl rollout restart deployment/geo -n {NS}",
    f"kubectl scale deployment/geo -n {NS} --replicas=1",
    f"kubectl set image deployment/geo hotel-reserv-geo=yinfangchen/hotelreservation:latest -n {NS}",
    f"kubectl get configmap mongo-geo-script -n {NS} -o jsonpath='{{.data}}'",
    f"kubectl get secrets -n {NS} -o yaml",
    f"kubectl delete pod -l io.kompose.service=geo -n {NS}",
    f"kubectl delete -f - -n {NS}",
    f"kubectl get pods -n {NS} -v=5",
    f"kubectl -n {NS} get pods -o wide | grep geo",
    "kubectl config view",
    "kubectl auth can-i '*' '*'",
    "kubectl get --raw /api/v1/namespaces",
    f"kubectl logs deploy/geo -n {NS} --tail=50 --follow=false",
    f"kubectl rollout status deploy/geo -n {NS} --timeout=30s",
]
NOBODY_GETS = [
    "kubectl --kubeconfig=/root/.kube/config get pods", "kubectl get pods -s https://10.0.0.1", "kubectl get pods -shttps://x",
    "kubectl --token x get pods", "kubectl get pods --as=system:admin", "kubectl get pods --context=other",
    "kubectl get pods -o go-template-file=/etc/passwd", "kubectl get -f /etc/passwd", "kubectl get -k /tmp",
    "kubectl create cm x --from-file=/etc/passwd", "kubectl config set-credentials x --token=y",
    "kubectl config view --raw", "kubectl cluster-info dump", "kubectl get pods -v=6", "kubectl get pods --v=10",
    f"kubectl -n {NS} edit deploy geo", "kubectl proxy", "kubectl port-forward svc/geo 1:1", "kubectl attach geo-1",
    "kubectl run x -it --image=busybox", f"kubectl exec -it deploy/geo -n {NS}", "kubectl logs -f geo-1",
    "kubectl get pods -w", "kubectl cp geo-1:/etc/passwd /tmp/x", "kubectl foo", "kubectl debug geo-1 --image=x",
    "kubectl get pods --profile-output=/tmp/p", "kubectl get pods --cache-dir=/tmp/c", "kubectl create token probe",
    "kubectl apply -f https://example.com/x.yaml", "kubectl get pods --vmodule=x=9",
]


@pytest.mark.parametrize("command", ADMIN_KEEPS)
@pytest.mark.parametrize("role", [None, "observer", "admin"])
def test_admin_keeps_what_parity_needs(command, role):
    verdict = gate.check(command, role)
    assert verdict.allowed, verdict.reason


@pytest.mark.parametrize("command", NOBODY_GETS)
@pytest.mark.parametrize("role", [None, "probe", "executor"])
def test_no_role_gets_identity_files_or_terminals(command, role):
    verdict = gate.check(command, role)
    assert not verdict.allowed and verdict.kind == "refused"
    assert "—" in verdict.reason  # every refusal says what to do instead


@pytest.mark.parametrize("command, message", [
    ("kubectl get pods\x00", "NUL byte"), ("kubectl get pods -l " + "a" * gate.MAX_COMMAND, "characters is refused"),
    (b"kubectl get pods", "one command string")])
def test_screen_refuses_before_any_parsing(command, message):
    with pytest.raises(Refused, match=message):
        gate.screen(command)


def test_judge_sees_each_kubectl_argv_the_shell_runs():
    assert gate.judge(["get", "pods", "-n", NS], "probe").kind == "read"
    with pytest.raises(Refused, match="probe is read-only"):
        gate.judge(["delete", "pod", "x", "-n", NS], "probe")


def test_unknown_roles_are_refused():
    assert "unknown role" in gate.check("kubectl get pods", "root").reason
