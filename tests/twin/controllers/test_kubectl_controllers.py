"""Controller behaviour as kubectl shows it: scheduling, image pulls, crash loops, jobs, endpoints, rollouts."""

import json
import re

import yaml

from aoi.apps.catalog import load_app

NS = "test-hotel-reservation"
UNSCHEDULABLE = ("0/2 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 1 node(s) had "
                 "untolerated taint {node-role.kubernetes.io/control-plane: }. preemption: 0/2 nodes are available: "
                 "2 Preemption is not helpful for scheduling.")


def status(served, pod: str) -> list[str]:
    """Return the READY, STATUS and RESTARTS cells of a pod."""
    cells = re.split(r"\s{2,}", served.ok(f"get pod {pod} -n {NS}").splitlines()[1].strip())
    return cells[1:4]


def watched(served, pod: str, seconds: int) -> list[str]:
    """Return the STATUS column of every row `kubectl get pod -w` prints within `seconds`."""
    out = served.ok(f"get pod {pod} -n {NS} -w --request-timeout={seconds}s")
    return [re.split(r"\s{2,}", line.strip())[2] for line in out.splitlines()[1:]]


def test_node_selector_matching_no_node_stays_pending(hotel):
    hotel.ok(["run", "nowhere", "-n", NS, "--image=nginx", "--overrides",
              '{"spec":{"nodeSelector":{"disktype":"ssd"}}}'])
    hotel.twin.advance(30)
    assert status(hotel, "nowhere") == ["0/1", "Pending", "0"]
    out = hotel.ok(f"get events -n {NS} --field-selector involvedObject.name=nowhere,reason=FailedScheduling")
    assert re.split(r"\s{2,}", out.splitlines()[1].strip())[1:] == ["Warning", "FailedScheduling", "pod/nowhere",
                                                                    UNSCHEDULABLE]
    condition = hotel.ok(["get", "pod", "nowhere", "-n", NS, "-o",
                          'jsonpath={.status.conditions[?(@.type=="PodScheduled")].reason}'])
    assert condition == "Unschedulable"


def test_unknown_image_goes_from_err_image_pull_to_back_off(hotel):
    hotel.ok(f"run badimg -n {NS} --image=nosuch/image:v9")
    statuses = watched(hotel, "badimg", 20)
    assert "ErrImagePull" in statuses and "ImagePullBackOff" in statuses
    assert statuses.index("ErrImagePull") < statuses.index("ImagePullBackOff")
    assert status(hotel, "badimg")[0] == "0/1"
    messages = hotel.ok(["get", "events", "-n", NS, "--field-selector", "involvedObject.name=badimg",
                         "-o", "jsonpath={range .items[*]}{.message}{'\\n'}{end}"])
    assert 'Failed to pull image "nosuch/image:v9": rpc error: code = NotFound' in messages
    assert "Error: ImagePullBackOff" in messages


def test_crashing_container_backs_off_with_growing_restarts(hotel):
    hotel.ok(["run", "crash", "-n", NS, "--image=busybox", "--", "sh", "-c", "echo boom; exit 1"])
    hotel.twin.advance(20)
    ready, state, restarts = status(hotel, "crash")
    assert (ready, state) == ("0/1", "CrashLoopBackOff")
    first = int(restarts.split()[0])
    hotel.twin.advance(120)
    later = int(status(hotel, "crash")[2].split()[0])
    assert first >= 1 and later > first
    pod = json.loads(hotel.ok(f"get pod crash -n {NS} -o json"))["status"]["containerStatuses"][0]
    assert pod["lastState"]["terminated"]["exitCode"] == 1 and pod["lastState"]["terminated"]["reason"] == "Error"
    assert re.fullmatch(r"back-off (40|80|160)s restarting failed container=crash pod=crash_.+",
                        pod["state"]["waiting"]["message"])


def test_finite_command_completes_after_its_sleep(hotel):
    hotel.ok(["run", "nap", "-n", NS, "--image=busybox", "--restart=Never", "--", "sh", "-c", "sleep 20; echo up"])
    hotel.twin.advance(10)
    assert status(hotel, "nap")[:2] == ["1/1", "Running"]
    hotel.twin.advance(15)
    assert status(hotel, "nap")[:2] == ["0/1", "Completed"]
    assert hotel.ok(f"logs nap -n {NS}") == "up\n"


def test_sleep_infinity_keeps_running(hotel):
    hotel.ok(["run", "idle", "-n", NS, "--image=busybox", "--", "sleep", "infinity"])
    hotel.twin.advance(600)
    assert status(hotel, "idle") == ["1/1", "Running", "0"]


def test_job_runs_to_completion(hotel):
    assert hotel.ok(["create", "job", "hello", "-n", NS, "--image=busybox", "--", "sh", "-c", "echo hi"]) == \
        "job.batch/hello created\n"
    hotel.twin.advance(15)
    row = hotel.ok(f"get job hello -n {NS}").splitlines()[1].split()
    assert row[:3] == ["hello", "Complete", "1/1"]
    assert hotel.ok(f"logs job/hello -n {NS}") == "hi\n"


