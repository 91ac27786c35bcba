"""`kubectl describe` against the twin: the sections a real cluster prints, with ages on the twin's clock."""

import json
import re

import pytest

from aoi.twin import build_twin
from aoi.twin.testing import Served

NS = "test-hotel-reservation"


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    """A HotelReservation twin only this module reads, so its clock stands exactly 5 minutes after deployment."""
    served = Served(build_twin(["hotel-reservation"], seed=0), tmp_path_factory.mktemp("describe"))
    yield served
    served.close()


def section(out: str, title: str) -> list[str]:
    """Return the lines of a describe section (from its title to the next unindented line)."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(title))
    end = next((i for i in range(start + 1, len(lines)) if lines[i] and not lines[i].startswith(" ")), len(lines))
    return lines[start:end]


def field(out: str, name: str) -> str:
    """Return the value of a top-level `Name:  value` line."""
    return next(re.split(r":\s+", line, maxsplit=1)[1] for line in out.splitlines()
                if line.startswith(name + ":")).strip()


def test_pod_events_show_simulated_ages(fresh):
    out = fresh.ok(f"describe pod frontend -n {NS}")
    events = section(out, "Events:")
    assert events[1].split() == ["Type", "Reason", "Age", "From", "Message"]
    scheduled = next(line for line in events if "Scheduled" in line)
    assert scheduled.split()[:4] == ["Normal", "Scheduled", "5m", "default-scheduler"]
    ages = [re.split(r"\s{2,}", line.strip())[2] for line in events[3:] if line.strip()]
    assert ages[:2] == ["5m", "4m59s"] and all(re.fullmatch(r"4m5\ds|5m", age) for age in ages)


def test_pod_sections(fresh):
    out = fresh.ok(f"describe pod frontend -n {NS}")
    assert field(out, "Status") == "Running" and field(out, "Node") == "kind-worker/172.18.0.3"
    assert re.match(r"ReplicaSet/frontend-\w+", field(out, "Controlled By"))
    assert "    State:          Running" in out and "    Ready:          True" in out
    assert [line.split()[0] for line in section(out, "Conditions:")[2:]] == [
        "PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"]
    assert field(out, "QoS Class") == "Burstable"


def test_event_counts_show_repeats(hotel):
    hotel.ok(f"run badimg -n {NS} --image=nosuch/image:v9")
    hotel.twin.advance(60)
    out = hotel.ok(f"describe pod badimg -n {NS}")
    assert "      Reason:       ImagePullBackOff" in out
    backoff = next(line for line in section(out, "Events:") if "Back-off pulling image" in line)
    assert re.search(r"\s\d+s \(x\d+ over \d+s\)\s", backoff)


def test_deployment_shows_new_and_old_replica_sets(hotel):
    out = hotel.ok(f"describe deploy frontend -n {NS}")
    assert field(out, "Replicas") == "1 desired | 1 updated | 1 total | 1 available | 0 unavailable"
    assert field(out, "OldReplicaSets") == "<none>"
    first = re.fullmatch(r"(frontend-\w+) \(1/1 replicas created\)", field(out, "NewReplicaSet"))[1]
    hotel.ok(f"set image deploy/frontend -n {NS} hotel-reserv-frontend=yinfangchen/hotelreservation:v2")
    hotel.ok(f"rollout status deploy/frontend -n {NS}")
    out = hotel.ok(f"describe deploy frontend -n {NS}")
    assert field(out, "OldReplicaSets") == f"{first} (0/0 replicas created)"
    assert field(out, "NewReplicaSet") != f"{first} (1/1 replicas created)"
    assert "Scaled down replica set " + first in out


def test_replica_set(fresh):
    out = fresh.ok(f"describe rs -n {NS} -l io.kompose.service=frontend")
    assert field(out, "Controlled By") == "Deployment/frontend"
    assert field(out, "Replicas") == "1 current / 1 desired"
    assert field(out, "Pods Status") == "1 Running / 0 Waiting / 0 Succeeded / 0 Failed"
    assert "SuccessfulCreate  5m" in out


def test_service_endpoints_come_from_endpoint_slices(fresh):
    out = fresh.ok(f"describe svc frontend -n {NS}")
    assert field(out, "Type") == "ClusterIP" and field(out, "TargetPort") == "5000/TCP"
    assert re.fullmatch(r"10\.244\.1\.\d+:5000", field(out, "Endpoints"))


def test_service_with_unnamed_port_and_named_target(hotel):
    hotel.ok(f"create deployment web -n {NS} --image=nginx:1.25 --port=80")
    hotel.ok(["patch", "deploy", "web", "-n", NS, "--type", "json", "-p",
              '[{"op":"add","path":"/spec/template/spec/containers/0/ports/0/name","value":"http"}]'])
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": NS},
               "spec": {"selector": {"app": "web"}, "ports": [{"port": 8080, "targetPort": "http"}]}}
    hotel.ok("apply -f -", stdin=json.dumps(service).encode())
    hotel.ok(f"rollout status deploy/web -n {NS}")
    out = hotel.ok(f"describe svc web -n {NS}")
    assert field(out, "TargetPort") == "http/TCP"
    assert re.fullmatch(r"10\.244\.1\.\d+:80", field(out, "Endpoints"))


def test_node_shows_lease_conditions_pods_and_allocation(fresh):
    out = fresh.ok("describe node kind-worker")
    lease = section(out, "Lease:")
    assert lease[1].split() == ["HolderIdentity:", "kind-worker"] and "RenewTime:" in lease[3]
    conditions = [line.split()[:2] for line in section(out, "Conditions:")[3:]]
    assert conditions == [["MemoryPressure", "False"], ["DiskPressure", "False"], ["PIDPressure", "False"],
                          ["Ready", "True"]]
    pods = section(out, "Non-terminated Pods:")
    assert pods[0].split()[-3:] == ["(20", "in", "total)"] or "in total" in pods[0]
    assert all(line.split()[-1] == "5m" for line in pods[3:])
    assert "Allocated resources:" in out and re.search(r"cpu\s+\d+m \(\d+%\)", out)


def test_claim_and_volume_are_bound(fresh):
    pvc = fresh.ok(f"describe pvc geo-pvc -n {NS}")
    assert field(pvc, "Status") == "Bound" and field(pvc, "Volume") == "geo-pv" and field(pvc, "Capacity") == "1Gi"
    assert field(pvc, "Used By").startswith("mongodb-geo-")
    pv = fresh.ok("describe pv geo-pv")
    assert field(pv, "Claim") == f"{NS}/geo-pvc" and field(pv, "Reclaim Policy") == "Retain"


def test_namespace(fresh):
    out = fresh.ok(f"describe ns {NS}")
    assert field(out, "Status") == "Active"
    assert "No resource quota." in out and "No LimitRange resource." in out


def test_missing_pod(fresh):
    done = fresh.kubectl(f"describe pod nosuch -n {NS}")
    assert done.returncode == 1
    assert done.stderr.strip() == 'Error from server (NotFound): pods "nosuch" not found'


def test_kubectl_events_show_simulated_ages(fresh):
    out = fresh.ok(f"events -n {NS} --for deployment/frontend")
    assert out.splitlines()[0].split() == ["LAST", "SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    assert out.splitlines()[1].split()[:4] == ["5m", "Normal", "ScalingReplicaSet", "Deployment/frontend"]
