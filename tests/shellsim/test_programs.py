"""The simulated container user space: kubelet files and env, the shell, the utilities, the registry."""

from __future__ import annotations

import base64

import pytest

from aoi.shellsim.context import ExecContext, ExecResult
from aoi.shellsim.registry import Registry, default_registry, run
from aoi.twin.kubelet.env import build_env
from aoi.twin.kubelet.files import build_files

NOW = 1748854800.0  # 2025-06-02T09:00:00Z, a Monday

CONFIGMAPS = {
    ("shop", "app-config"): {"data": {"x": "alpha\nbeta\ngamma\n", "mode": "fast", "app.yaml": "port: 8080\n"}},
    ("shop", "scripts"): {"data": {"s.sh": "#!/bin/bash\n# a comment\nNAME=world\necho \"hello $NAME\"\nnosuch arg\n"
                                           "echo \"after $?\"\nexit 5\n",
                                   "strict.sh": "set -e\necho one\nfalse\necho two\n",
                                   "args.sh": "echo \"$# args: $1 $2\"\nfor a in \"$@\"; do echo \"<$a>\"; done\n"}},
    ("shop", "kube-root-ca.crt"): {"data": {"ca.crt": "-----BEGIN CERTIFICATE-----\nTWIN\n-----END CERTIFICATE-----"}},
}
SECRETS = {("shop", "db-secret"): {"data": {"password": base64.b64encode(b"s3cret").decode(),
                                            "user": base64.b64encode(b"admin").decode()}}}
