"""The escape table: commands that try to change identity, server or config, touch host files, write as the probe,
read secrets, hang, or smuggle shell syntax. Placeholders: {kc} the kubeconfig folder, {canary} a host file, {out}
a host folder that must never appear, {ns} the app namespace."""

from __future__ import annotations

# (flag, value) pairs that change who kubectl is, which cluster it talks to, or which files it touches.
IDENTITY_FLAGS = [("--token", "abc123"), ("--as", "system:admin"), ("--as-group", "system:masters"), ("--as-uid", "0"),
                  ("--user", "aoi-admin"), ("--username", "admin"), ("--password", "pw"),
                  ("--client-certificate", "{kc}/admin.yaml"), ("--client-key", "{kc}/admin.yaml"),
                  ("--kubeconfig", "{kc}/admin.yaml"), ("--server", "https://127.0.0.1:1"),
                  ("-s", "https://127.0.0.1:1"), ("--context", "aoi-twin-admin"), ("--cluster", "aoi-twin"),
                  ("--certificate-authority", "{canary}"), ("--tls-server-name", "evil"),
                  ("--cache-dir", "{out}/cache"), ("--profile", "cpu"), ("--profile-output", "{out}/p.pprof")]
PLACES = ["kubectl {flag} get pods -n {ns}", "kubectl get pods -n {ns} {flag}", "kubectl get {flag} pods -n {ns}"]


def _flag_spellings(flag: str, value: str) -> list[str]:
    """Return `--f=v` and `--f v` (and -sV for the short server flag)."""
    spellings = [f"{flag}={value}", f"{flag} {value}"]
    return spellings + [f"{flag}{value}"] if not flag.startswith("--") else spellings


def identity_attempts() -> list[str]:
    """Every identity/target/file flag in every spelling, before and after the sub-command."""
    return [place.replace("{flag}", spelled) for flag, value in IDENTITY_FLAGS
            for spelled in _flag_spellings(flag, value) for place in PLACES]