def test_endpoints_follow_selectors_and_named_target_ports(hotel):
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": NS},
               "spec": {"selector": {"tier": "web"}, "ports": [{"port": 80, "targetPort": "http"}]}}
    hotel.ok("apply -f -", stdin=yaml.safe_dump(service).encode())
    assert hotel.ok(f"get ep web -n {NS}").splitlines()[1].split()[1] == "<none>"
    hotel.ok(f"create deployment web -n {NS} --image=nginx:1.25 --port=8080")
    hotel.ok(["patch", "deploy", "web", "-n", NS, "-p", json.dumps({"spec": {"template": {
        "metadata": {"labels": {"tier": "web"}},
        "spec": {"containers": [{"name": "nginx", "ports": [{"containerPort": 8080, "name": "http"}]}]}}}})])
    hotel.ok(f"rollout status deploy/web -n {NS}")
    assert re.fullmatch(r"10\.244\.1\.\d+:8080", hotel.ok(f"get ep web -n {NS}").splitlines()[1].split()[1])
    hotel.ok(["patch", "svc", "web", "-n", NS, "--type", "json", "-p",
              '[{"op":"replace","path":"/spec/ports/0/targetPort","value":"nosuchport"}]'])
    assert hotel.ok(f"get ep web -n {NS}").splitlines()[1].split()[1] == "<none>"
    hotel.ok(["patch", "svc", "web", "-n", NS, "--type", "json", "-p",
              '[{"op":"replace","path":"/spec/ports/0/targetPort","value":9999}]'])
    assert hotel.ok(f"get ep web -n {NS}").splitlines()[1].split()[1].endswith(":9999")
    slices = hotel.ok(f"get endpointslices -n {NS} -l kubernetes.io/service-name=web -o json")
    assert json.loads(slices)["items"][0]["ports"] == [{"name": "", "port": 9999, "protocol": "TCP"}]


def test_rollout_status_never_succeeds_with_a_bad_image(hotel):
    hotel.ok(f"set image deploy/frontend -n {NS} hotel-reserv-frontend=nosuch/image:v9")
    done = hotel.kubectl(f"rollout status deploy/frontend -n {NS}")
    assert done.timed_out and "successfully rolled out" not in done.stdout
    assert "1 old replicas are pending termination..." in done.stdout
    hotel.twin.advance(700)
    late = hotel.kubectl(f"rollout status deploy/frontend -n {NS}")
    assert late.returncode == 1 and late.stderr.strip() == 'error: deployment "frontend" exceeded its progress deadline'
    row = hotel.ok(f"get deploy frontend -n {NS}").splitlines()[1].split()
    assert row[1:4] == ["1/1", "1", "1"]


def test_drain_evicts_and_the_pods_wait_for_a_node(hotel):
    hotel.ok("cordon kind-worker")
    assert hotel.ok("get nodes").splitlines()[2].split()[:2] == ["kind-worker", "Ready,SchedulingDisabled"]
    done = hotel.kubectl("drain kind-worker --ignore-daemonsets --delete-emptydir-data --timeout=60s")
    assert done.returncode == 0 and done.stdout.splitlines()[-1] == "node/kind-worker drained"
    assert f"evicting pod {NS}/frontend-" in done.stdout
    pending = [line.split()[2] for line in hotel.ok(f"get pods -n {NS}").splitlines()[1:]]
    assert set(pending) == {"Pending"}
    events = hotel.ok(f"get events -n {NS} --field-selector reason=FailedScheduling -o wide")
    assert "1 node(s) were unschedulable" in events
    hotel.ok("uncordon kind-worker")  # the scheduler retries at once: a node update can make pods schedulable
    hotel.twin.advance(60)
    assert {line.split()[2] for line in hotel.ok(f"get pods -n {NS}").splitlines()[1:]} == {"Running"}


def test_recreated_namespace_leaves_retained_volumes_released(hotel, tmp_path):
    assert hotel.ok(f"delete namespace {NS}") == f'namespace "{NS}" deleted\n'
    assert hotel.kubectl(f"get ns {NS}").stderr.strip() == f'Error from server (NotFound): namespaces "{NS}" not found'
    manifest = tmp_path / "hotel.yaml"
    manifest.write_text(yaml.safe_dump_all(load_app("hotel-reservation").documents))
    assert hotel.kubectl(["apply", "-f", str(manifest)]).returncode == 0
    hotel.twin.advance(30)
    volumes = {r[0]: r for r in (line.split() for line in hotel.ok("get pv").splitlines()[1:])}
    assert volumes["geo-pv"][4:6] == ["Released", f"{NS}/geo-pvc"]
    claims = [line.split()[:2] for line in hotel.ok(f"get pvc -n {NS}").splitlines()[1:]]
    assert claims and all(status == "Pending" for _, status in claims)
    mongo = hotel.ok(f"get pods -n {NS} -l io.kompose.service=mongodb-geo").splitlines()[1].split()
    assert mongo[2] == "Pending"