SERVICES = [
    {"metadata": {"name": "kubernetes", "namespace": "default"},
     "spec": {"clusterIP": "10.96.0.1", "ports": [{"name": "https", "port": 443, "protocol": "TCP"}]}},
    {"metadata": {"name": "mongodb-geo", "namespace": "shop"},
     "spec": {"clusterIP": "10.96.12.7", "ports": [{"name": "mongodb-geo", "port": 27017, "protocol": "TCP"}]}},
    {"metadata": {"name": "headless", "namespace": "shop"}, "spec": {"clusterIP": "None", "ports": [{"port": 80}]}},
    {"metadata": {"name": "elsewhere", "namespace": "other"},
     "spec": {"clusterIP": "10.96.1.1", "ports": [{"port": 80}]}},
]
POD = {
    "metadata": {"name": "geo-7d9f", "namespace": "shop", "uid": "uid-123", "labels": {"app": "geo", "tier": "db"},
                 "creationTimestamp": "2025-06-02T08:00:00Z"},
    "spec": {
        "nodeName": "worker-1", "serviceAccountName": "geo-sa",
        "containers": [{
            "name": "geo", "command": ["geo"], "args": ["--port", "8083"],
            "resources": {"limits": {"cpu": "500m", "memory": "256Mi"}},
            "env": [{"name": "DB_HOST", "value": "mongodb-geo"}, {"name": "DB_URL", "value": "mongodb://$(DB_HOST):27017"},
                    {"name": "ESCAPED", "value": "$$(DB_HOST)"}, {"name": "MISSING", "value": "$(NOPE)"},
                    {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                    {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
                    {"name": "APP", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['app']"}}},
                    {"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
                    {"name": "CPU", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu"}}},
                    {"name": "MEM_MI",
                     "valueFrom": {"resourceFieldRef": {"resource": "limits.memory", "divisor": "1Mi"}}},
                    {"name": "PASSWORD", "valueFrom": {"secretKeyRef": {"name": "db-secret", "key": "password"}}},
                    {"name": "MODE", "valueFrom": {"configMapKeyRef": {"name": "app-config", "key": "mode"}}}],
            "envFrom": [{"configMapRef": {"name": "app-config"}, "prefix": "CFG_"},
                        {"secretRef": {"name": "db-secret"}}],
            "volumeMounts": [
                {"name": "config", "mountPath": "/etc/config"},
                {"name": "scripts", "mountPath": "/scripts"},
                {"name": "secret", "mountPath": "/etc/secret", "readOnly": True},
                {"name": "one", "mountPath": "/app/app.yaml", "subPath": "app.yaml"},
                {"name": "proj", "mountPath": "/etc/proj"},
                {"name": "info", "mountPath": "/etc/podinfo"},
                {"name": "data", "mountPath": "/data"}]}],
        "volumes": [
            {"name": "config", "configMap": {"name": "app-config"}},
            {"name": "scripts", "configMap": {"name": "scripts", "defaultMode": 0o755}},
            {"name": "secret", "secret": {"secretName": "db-secret", "items": [{"key": "password", "path": "pw"}]}},
            {"name": "one", "configMap": {"name": "app-config"}},
            {"name": "proj", "projected": {"sources": [
                {"configMap": {"name": "app-config", "items": [{"key": "mode", "path": "cfg/mode"}]}},
                {"secret": {"name": "db-secret", "items": [{"key": "user", "path": "user"}]}},
                {"serviceAccountToken": {"path": "token", "audience": "vault"}},
                {"downwardAPI": {"items": [{"path": "ns", "fieldRef": {"fieldPath": "metadata.namespace"}}]}}]}},
            {"name": "info",
             "downwardAPI": {"items": [{"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}}]}},
            {"name": "data", "emptyDir": {}}]},
    "status": {"podIP": "10.244.1.5", "hostIP": "172.18.0.3", "startTime": "2025-06-02T08:00:05Z"},
}


def lookup(kind: str, namespace: str, name: str) -> dict | None:
    return (CONFIGMAPS if kind == "ConfigMap" else SECRETS).get((namespace, name))


@pytest.fixture(scope="module")
def files() -> dict[str, bytes]:
    return build_files(POD, "geo", lookup)


@pytest.fixture(scope="module")
def env() -> dict[str, str]:
    return build_env(POD, "geo", lookup, SERVICES)


@pytest.fixture
def ctx(files, env) -> ExecContext:
    processes = [(1, "root", "geo --port 8083"), (12, "root", "/bin/sh -c sleep infinity")]
    return ExecContext(POD, "geo", env, files, processes, NOW, programs=default_registry())


def sh(ctx: ExecContext, script: str, shell: str = "sh") -> ExecResult:
    return run([shell, "-c", script], ctx)


def out(ctx: ExecContext, script: str, shell: str = "sh") -> str:
    result = sh(ctx, script, shell)
    assert result.exit_code == 0, result
    return result.stdout.decode()


# --- kubelet: files -------------------------------------------------------------------------------------------------
def test_config_map_secret_and_sub_path_mounts(files):
    assert files["/etc/config/x"] == b"alpha\nbeta\ngamma\n"
    assert files["/etc/config/mode"] == b"fast"
    assert files["/etc/secret/pw"] == b"s3cret" and "/etc/secret/user" not in files
    assert files["/app/app.yaml"] == b"port: 8080\n"
    assert files["/data/"] == b""


def test_projected_and_downward_api_volumes(files):
    assert files["/etc/proj/cfg/mode"] == b"fast"
    assert files["/etc/proj/user"] == b"admin"
    assert files["/etc/proj/ns"] == b"shop"
    assert files["/etc/proj/token"].count(b".") == 2
    assert files["/etc/podinfo/labels"] == b'app="geo"\ntier="db"'


def test_standard_and_service_account_files(files):
    sa = "/var/run/secrets/kubernetes.io/serviceaccount"
    assert files[f"{sa}/namespace"] == b"shop"
    assert files[f"{sa}/ca.crt"].startswith(b"-----BEGIN CERTIFICATE-----\nTWIN")
    claims = files[f"{sa}/token"].split(b".")[1]
    assert b"system:serviceaccount:shop:geo-sa" in base64.urlsafe_b64decode(claims + b"=" * (-len(claims) % 4))
    assert files["/etc/hostname"] == b"geo-7d9f\n"
    assert b"10.244.1.5\tgeo-7d9f\n" in files["/etc/hosts"] and b"127.0.0.1\tlocalhost" in files["/etc/hosts"]
    assert files["/etc/resolv.conf"] == (b"search shop.svc.cluster.local svc.cluster.local cluster.local\n"
                                         b"nameserver 10.96.0.10\noptions ndots:5\n")
    assert b"Debian" in files["/etc/os-release"]
    assert files["/proc/1/cmdline"] == b"geo\0--port\x008083\0"


def test_build_is_deterministic():
    assert build_files(POD, "geo", lookup) == build_files(POD, "geo", lookup)


# --- kubelet: env ---------------------------------------------------------------------------------------------------
def test_env_values_expansion_and_refs(env):
    assert env["DB_URL"] == "mongodb://mongodb-geo:27017"
    assert env["ESCAPED"] == "$(DB_HOST)" and env["MISSING"] == "$(NOPE)"
    assert (env["POD_NAME"], env["POD_IP"], env["APP"], env["NODE"]) == ("geo-7d9f", "10.244.1.5", "geo", "worker-1")
    assert (env["CPU"], env["MEM_MI"]) == ("1", "256")
    assert (env["PASSWORD"], env["MODE"]) == ("s3cret", "fast")
    assert (env["CFG_mode"], env["user"], env["password"]) == ("fast", "admin", "s3cret")
    assert "CFG_app.yaml" in env  # dots are valid in env names since Kubernetes 1.8
    assert (env["HOSTNAME"], env["HOME"]) == ("geo-7d9f", "/root") and "/usr/bin" in env["PATH"]


def test_service_link_variables(env):
    assert env["MONGODB_GEO_SERVICE_HOST"] == "10.96.12.7"
    assert env["MONGODB_GEO_SERVICE_PORT"] == "27017"
    assert env["MONGODB_GEO_SERVICE_PORT_MONGODB_GEO"] == "27017"
    assert env["MONGODB_GEO_PORT"] == "tcp://10.96.12.7:27017"
    assert env["MONGODB_GEO_PORT_27017_TCP"] == "tcp://10.96.12.7:27017"
    assert env["MONGODB_GEO_PORT_27017_TCP_PROTO"] == "tcp"
    assert env["MONGODB_GEO_PORT_27017_TCP_PORT"] == "27017"
    assert env["MONGODB_GEO_PORT_27017_TCP_ADDR"] == "10.96.12.7"
    assert env["KUBERNETES_SERVICE_HOST"] == "10.96.0.1" and env["KUBERNETES_SERVICE_PORT_HTTPS"] == "443"
    assert not any(k.startswith(("HEADLESS_", "ELSEWHERE_")) for k in env)


def test_service_links_can_be_disabled():
    pod = {**POD, "spec": {**POD["spec"], "enableServiceLinks": False}}
    env = build_env(pod, "geo", lookup, SERVICES)
    assert "MONGODB_GEO_SERVICE_HOST" not in env and env["KUBERNETES_SERVICE_HOST"] == "10.96.0.1"


# --- exec entry point -----------------------------------------------------------------------------------------------
def test_unknown_program_fails_like_the_container_runtime(ctx):
    result = run(["nosuch", "x"], ctx)
    assert result.exit_code == 126
    assert result.stderr == (b"OCI runtime exec failed: exec failed: unable to start container process: "
                             b'exec: "nosuch": executable file not found in $PATH: unknown\n')


def test_binaries_limit_what_the_image_has(ctx):
    distroless = ctx.with_(binaries=frozenset({"cat"}))
    assert run(["sh", "-c", "echo hi"], distroless).exit_code == 126
    assert run(["cat", "/etc/config/mode"], distroless).stdout == b"fast"


def test_writes_do_not_outlive_the_exec(ctx):
    assert out(ctx, "echo x > /data/f; cat /data/f") == "x\n"
    assert run(["cat", "/data/f"], ctx).exit_code == 1
    assert "/data/f" not in ctx.files


def test_direct_exec_of_a_script_uses_its_shebang(ctx):
    result = run(["/scripts/s.sh"], ctx)
    assert result.stdout == b"hello world\nafter 127\n" and result.exit_code == 5


# --- shell ----------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("script, expected", [
    ("echo hi | grep h", "hi\n"),
    ("cat /etc/config/x | wc -l", "3\n"),
    ("env | grep ^DB_HOST=", "DB_HOST=mongodb-geo\n"),
    ("ls /scripts", "args.sh\ns.sh\nstrict.sh\n"),
    ("true && echo a || echo b", "a\n"),
    ("false && echo a || echo c", "c\n"),
    ("echo \"pod $(hostname) has $(cat /etc/config/x | wc -l) lines\"", "pod geo-7d9f has 3 lines\n"),
    ("X=1; export Y=2; echo $X ${Y} ${Z:-dflt} ${#DB_HOST}", "1 2 dflt 11\n"),
    ("A=inline env | grep ^A=; echo \"[$A]\"", "A=inline\n[]\n"),
    ("echo 'single $X' \"double\\\" $HOME\" back\\ slash", "single $X double\" /root back slash\n"),
    ("nosuch 2>/dev/null; echo $?", "127\n"),
    ("nosuch 2>&1 | grep -c 'not found'", "1\n"),
    ("echo out; echo err >&2", "out\n"),
    ("cat < /etc/config/mode; echo", "fast\n"),
    ("for i in 1 2 3; do echo $i; done | tail -1", "3\n"),
    ("i=0; while [ $i -lt 3 ]; do i=$((i + 1)); done; echo $i", "3\n"),
    ("if [ -f /etc/config/x ]; then echo yes; else echo no; fi", "yes\n"),
    ("if [ -d /nope ]; then echo yes; elif [ -z \"\" ]; then echo empty; fi", "empty\n"),
    ("[ \"$MODE\" = fast ] && [ 3 -eq 3 ] && [ -n x ] && test a != b && echo ok", "ok\n"),
    ("cd /etc/config && pwd && ls | head -n 1", "/etc/config\napp.yaml\n"),
    ("case $MODE in slow) echo s ;; f*) echo f ;; esac", "f\n"),
    ("f() { echo \"in f: $1\"; return 3; }; f arg; echo $?", "in f: arg\n3\n"),
    ("while read -r line; do echo \"> $line\"; done < /etc/config/x", "> alpha\n> beta\n> gamma\n"),
    ("cat <<EOF\nmode=$MODE\nEOF", "mode=fast\n"),
    ("echo /etc/config/*", "/etc/config/app.yaml /etc/config/mode /etc/config/x\n"),
    ("set -- a 'b c'; echo $#; for x in \"$@\"; do echo \"[$x]\"; done", "2\n[a]\n[b c]\n"),
    ("v='a  b'; echo $v; echo \"$v\"", "a b\na  b\n"),
    ("echo `echo back` $((6 * 7)) ${DB_URL#mongodb://} ${PATH%%:*}", "back 42 mongodb-geo:27017 /usr/local/sbin\n"),
    ("(cd /etc; X=sub); pwd; echo \"[$X]\"", "/\n[]\n"),
    ("! false && echo negated", "negated\n"),
    ("echo a; # comment\necho b", "a\nb\n"),
    ("cd /etc/config && echo * && echo ../con*", "app.yaml mode x\n../config\n"),
    ("ls / | grep -c -x -e etc -e scripts -e data -e tmp", "4\n"),
    ("for f in /scripts/*.sh; do [ -x \"$f\" ] && echo \"${f##*/}\"; done; true", "s.sh\n"),
])
def test_shell_scripts(ctx, script, expected):
    assert out(ctx, script) == expected


@pytest.mark.parametrize("script, expected", [
    ("echo ${PATH//:/ } | wc -w; v=hello.txt; echo ${v/.txt/.md} ${v:1:3}", "6\nhello.md ell\n"),
    ("set -eo pipefail; false | true; echo unreached", ""),
    ("[[ $HOSTNAME == geo-* && -n x ]] 2>/dev/null || [[ $HOSTNAME =~ ^geo ]] && echo matched", "matched\n"),
    ("source /scripts/args.sh one", "1 args: one \n<one>\n"),
])
def test_bash_only_syntax(ctx, script, expected):
    assert sh(ctx, script, shell="bash").stdout.decode() == expected


def test_dash_rejects_bash_syntax(ctx):
    assert sh(ctx, "echo ${PATH//:/ }").stderr == b"sh: 1: ${PATH//:/ }: Bad substitution\n"
    assert sh(ctx, "source /scripts/args.sh").stderr == b"sh: 1: source: not found\n"


def test_xtrace_and_recursion_guard(ctx):
    assert sh(ctx, "set -x; echo 'a b'", shell="bash").stderr == b"+ echo 'a b'\n"
    assert sh(ctx, "x='eval \"$x\"'; eval \"$x\"").exit_code == 2
    assert b"nesting" in sh(ctx, "f() { f; }; f").stderr


def test_exit_status_and_set_e(ctx):
    assert sh(ctx, "exit 3").exit_code == 3
    assert sh(ctx, "false").exit_code == 1
    result = sh(ctx, "set -e; echo one; false; echo two")
    assert (result.stdout, result.exit_code) == (b"one\n", 1)
    assert out(ctx, "set -e; false || true; if false; then :; fi; echo survived") == "survived\n"


def test_unknown_command_in_sh_and_bash(ctx):
    result = sh(ctx, "nosuch; echo still here")
    assert (result.stdout, result.stderr, result.exit_code) == (b"still here\n", b"sh: 1: nosuch: not found\n", 0)
    result = sh(ctx, "nosuch", shell="bash")
    assert (result.stderr, result.exit_code) == (b"bash: line 1: nosuch: command not found\n", 127)
    assert sh(ctx, "echo\n\nnosuch").stderr == b"sh: 3: nosuch: not found\n"


def test_script_file_with_variables_and_an_unknown_command(ctx):
    result = run(["bash", "/scripts/s.sh"], ctx)
    assert result.stdout == b"hello world\nafter 127\n"
    assert result.stderr == b"/scripts/s.sh: line 5: nosuch: command not found\n"
    assert result.exit_code == 5
    assert run(["sh", "/scripts/args.sh", "x", "y z"], ctx).stdout == b"2 args: x y z\n<x>\n<y z>\n"
    strict = run(["sh", "/scripts/strict.sh"], ctx)
    assert (strict.stdout, strict.exit_code) == (b"one\n", 1)
    assert run(["sh", "/nope.sh"], ctx).stderr == b"sh: 0: cannot open /nope.sh: No such file\n"


def test_script_from_stdin(ctx):
    assert run(["sh"], ctx.with_(stdin=b"echo from stdin\n")).stdout == b"from stdin\n"


def test_redirections_to_files(ctx):
    assert out(ctx, "echo a > /tmp/f; echo b >> /tmp/f; cat /tmp/f; wc -l < /tmp/f") == "a\nb\n2\n"
    assert out(ctx, "nosuch > /tmp/o 2>&1; cat /tmp/o") == "sh: 1: nosuch: not found\n"
    assert out(ctx, "{ echo x; echo y; } > /tmp/g; cat /tmp/g") == "x\ny\n"
    assert sh(ctx, "echo a > /nope/f").stderr == b"sh: 1: cannot create /nope/f: Directory nonexistent\n"
    assert sh(ctx, "echo a > /etc/config/x").stderr == b"sh: 1: cannot create /etc/config/x: Read-only file system\n"
    assert sh(ctx, "cat < /nope").stderr == b"sh: 1: cannot open /nope: No such file\n"


def test_syntax_errors(ctx):
    result = sh(ctx, "if true; then echo")
    assert (result.stderr, result.exit_code) == (b'sh: 1: Syntax error: end of file unexpected (expecting "fi")\n', 2)
    assert sh(ctx, "fi").stderr == b'sh: 1: Syntax error: "fi" unexpected\n'
    assert sh(ctx, "echo 'open").stderr == b"sh: 1: Syntax error: Unterminated quoted string\n"
    assert sh(ctx, "done", shell="bash").stderr == b"bash: -c: line 1: syntax error near unexpected token `done'\n"


def test_endless_loop_is_stopped(ctx):
    result = sh(ctx, "while true; do sleep 1; done")
    assert result.exit_code == 124 and b"stopped after" in result.stderr


# --- utilities ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("script, expected", [
    ("printf a; /bin/echo -n b; /bin/echo -e '\\tc'", "ab\tc\n"),
    ("printf '%s=%d\\n' a 1 b 2", "a=1\nb=2\n"),
    ("head -n 2 /etc/config/x", "alpha\nbeta\n"),
    ("head -2 /etc/config/x | tail -1", "beta\n"),
    ("tail -1 /etc/config/x", "gamma\n"),
    ("tail -n +2 /etc/config/x", "beta\ngamma\n"),
    ("head -c 3 /etc/config/x; echo", "alp\n"),
    ("grep -c a /etc/config/x", "3\n"),
    ("grep -n -i BETA /etc/config/x", "2:beta\n"),
    ("grep -v a /etc/config/x; echo $?", "1\n"),
    ("grep -E 'al|ga' /etc/config/x", "alpha\ngamma\n"),
    ("grep 'a\\(l\\|m\\)' /etc/config/x", "alpha\ngamma\n"),
    ("grep -o 'm\\+a' /etc/config/x", "mma\n"),
    ("grep -w -F beta /etc/config/x", "beta\n"),
    ("grep -q gamma /etc/config/x && echo found", "found\n"),
    ("grep -l fast -r /etc/config", "/etc/config/mode\n"),
    ("grep -A1 beta /etc/config/x", "beta\ngamma\n"),
    ("grep fast -r /etc/proj /etc/config | head -1", "/etc/proj/cfg/mode:fast\n"),
    ("wc -l /etc/config/x", "3 /etc/config/x\n"),
    ("echo one two | wc -w", "2\n"),
    ("printf 'b 2\\na 10\\nc 1\\n' | sort", "a 10\nb 2\nc 1\n"),
    ("printf 'b 2\\na 10\\nc 1\\n' | sort -n -k2", "c 1\nb 2\na 10\n"),
    ("printf 'b 2\\na 10\\nc 1\\n' | sort -k2 -nr | head -1", "a 10\n"),
    ("printf 'x\\nx\\ny\\n' | uniq -c", "      2 x\n      1 y\n"),
    ("printf 'x\\ny\\nx\\n' | sort -u", "x\ny\n"),
    ("echo a:b:c | cut -d: -f2", "b\n"),
    ("echo a:b:c | cut -d: -f1,3", "a:c\n"),
    ("echo hello | tr a-z A-Z", "HELLO\n"),
    ("echo hello | tr -d l", "heo\n"),
    ("echo 'a b c' | sed 's/b/B/g'", "a B c\n"),
    ("sed -n '2p' /etc/config/x", "beta\n"),
    ("sed '1d; s/\\(g\\)a/\\1A/' /etc/config/x", "beta\ngAmma\n"),
    ("echo 'a b c' | awk '{print $2}'", "b\n"),
    ("echo 'a:b:c' | awk -F: '{print $3, $1}'", "c a\n"),
    ("printf '1\\n2\\n3\\n' | awk '{s += $1} END {print s}'", "6\n"),
    ("awk 'NR==2' /etc/config/x", "beta\n"),
    ("awk '/mm/ {print NR\": \"$0}' /etc/config/x", "3: gamma\n"),
    ("echo a b c | awk '{print $NF, NF}'", "c 3\n"),
    ("hostname; hostname -i", "geo-7d9f\n10.244.1.5\n"),
    ("whoami; id", "root\nuid=0(root) gid=0(root) groups=0(root)\n"),
    ("date", "Mon Jun  2 09:00:00 UTC 2025\n"),
    ("date +%s; date -u +%Y-%m-%dT%H:%M:%SZ", "1748854800\n2025-06-02T09:00:00Z\n"),
    ("date -d @0 +%Y", "1970\n"),
    ("sleep 5 && echo woke", "woke\n"),
    ("uname; uname -r", "Linux\n6.1.0-28-amd64\n"),
    ("which ls sh", "/usr/bin/ls\n/usr/bin/sh\n"),
    ("command -v grep; type cd", "/usr/bin/grep\ncd is a shell builtin\n"),
    ("nproc", "4\n"),
    ("mkdir -p /tmp/a/b && touch /tmp/a/b/f && ls -R /tmp/a", "/tmp/a:\nb\n\n/tmp/a/b:\nf\n"),
    ("touch /tmp/f; rm /tmp/f; ls /tmp", ""),
    ("cp /etc/config/x /tmp/y && mv /tmp/y /tmp/z && cat /tmp/z | head -1", "alpha\n"),
    ("echo hi | tee /tmp/t; cat /tmp/t", "hi\nhi\n"),
    ("echo -n s3cret | base64; echo czNjcmV0 | base64 -d", "czNjcmV0\ns3cret"),
    ("echo -n abc | md5sum", "900150983cd24fb0d6963f7d28e17f72  -\n"),
    ("seq 3 | xargs echo n:", "n: 1 2 3\n"),
    ("seq 2 4 | paste 2>/dev/null; seq -s, 3", "1,2,3\n"),
    ("basename /a/b.txt .txt; dirname /a/b.txt", "b\n/a\n"),
    ("find /etc/config -name 'm*'", "/etc/config/mode\n"),
    ("find /etc/proj -type d", "/etc/proj\n/etc/proj/cfg\n"),
    ("printenv DB_HOST", "mongodb-geo\n"),
    ("cat -n /etc/config/mode", "     1\tfast\n"),
    ("ls -l /etc/config | head -2", "total 12\n-rw-r--r-- 1 root root 11 Jun  2 09:00 app.yaml\n"),
    ("ls -a /data", ".\n..\n"),
    ("ls -d /etc/config /etc/hostname", "/etc/config\n/etc/hostname\n"),
    ("env -i A=1 env", "A=1\n"),
    ("timeout 5 echo quick", "quick\n"),
    ("echo a > /tmp/f && sed -i 's/a/b/' /tmp/f && cat /tmp/f", "b\n"),
    ("awk '{printf \"%s=%d\\n\", $1, NR}' /etc/config/x | tail -1", "gamma=3\n"),
    ("awk 'NR > 1 { if ($0 ~ /ga/) print \"G\"; else print \"-\" }' /etc/config/x", "-\nG\n"),
    ("cat /proc/1/cmdline | tr '\\0' ' '", "geo --port 8083 "),
])
def test_utilities(ctx, script, expected):
    assert out(ctx, script) == expected


def test_ps_lists_the_container_processes_and_itself(ctx):
    lines = out(ctx, "ps aux").splitlines()
    assert lines[0].split() == ["USER", "PID", "%CPU", "%MEM", "VSZ", "RSS", "TTY", "STAT", "START", "TIME", "COMMAND"]
    assert lines[1].startswith("root           1 ") and lines[1].endswith("08:00   0:00 geo --port 8083")
    assert lines[-1].endswith("ps aux") and lines[-1].split()[1] == "13"
    ef = out(ctx, "ps -ef").splitlines()
    assert ef[0] == "UID          PID    PPID  C STIME TTY          TIME CMD"
    assert ef[1] == "root           1       0  0 08:00 ?        00:00:00 geo --port 8083"
    assert out(ctx, "ps").splitlines()[1] == "      1 ?        00:00:00 geo"


@pytest.mark.parametrize("argv, stderr, code", [
    (["cat", "/nope"], b"cat: /nope: No such file or directory\n", 1),
    (["cat", "/etc"], b"cat: /etc: Is a directory\n", 1),
    (["ls", "/nope"], b"ls: cannot access '/nope': No such file or directory\n", 2),
    (["grep", "x", "/nope"], b"grep: /nope: No such file or directory\n", 2),
    (["head", "/nope"], b"head: cannot open '/nope' for reading: No such file or directory\n", 1),
    (["ls", "-z"], b"ls: invalid option -- 'z'\nTry 'ls --help' for more information.\n", 2),
    (["rm", "/etc/config/x"], b"rm: cannot remove '/etc/config/x': Read-only file system\n", 1),
    (["mkdir", "/etc"], b"mkdir: cannot create directory '/etc': File exists\n", 1),
    (["printenv", "NOPE"], b"", 1),
    (["test", "-f", "/nope"], b"", 1),
    (["[", "1", "-eq", "x", "]"], b"[: invalid integer 'x'\n", 2),
    (["env", "nosuch"], b"env: 'nosuch': No such file or directory\n", 127),
    (["base64", "-d"], b"", 0),
])
def test_utility_errors(ctx, argv, stderr, code):
    result = run(argv, ctx)
    assert (result.stderr, result.exit_code) == (stderr, code)


def test_shell_flavoured_test_errors(ctx):
    assert sh(ctx, "[ a -eq 1 ]").stderr == b"sh: 1: [: Illegal number: a\n"
    assert sh(ctx, "[ a -eq 1 ]", shell="bash").stderr == b"bash: line 1: [: a: integer expression expected\n"
    assert sh(ctx, "[ -f x").stderr == b"sh: 1: [: missing ]\n"


def test_dash_echo_expands_escapes_but_bash_echo_does_not(ctx):
    assert out(ctx, "echo 'a\\nb'") == "a\nb\n"
    assert out(ctx, "echo 'a\\nb'", shell="bash") == "a\\nb\n"


# --- registry -------------------------------------------------------------------------------------------------------
def fake_mongo(argv: list[str], ctx: ExecContext) -> ExecResult:
    """Echo argv and one env var, as the twin's programs will use both."""
    return ExecResult(f"mongo got {argv[1:]} host={ctx.env.get('DB_HOST')}\n".encode(), b"", 0)


def test_registered_program_runs_directly_by_path_and_from_scripts(ctx):
    programs = default_registry()
    programs.register("mongo", fake_mongo)
    mctx = ctx.with_(programs=programs)
    result = run(["mongo", "--eval", "db.stats()"], mctx)
    assert result.stdout == b"mongo got ['--eval', 'db.stats()'] host=mongodb-geo\n"
    assert run(["/usr/bin/mongo"], mctx).stdout == b"mongo got [] host=mongodb-geo\n"
    script = "for db in geo rate; do mongo \"$db\" --quiet | grep -c got; done; which mongo"
    assert out(mctx, script) == "1\n1\n/usr/bin/mongo\n"
    assert run(["mongo"], ctx).exit_code == 126  # the default registry stays untouched


def test_registry_lookup_by_basename():
    reg = Registry()
    reg.register("redis-cli", fake_mongo)
    assert reg.lookup("/usr/local/bin/redis-cli") is fake_mongo and reg.lookup("redis") is None


def test_every_command_is_deterministic(ctx):
    script = "ps aux; date; ls -lR /etc; env | sort; cat /var/run/secrets/kubernetes.io/serviceaccount/token"
    assert sh(ctx, script) == sh(ctx, script)
