"""`kubectl exec` against the twin: simulated programs over WebSocket v5, with real exit codes and errors."""

import pytest
import yaml

NS = "test-hotel-reservation"
SECRET_APP = [
    {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "creds", "namespace": NS},
     "stringData": {"password": "hunter2"}},
    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "vault", "namespace": NS},
     "spec": {"containers": [{"name": "app", "image": "busybox", "command": ["sleep", "infinity"],
                              "env": [{"name": "PASSWORD", "valueFrom": {"secretKeyRef": {"name": "creds",
                                                                                          "key": "password"}}}],
                              "volumeMounts": [{"name": "creds", "mountPath": "/etc/creds", "readOnly": True}]}],
              "volumes": [{"name": "creds", "secret": {"secretName": "creds"}}]}},
]


def run(served, *argv: str, target: str = "deploy/frontend", stdin: bytes | None = None, flags=()):
    """Run `kubectl exec [flags] TARGET -- argv` in the hotel namespace."""
    return served.kubectl(["exec", *flags, "-n", NS, target, "--", *argv], stdin=stdin)


def test_shell_with_pipes(cluster):
    done = run(cluster, "sh", "-c", "echo hello world | wc -w; echo a-b | tr - +")
    assert (done.returncode, done.stdout, done.stderr) == (0, "2\na+b\n", "")


def test_cat_of_a_mounted_config_map(cluster):
    data = cluster.twin.get("configmaps", NS, "mongo-geo-script")["data"]
    listed = run(cluster, "ls", "/docker-entrypoint-initdb.d", target="deploy/mongodb-geo").stdout.split()
    assert listed == sorted(data)
    name = listed[0]
    out = run(cluster, "cat", f"/docker-entrypoint-initdb.d/{name}", target="deploy/mongodb-geo").stdout
    assert out == data[name]


def test_secret_file_and_environment(hotel):
    hotel.ok("apply -f -", stdin=yaml.safe_dump_all(SECRET_APP).encode())
    hotel.twin.advance(10)
    assert run(hotel, "cat", "/etc/creds/password", target="vault").stdout == "hunter2"
    assert run(hotel, "sh", "-c", "echo $PASSWORD", target="vault").stdout == "hunter2\n"
    done = run(hotel, "sh", "-c", "echo x > /etc/creds/password", target="vault")
    assert done.returncode != 0 and "Read-only file system" in done.stderr


def test_env(cluster):
    env = dict(line.split("=", 1) for line in run(cluster, "env").stdout.splitlines())
    pod = cluster.ok(f"get pods -n {NS} -l io.kompose.service=frontend -o name").split("/")[1].strip()
    assert env["HOSTNAME"] == pod and env["JAEGER_SAMPLE_RATIO"] == "1"
    assert env["KUBERNETES_SERVICE_HOST"] == "10.96.0.1" and env["FRONTEND_SERVICE_PORT"] == "5000"


def test_ls_and_ps(cluster):
    assert {"bin", "etc", "proc", "tmp", "usr", "var"} <= set(run(cluster, "ls", "/").stdout.split())
    ps = run(cluster, "ps").stdout.splitlines()
    assert ps[0].split() == ["PID", "TTY", "TIME", "CMD"] and ps[1].split()[::3] == ["1", "frontend"]


@pytest.mark.parametrize("argv, code, stderr", [
    (["sh", "-c", "exit 3"], 3, "command terminated with exit code 3\n"),
    (["false"], 1, "command terminated with exit code 1\n"),
    (["sh", "-c", "nosuch"], 127, "sh: 1: nosuch: not found\ncommand terminated with exit code 127\n"),
    (["nosuch"], 126, 'OCI runtime exec failed: exec failed: unable to start container process: exec: "nosuch": '
                      "executable file not found in $PATH: unknown\ncommand terminated with exit code 126\n"),
])
def test_exit_codes(cluster, argv, code, stderr):
    done = run(cluster, *argv)
    assert (done.returncode, done.stderr) == (code, stderr)


def test_stdin(cluster):
    done = run(cluster, "sh", "-c", "wc -l; echo done", stdin=b"a\nb\nc\n", flags=["-i"])
    assert done.stdout == "3\ndone\n"
    assert run(cluster, "cat", stdin=b"piped\n", flags=["-i"]).stdout == "piped\n"


def test_container_flag(cluster):
    done = cluster.kubectl(["exec", "-n", "astronomy-shop", "deploy/flagd", "-c", "flagd-ui", "--", "hostname"])
    assert done.returncode == 0 and done.stdout.startswith("flagd-")
    bad = cluster.kubectl(["exec", "-n", "astronomy-shop", "deploy/flagd", "-c", "wrong", "--", "ls"])
    assert bad.returncode == 1 and bad.stderr.startswith("Error from server (BadRequest): container wrong is not "
                                                         "valid for pod flagd-")


def test_pod_whose_container_is_not_running(hotel):
    hotel.ok(f"run badimg -n {NS} --image=nosuch/image:v9")
    hotel.twin.advance(10)
    done = run(hotel, "ls", target="badimg")
    assert done.returncode == 1
    assert done.stderr.strip() == 'error: unable to upgrade connection: container not found ("badimg")'


def test_pod_without_a_node(hotel):
    hotel.ok(["run", "nowhere", "-n", NS, "--image=nginx", "--overrides",
              '{"spec":{"nodeSelector":{"disktype":"ssd"}}}'])
    done = run(hotel, "ls", target="nowhere")
    assert done.stderr.strip() == "Error from server (BadRequest): pod nowhere does not have a host assigned"


def test_completed_pod(hotel):
    hotel.ok(["run", "once", "-n", NS, "--image=busybox", "--restart=Never", "--", "sh", "-c", "echo ok"])
    hotel.twin.advance(10)
    assert hotel.ok(f"get pod once -n {NS} -o jsonpath={{.status.phase}}") == "Succeeded"
    done = run(hotel, "ls", target="once")
    assert done.stderr.strip() == "error: cannot exec into a container in a completed pod; current phase is Succeeded"


def test_missing_pod(cluster):
    done = run(cluster, "ls", target="nosuch")
    assert done.stderr.strip() == 'Error from server (NotFound): pods "nosuch" not found'
