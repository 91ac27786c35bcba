"""Programs that read a config file from a ConfigMap refuse an unparsable one as the real program does.

Driven with the real kubectl: patch the ConfigMap, delete the pod, let simulated time pass, then read the pod's
status and logs. SocialNetwork's MongoDBs start through the mongo image's entrypoint (which loads --config with
js-yaml before mongod runs) and its Redis servers read redis.conf named by their first argument.
"""

from __future__ import annotations

import json

import pytest

from aoi.twin import build_twin
from aoi.twin.testing import Served

NS = "test-social-network"
JS_YAML = 'error: unexpected "js-yaml.js" output while parsing config:'


@pytest.fixture(scope="module")
def social(tmp_path_factory):
    """One served SocialNetwork twin; each test breaks a different store."""
    served = Served(build_twin(["social-network"], seed=0), tmp_path_factory.mktemp("social"))
    yield served
    served.close()


def write_config(served: Served, name: str, key: str, text: str) -> None:
    """Patch one file of a ConfigMap with kubectl, then restart the store's pod and let 90 s pass."""
    served.ok(["patch", "configmap", name, "-n", NS, "--type", "merge", "-p", json.dumps({"data": {key: text}})])
    restart(served, name)


def restart(served: Served, name: str, seconds: float = 90.0) -> None:
    """Delete a store's pod (its Deployment makes a new one) and let simulated time pass."""
    served.ok(["delete", "pod", "-n", NS, "-l", f"service={name}"])
    with served.twin.lock:
        served.twin.advance(seconds)


def pod(served: Served, name: str) -> tuple[str, str]:
    """Return (pod name, STATUS column) of a store's one live pod, as `kubectl get pods` prints it."""
    rows = served.ok(["get", "pods", "-n", NS, "-l", f"service={name}", "--no-headers"]).splitlines()
    live = [row.split() for row in rows if "Terminating" not in row]
    assert len(live) == 1, rows
    return live[0][0], live[0][2]


def logs(served: Served, name: str) -> str:
    """Return the logs of the store's container: the last finished run when it is crash-looping."""
    pod_name, status = pod(served, name)
    previous = ["--previous"] if status == "CrashLoopBackOff" else []
    return served.ok(["logs", pod_name, "-n", NS, *previous])


def test_mongod_refuses_invalid_yaml_through_the_entrypoint(social):
    write_config(social, "media-mongodb", "mongod.conf", "net:\n  tls: [requireTLS\n    mode: : :\n")
    assert pod(social, "media-mongodb")[1] == "CrashLoopBackOff"
    lines = logs(social, "media-mongodb").splitlines()
    assert lines[0] == JS_YAML
    assert lines[1].startswith("uncaught exception: YAMLException: ") and " at line 3, column " in lines[1]
    assert "Waiting for connections" not in "\n".join(lines)


def test_mongod_config_that_is_a_list_is_refused_then_a_fix_runs_again(social):
    original = json.loads(social.ok(["get", "configmap", "post-storage-mongodb", "-n", NS, "-o", "json"]))
    write_config(social, "post-storage-mongodb", "mongod.conf", "- net\n- tls\n")
    assert pod(social, "post-storage-mongodb")[1] == "CrashLoopBackOff"
    assert logs(social, "post-storage-mongodb").splitlines() == [JS_YAML, '[ "net", "tls" ]']
    write_config(social, "post-storage-mongodb", "mongod.conf", original["data"]["mongod.conf"])
    assert pod(social, "post-storage-mongodb")[1] == "Running"
    assert "Waiting for connections" in logs(social, "post-storage-mongodb")


def test_mongod_started_directly_prints_its_own_parse_error(social):
    social.ok(["patch", "deployment", "user-mongodb", "-n", NS, "--type", "json", "-p", json.dumps(
        [{"op": "add", "path": "/spec/template/spec/containers/0/command", "value": ["mongod"]}])])
    write_config(social, "user-mongodb", "mongod.conf", "net: [tls\n")
    assert pod(social, "user-mongodb")[1] == "CrashLoopBackOff"
    assert logs(social, "user-mongodb").splitlines() == [
        "Error parsing YAML config file: yaml-cpp: error at line 2, column 1: end of sequence flow not found",
        "try 'mongod --help' for more information"]


def test_a_valid_mongod_config_still_runs(social):
    write_config(social, "social-graph-mongodb", "mongod.conf", "net:\n  port: 27017\n  bindIpAll: true\n")
    assert pod(social, "social-graph-mongodb")[1] == "Running"
    assert "Waiting for connections" in logs(social, "social-graph-mongodb")


def test_redis_refuses_a_bad_directive(social):
    write_config(social, "home-timeline-redis", "redis.conf", "port 6379\nio-threads 8\nno-such-directive yes\n")
    assert pod(social, "home-timeline-redis")[1] == "CrashLoopBackOff"
    assert logs(social, "home-timeline-redis").splitlines() == [
        "", "*** FATAL CONFIG FILE ERROR (Redis 6.2.4) ***", "Reading the configuration file, at line 3",
        ">>> 'no-such-directive yes'", "Bad directive or wrong number of arguments"]


def test_redis_refuses_unbalanced_quotes_and_runs_a_valid_file(social):
    write_config(social, "user-timeline-redis", "redis.conf", 'port 6379\nrequirepass "open\n')
    assert logs(social, "user-timeline-redis").splitlines()[-2:] == [
        """>>> 'requirepass "open'""", "Unbalanced quotes in configuration line"]
    write_config(social, "user-timeline-redis", "redis.conf", "port 6379\nmaxmemory 100mb\nsave \"\"\n")
    assert pod(social, "user-timeline-redis")[1] == "Running"
    assert "Ready to accept connections" in logs(social, "user-timeline-redis")
