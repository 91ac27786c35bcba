"""Mitigation oracles against a served twin: healthy apps pass, broken ones fail with reasons, and AIOpsLab's
holes (parity passes, strict fails) are visible."""

from __future__ import annotations

import doctest
import json

import pytest

from aoi.kube import Kube
from aoi.problems import make, oracles, parity, problem_ids, strict
from aoi.problems.oracles import judge, parity_check, strict_check
from aoi.twin import build_twin
from aoi.twin.core import operations
from aoi.twin.serving import serve, write_kubeconfigs

SOCIAL, HOTEL, ASTRO = "test-social-network", "test-hotel-reservation", "astronomy-shop"
SMP = "application/strategic-merge-patch+json"


def patch(served: Served, kind: str, namespace: str, name: str, body: dict, settle: float = 120.0) -> None:
    """Patch an object in-process, then let simulated time pass so controllers react."""
    twin = served.twin
    with twin.lock:
        operations.patch(twin, twin.resource(kind), namespace, name, json.dumps(body).encode(), SMP)
        twin.advance(settle)


def set_image(served: Served, deployment: str, container: str, image: str) -> None:
    patch(served, "deployments", HOTEL, deployment, {"spec": {"template": {"spec": {"containers": [
        {"name": container, "image": image}]}}}})


class Served:
    """A twin served over HTTPS with an admin client: all the oracles need."""

    def __init__(self, app: str, folder):
        self.twin = build_twin([app], seed=0)
        self.server = serve(self.twin)
        self.kube = Kube.from_kubeconfig(write_kubeconfigs(self.twin, self.server.url, folder / "kubeconfigs")["admin"])


def served(app: str, folder):
    """Yield a private served twin of one app, stopping its server afterwards."""
    twin = Served(app, folder)
    yield twin
    twin.kube.close()
    twin.server.stop()


@pytest.fixture
def social(tmp_path):
    yield from served("social-network", tmp_path)


@pytest.fixture
def astro(tmp_path):
    yield from served("astronomy-shop", tmp_path)


@pytest.fixture
def hotel(tmp_path):
    yield from served("hotel-reservation", tmp_path)


def kube(twin: Served) -> Kube:
    return twin.kube


def test_healthy_social_network_passes_every_check(social):
    for pid in [p for p in problem_ids() if "social_net" in p or "k8s_target_port" in p or "auth_miss" in p]:
        verdict = judge(make(pid), kube(social))
        assert verdict.ok and verdict.parity, (pid, verdict.reasons)


def test_target_port_broken_then_fixed_but_another_pod_pending(social):
    problem = make("k8s_target_port-misconfig-mitigation-1")
    patch(social, "services", SOCIAL, "user-service", {"spec": {"ports": [{"port": 9090, "targetPort": 9999}]}})
    broken = judge(problem, kube(social))
    assert not broken.ok and broken.parity is False
    assert any("targets 9999" in r for r in broken.reasons)

    patch(social, "services", SOCIAL, "user-service", {"spec": {"ports": [{"port": 9090, "targetPort": 9090}]}})
    node = {"spec": {"template": {"spec": {"nodeSelector": {"kubernetes.io/hostname": "extra-node"}}}}}
    patch(social, "deployments", SOCIAL, "media-service", node)
    elsewhere = judge(problem, kube(social))
    assert elsewhere.parity is True  # AIOpsLab skips the Pending pod
    assert not elsewhere.ok and any("media-service" in r for r in elsewhere.reasons)


def test_missing_node_passes_parity_without_a_fix(social):
    problem = make("assign_to_non_existent_node_social_net-mitigation-1")
    node = {"spec": {"template": {"spec": {"nodeSelector": {"kubernetes.io/hostname": "extra-node"}}}}}
    patch(social, "deployments", SOCIAL, "user-service", node)
    verdict = judge(problem, kube(social))
    assert verdict.parity is True and not verdict.ok
    assert any("still has nodeSelector" in r for r in verdict.reasons)
    # The unguarded variants meet the same Pending pod: AIOpsLab raises TypeError, we report a failed check.
    unguarded = parity_check(make("auth_miss_mongodb-mitigation-1"), kube(social))
    assert not unguarded.ok and "TypeError" in unguarded.reasons[0]

    patch(social, "deployments", SOCIAL, "user-service", {"spec": {"template": {"spec": {"nodeSelector": None}}}})
    fixed = judge(problem, kube(social))
    assert fixed.ok and fixed.parity, fixed.reasons