HOST_FILES = [
    "kubectl get pods -n {ns} -o go-template-file={kc}/admin.yaml",
    "kubectl get pods -n {ns} -o=go-template-file --template={kc}/admin.yaml",
    "kubectl get pods -n {ns} -ogo-template-file={kc}/admin.yaml",
    "kubectl get pods -n {ns} -o jsonpath-file={kc}/probe.yaml",
    "kubectl get pods -n {ns} --output=jsonpath-file={canary}",
    "kubectl get pods -n {ns} -o templatefile={canary}",
    "kubectl get pods -n {ns} -o custom-columns-file={canary}",
    "kubectl get -f /etc/passwd",
    "kubectl get -f {kc}/admin.yaml",
    "kubectl get --filename={canary}",
    "kubectl get -k {kc}",
    "kubectl get pods -n {ns} --kustomize={kc}",
    "kubectl create cm leak -n {ns} --from-file={kc}/admin.yaml --dry-run=client -o yaml",
    "kubectl create configmap leak -n {ns} --from-file=k={canary} --dry-run=client -o yaml",
    "kubectl create cm leak -n {ns} --from-env-file={canary} --dry-run=client -o yaml",
    "kubectl create secret generic leak -n {ns} --from-file={kc}/probe.yaml --dry-run=client -o yaml",
    "kubectl create secret tls leak -n {ns} --cert={canary} --key={canary} --dry-run=client -o yaml",
    "kubectl apply -f {kc}/admin.yaml --dry-run=client",
    "kubectl replace -f {canary} --dry-run=client",
    "kubectl diff -f {canary}",
    "kubectl create -f {canary} --dry-run=client -o yaml",
    "kubectl apply -f https://127.0.0.1:1/x.yaml",
    "kubectl cp {ns}/x:/etc/passwd {out}/passwd",
    "kubectl cp {canary} {ns}/x:/tmp/canary",
    "kubectl kustomize {kc}",
    "kubectl cluster-info dump --output-directory {out}/dump",
    "kubectl cluster-info dump --output-directory={out}/dump -A",
    "kubectl cluster-info dump",
    "kubectl get pods -n {ns} -v=6",
    "kubectl get pods -n {ns} -v=9",
    "kubectl --v=6 get pods -n {ns}",
    "kubectl --v 8 get pods -n {ns}",
    "kubectl -v6 get pods -n {ns}",
    "kubectl -v 10 get pods -n {ns}",
    "kubectl get pods -n {ns} --v=07",
    "kubectl get pods -n {ns} -v=+6",
    "kubectl config view --raw",
    "kubectl config view --flatten",
    "kubectl config view --raw -o jsonpath={{.users[0].user.token}}",
    "kubectl config view --minify --raw",
    "kubectl config set-credentials aoi-probe --token=abc123",
    "kubectl config set-credentials aoi-admin --token=abc123",
    "kubectl config set-cluster aoi-twin --server=https://127.0.0.1:1",
    "kubectl config set-context aoi-twin-probe --user=aoi-admin",
    "kubectl config use-context aoi-twin-admin",
    "kubectl config use aoi-twin-admin",
    "kubectl config set-context --current --namespace=kube-system",
    "kubectl config set users.aoi-probe.token abc123",
    "kubectl config unset users",
    "kubectl config delete-user aoi-probe",
    "kubectl config rename-context aoi-twin-probe x",
    "kubectl config get-users",
    "kubectl --kubeconfig {kc}/admin.yaml config view --raw",
    "kubectl create token probe -n aoi",
]
# Host commands and environment tricks: nothing but kubectl runs, and never with another kubeconfig.
SHELL = [
    "cat {canary}", "ls {kc}", "bash -c id", "sh -c 'cat {kc}/admin.yaml'", "/usr/bin/kubectl get pods -n {ns}",
    "env KUBECONFIG={kc}/admin.yaml kubectl get secrets -A", "KUBECONFIG={kc}/admin.yaml kubectl get secrets -A",
    "kubectl get pods; cat {canary}", "kubectl get pods && cat {canary}", "kubectl get pods || cat {canary}",
    "kubectl get pods $(cat {canary})", "kubectl get pods `cat {canary}`", "kubectl get pods > {out}/f",
    "kubectl get pods >> {out}/f", "kubectl get pods < {canary}", "kubectl get pods | sh", "kubectl get pods | bash",
    "kubectl get pods | tee {out}/f", "kubectl get pods | xargs cat", "kubectl get pods | sed 'w {out}/f'",
    "kubectl get pods | sed -n '1r {canary}'", "kubectl get pods | awk '{{system(\"cat {canary}\")}}'",
    "kubectl get pods | awk '{{print > \"{out}/f\"}}'", "kubectl get pods | grep -f {canary}",
    "kubectl get pods | head {canary}", "kubectl get pods | tail -n 5 {canary}", "kubectl get pods | sort -o {out}/f",
    "kubectl get pods --kubeconfig=${{HOME}}/.kube/config", "kubectl get pods -n {ns} & cat {canary}",
    "kubectl {{get,delete}} pods -n {ns}", "kubectl-foo", "kubectl foo bar", "kubectl plugin list",
    "kubectl get pods | jq -f {canary}", "kubectl get pods | jq --rawfile x {canary} .",
]
# Commands that wait on a terminal or stream forever.
INTERACTIVE = [
    "kubectl edit deploy user-service -n {ns}", "kubectl -n {ns} edit deploy user-service",
    "kubectl --namespace {ns} edit svc/user-service", "kubectl -n={ns} edit deployment user-service",
    "kubectl  edit   -n {ns} deploy user-service", "kubectl apply edit-last-applied deploy/user-service -n {ns}",
    "kubectl proxy", "kubectl proxy --port=0", "kubectl port-forward svc/user-service 18080:9090 -n {ns}",
    "kubectl -n {ns} port-forward deploy/user-service 18080:9090", "kubectl attach deploy/user-service -n {ns}",
    "kubectl attach -it deploy/user-service -n {ns}", "kubectl exec -it deploy/user-service -n {ns}",
    "kubectl exec -i deploy/user-service -n {ns} -- sh", "kubectl run shell -it --image=busybox -n {ns}",
    "kubectl run shell -i --rm --image=busybox -n {ns} -- sh",
    "kubectl debug deploy/user-service -it --image=busybox -n {ns}",
    "kubectl logs -f deploy/user-service -n {ns}", "kubectl -n {ns} logs --follow deploy/user-service",
    "kubectl logs deploy/user-service -n {ns} -f", "kubectl get pods -n {ns} -w", "kubectl get pods -n {ns} --watch",
    "kubectl get pods -n {ns} --watch-only", "kubectl -n {ns} get -w pods",
]
# Reads of credentials.
SECRETS = [
    "kubectl get secrets -A", "kubectl get secret -A -o yaml", "kubectl describe secrets -A",
    "kubectl get secrets,pods -A -o json", "kubectl get all,secrets -A -o yaml", "kubectl get --raw /api/v1/secrets",
    "kubectl get --raw /api/v1/namespaces/aoi/secrets", "kubectl get --raw /api/v1/namespaces/%73ecrets",
    "kubectl get --raw /api/v1/namespaces/aoi/serviceaccounts/probe/token", "kubectl get secret -n aoi -o json",
    "kubectl get secrets -A -o jsonpath={{.items[*].data}}", "kubectl -n {ns} get secret",
]
# Writes of every verb: refused for the probe by the policy and, directly, by RBAC.
WRITES = [
    "kubectl delete pod -l app=user-service -n {ns}", "kubectl delete deploy user-service -n {ns}",
    "kubectl delete svc user-service -n {ns}", "kubectl delete ns {ns}", "kubectl delete cm --all -n {ns}",
    "kubectl scale deploy user-service --replicas=0 -n {ns}",
    "kubectl -n {ns} scale deployment/user-service --replicas 5",
    "kubectl patch svc user-service -n {ns} -p '{{\"spec\":{{\"ports\":[{{\"port\":1,\"targetPort\":1}}]}}}}'",
    "kubectl patch deploy user-service -n {ns} --type merge -p '{{\"spec\":{{\"replicas\":0}}}}'",
    "kubectl label deploy user-service x=y -n {ns}", "kubectl annotate svc user-service x=y -n {ns}",
    "kubectl set image deploy/user-service user-service=nginx -n {ns}",
    "kubectl set env deploy/user-service X=1 -n {ns}", "kubectl rollout restart deploy/user-service -n {ns}",
    "kubectl rollout undo deploy/user-service -n {ns}", "kubectl rollout pause deploy/user-service -n {ns}",
    "kubectl create cm x -n {ns} --from-literal=a=b", "kubectl create secret generic x -n {ns} --from-literal=a=b",
    "kubectl create deployment x --image=nginx -n {ns}", "kubectl create ns evil",
    "kubectl create sa x -n {ns}",
    "kubectl create rolebinding x --clusterrole=admin --serviceaccount=aoi:probe -n {ns}",
    "kubectl create clusterrolebinding x --clusterrole=cluster-admin --serviceaccount=aoi:probe",
    "kubectl expose deploy user-service --port=1 --name=x -n {ns}",
    "kubectl autoscale deploy user-service --max=2 -n {ns}",
    "kubectl cordon kind-worker", "kubectl drain kind-worker --ignore-daemonsets",
    "kubectl taint node kind-worker a=b:NoSchedule",
    "kubectl run x --image=nginx -n {ns}", "kubectl delete pod -l app=user-service -n {ns} --dry-run=none",
    "kubectl label node kind-worker x=y", "kubectl set serviceaccount deploy/user-service default -n {ns}",
]
# Telemetry and file actions (not exec_shell): path traversal and argument smuggling.
FILE_ACTIONS = [
    ("read_metrics", "../kubeconfigs/admin.yaml"), ("read_metrics", "kubeconfigs/admin.yaml"),
    ("read_metrics", "{kc}/admin.yaml"), ("read_traces", "kubeconfigs/probe.yaml"), ("read_traces", "{canary}"),
    ("read_metrics", "/etc/passwd"), ("read_metrics", "metrics_output/../kubeconfigs/admin.yaml"),
    ("read_traces", "trace_output/../../kubeconfigs/admin.yaml"), ("read_metrics", "{kc}/../kubeconfigs/executor.yaml"),
    ("read_traces", "kubeconfigs/admin.yaml\x00.csv"),
]
LOG_ACTIONS = [("--kubeconfig={kc}/admin.yaml", "user-service"), ("{ns}", "x --token=abc123"), ("-v=9", "user-service"),
               ("{ns}", "user-service -v=9"), ("{ns}", "a" * 300)]
BIG = ["kubectl get pods -l " + "a" * 1_000_000, "kubectl get pods -n {ns}\x00 --kubeconfig={kc}/admin.yaml",
       "kubectl get pods -n " + "x" * 70_000]

PROBE = identity_attempts() + HOST_FILES + SHELL + INTERACTIVE + SECRETS + WRITES + BIG
# role=None keeps AIOpsLab's powers (writes, exec, secrets); only identity, config, host files and hangs are refused.
ADMIN = identity_attempts() + HOST_FILES + SHELL + INTERACTIVE + BIG
