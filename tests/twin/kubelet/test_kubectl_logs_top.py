"""`kubectl logs` and `kubectl top` against the twin."""

import re

NS = "test-hotel-reservation"
ZEROLOG = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ (INF|WRN|ERR|DBG|PNC|FTL) \S+ > .+")


def pod_of(served, service: str, ns: str = NS) -> str:
    """Return the name of the first pod of a hotel service."""
    return served.ok(f"get pods -n {ns} -l io.kompose.service={service} -o name").split()[0].split("/")[1]


def test_logs_in_the_apps_format(cluster):
    lines = cluster.ok(f"logs {pod_of(cluster, 'frontend')} -n {NS}").splitlines()
    assert len(lines) > 3 and all(ZEROLOG.fullmatch(line) for line in lines)


def test_tail_keeps_the_last_lines(cluster):
    pod = pod_of(cluster, "frontend")
    everything = cluster.ok(f"logs {pod} -n {NS}").splitlines()
    assert cluster.ok(f"logs {pod} -n {NS} --tail=2").splitlines() == everything[-2:]


def test_container_flag_and_default_container(cluster):
    done = cluster.kubectl("logs deploy/flagd -n astronomy-shop --tail=1")
    assert done.returncode == 0 and done.stdout.strip()
    assert done.stderr.strip() == 'Defaulted container "flagd" out of: flagd, flagd-ui, init-config (init)'
    ui = cluster.ok("logs deploy/flagd -n astronomy-shop -c flagd-ui --tail=1")
    assert ui.startswith('{"level":') and ui != done.stdout
    assert cluster.ok("logs deploy/flagd -n astronomy-shop -c init-config").strip()


def test_unknown_container(cluster):
    pod = pod_of(cluster, "frontend")
    done = cluster.kubectl(f"logs {pod} -n {NS} -c wrong")
    assert done.returncode == 1 and done.stderr.strip() == f"error: container wrong is not valid for pod {pod}"


def test_previous_without_a_restart(cluster):
    pod = pod_of(cluster, "frontend")
    done = cluster.kubectl(f"logs {pod} -n {NS} --previous")
    assert done.returncode == 1
    assert done.stderr.strip() == (f'Error from server (BadRequest): previous terminated container '
                                   f'"hotel-reserv-frontend" in pod "{pod}" not found')


def test_previous_after_a_crash(hotel):
    hotel.ok(["run", "crash", "-n", NS, "--image=busybox", "--", "sh", "-c", "echo starting; echo boom >&2; exit 1"])
    hotel.twin.advance(30)
    assert hotel.ok(f"logs crash -n {NS} --previous").splitlines() == ["starting", "boom"]


def test_deployment_and_selector(hotel):
    hotel.ok(f"scale deploy/frontend -n {NS} --replicas=2")
    hotel.ok(f"rollout status deploy/frontend -n {NS}")
    done = hotel.kubectl(f"logs deploy/frontend -n {NS} --tail=1")
    assert done.returncode == 0 and re.fullmatch(r"Found 2 pods, using pod/frontend-\S+", done.stderr.strip())
    both = hotel.ok(f"logs -l io.kompose.service=frontend -n {NS} --tail=1").splitlines()
    assert len(both) == 2 and all(ZEROLOG.fullmatch(line) for line in both)


def test_missing_pod(cluster):
    done = cluster.kubectl(f"logs nosuch -n {NS}")
    assert done.stderr.strip() == f'error: error from server (NotFound): pods "nosuch" not found in namespace "{NS}"'


def test_waiting_container(hotel):
    hotel.ok(f"run badimg -n {NS} --image=nosuch/image:v9")
    hotel.twin.advance(20)
    done = hotel.kubectl(f"logs badimg -n {NS}")
    assert done.stderr.strip() == ('Error from server (BadRequest): container "badimg" in pod "badimg" is waiting to '
                                   'start: trying and failing to pull image')


def test_top_pods(cluster):
    out = cluster.ok(f"top pods -n {NS}")
    assert out.splitlines()[0].split() == ["NAME", "CPU(cores)", "MEMORY(bytes)"]
    rows = [line.split() for line in out.splitlines()[1:]]
    assert len(rows) >= 13 and all(re.fullmatch(r"\d+m", r[1]) and re.fullmatch(r"\d+Mi", r[2]) for r in rows)


def test_top_pods_all_namespaces_and_containers(cluster):
    assert cluster.ok("top pods -A").splitlines()[0].split()[:2] == ["NAMESPACE", "NAME"]
    out = cluster.ok("top pod -n astronomy-shop -l app.kubernetes.io/name=flagd --containers")
    assert out.splitlines()[0].split() == ["POD", "NAME", "CPU(cores)", "MEMORY(bytes)"]
    assert [line.split()[1] for line in out.splitlines()[1:]] == ["flagd", "flagd-ui"]


def test_top_nodes(cluster):
    out = cluster.ok("top nodes")
    assert out.splitlines()[0].split() == ["NAME", "CPU(cores)", "CPU(%)", "MEMORY(bytes)", "MEMORY(%)"]
    rows = {line.split()[0]: line.split() for line in out.splitlines()[1:]}
    assert set(rows) == {"kind-control-plane", "kind-worker"}
    assert re.fullmatch(r"\d+%", rows["kind-worker"][2]) and rows["kind-worker"][3].endswith("Mi")