def test_scale_to_zero_and_back(social):
    problem = make("scale_pod_zero_social_net-mitigation-1")
    patch(social, "deployments", SOCIAL, "user-service", {"spec": {"replicas": 0}})
    broken = judge(problem, kube(social))
    assert not broken.ok and broken.parity is False
    assert broken.reasons[0] == "deployment user-service has 0 replicas, expected at least 1"
    patch(social, "deployments", SOCIAL, "user-service", {"spec": {"replicas": 1}})
    assert judge(problem, kube(social)) == oracles.OracleResult(True, (), True)


def test_tls_fault_passes_parity_while_mongod_still_requires_tls(social):
    problem = make("auth_miss_mongodb-mitigation-1")
    conf = "net:\n  tls:\n    mode: requireTLS\n    certificateKeyFile: /etc/tls/tls.pem\n"
    patch(social, "configmaps", SOCIAL, "url-shorten-mongodb", {"data": {"mongod.conf": conf}}, settle=1)
    verdict = judge(problem, kube(social))
    assert verdict.parity is True and not verdict.ok
    assert verdict.reasons[0] == "url-shorten-mongodb still has net.tls.mode requireTLS in its mongod.conf"


def test_flag_left_on_fails_strict_only(astro):
    problem = make("astronomy_shop_kafka_queue_problems-mitigation-1")
    assert strict_check(problem, kube(astro)).ok
    cm = astro.twin.get("configmaps", ASTRO, "flagd-config")
    flags = json.loads(cm["data"]["demo.flagd.json"])
    flags["flags"]["kafkaQueueProblems"]["defaultVariant"] = "on"
    patch(astro, "configmaps", ASTRO, "flagd-config", {"data": {"demo.flagd.json": json.dumps(flags)}}, settle=1)
    verdict = strict_check(problem, kube(astro))
    assert not verdict.ok and verdict.reasons[0] == "flag kafkaQueueProblems is still 'on' in flagd-config"


def test_image_and_command_checks(hotel):
    image = make("misconfig_app_hotel_res-mitigation-1")
    set_image(hotel, "geo", "hotel-reserv-geo", "yinfangchen/geo:app3")
    wrong = "container hotel-reserv-geo of deployment geo runs image yinfangchen/geo:app3, expected " \
            "yinfangchen/hotelreservation:latest"
    assert wrong in strict_check(image, kube(hotel)).reasons
    set_image(hotel, "geo", "hotel-reserv-geo", "yinfangchen/hotelreservation:latest")
    assert wrong not in strict_check(image, kube(hotel)).reasons

    binary = make("wrong_bin_usage-mitigation-1")
    patch(hotel, "deployments", HOTEL, "profile", {"spec": {"template": {"spec": {"containers": [
        {"name": "hotel-reserv-profile", "command": ["geo", "profile"]}]}}}})
    # "profile" is in the list, so AIOpsLab is happy
    assert not any("runs" in r for r in parity.wrong_bin(kube(hotel), binary))
    assert any("runs ['geo', 'profile'], expected ['profile']" in r for r in strict_check(binary, kube(hotel)).reasons)


def test_unbound_claims_fail_the_redeploy_check(hotel):
    claim = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "stray-pvc"},
             "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "no-such-class",
                      "resources": {"requests": {"storage": "1Gi"}}}}
    with hotel.twin.lock:
        operations.create(hotel.twin, hotel.twin.resource("persistentvolumeclaims"), HOTEL, claim)
    verdict = strict_check(make("redeploy_without_PV-mitigation-1"), kube(hotel))
    assert "PersistentVolumeClaim stray-pvc is Pending" in verdict.reasons


def test_mongo_role_check_reads_the_user_through_exec(hotel):
    problem = make("revoke_auth_mongodb-mitigation-1")
    admin = kube(hotel)
    assert strict.mongo_role(admin, problem) == []
    pod = admin.pods_of("deployments", HOTEL, "mongodb-geo")[0]["metadata"]["name"]
    admin.exec(HOTEL, pod, "hotel-reserv-geo-mongo", ["/bin/bash", problem.fault.expect["script"]])
    assert strict.mongo_role(admin, problem) == ["user admin in mongodb-geo lacks role readWrite on geo-db"]


def test_a_missing_object_is_a_reason_not_a_crash(social):
    problem = make("k8s_target_port-misconfig-mitigation-3")
    with social.twin.lock:
        operations.delete(social.twin, social.twin.resource("services"), SOCIAL, "post-storage-service")
    verdict = judge(problem, kube(social))
    assert not verdict.ok and verdict.parity is False
    assert verdict.reasons[0].startswith("could not read the cluster for k8s_target_port-misconfig-mitigation-3: 404")


def test_doctests():
    for module in (strict, parity, oracles):
        assert doctest.testmod(module).failed == 0
