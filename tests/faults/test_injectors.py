"""Every fault injector, run through the official Python client against a served twin, then recovered."""

from __future__ import annotations

import json

import pytest

from aoi.faults import REGISTRY, get

HOTEL, SOCIAL, SHOP = "test-hotel-reservation", "test-social-network", "astronomy-shop"


def ready(pod: dict) -> bool:
    """Tell whether every container of a pod is ready."""
    statuses = pod.get("status", {}).get("containerStatuses") or []
    return bool(statuses) and all(s["ready"] for s in statuses)


def images(c, service: str) -> list[str]:
    """Return the first container image of each pod of a HotelReservation service."""
    return [p["spec"]["containers"][0]["image"] for p in c.pods(HOTEL, "io.kompose.service", service)]


def commands(c, service: str) -> list[list[str]]:
    """Return the first container command of each pod of a HotelReservation service."""
    return [p["spec"]["containers"][0].get("command") for p in c.pods(HOTEL, "io.kompose.service", service)]


def test_registry_names_every_mechanism():
    assert sorted(REGISTRY) == sorted([
        "target_port", "scale_zero", "missing_node", "image", "command", "mongo_revoke", "mongo_drop_user",
        "mongo_tls", "flagd_flag", "redeploy_without_pv", "pod_chaos", "network_chaos", "noop"])
    with pytest.raises(KeyError, match="choose one of: target_port"):
        get("nope")


def test_target_port_points_at_9999_and_back(make_cluster):
    c = make_cluster("social-network")
    inj = REGISTRY["target_port"]
    assert inj.inject(c.kube, SOCIAL, "user-service") == {"original": [9090]}
    assert c.kubectl(f"get svc user-service -n {SOCIAL} -o jsonpath={{.spec.ports[0].targetPort}}") == "9999"
    svc = c.twin.get("services", SOCIAL, "user-service")
    assert not any(k.startswith("aoi") for k in (svc["metadata"].get("annotations") or {}))  # nothing gives it away
    inj.recover(c.kube, SOCIAL, "user-service")
    svc = c.twin.get("services", SOCIAL, "user-service")
    assert svc["spec"]["ports"][0]["targetPort"] == 9090


def test_target_port_recover_takes_the_original(make_cluster):
    c = make_cluster("social-network")
    REGISTRY["target_port"].inject(c.kube, SOCIAL, "text-service")
    REGISTRY["target_port"].recover(c.kube, SOCIAL, "text-service", original=[9090])
    assert c.twin.get("services", SOCIAL, "text-service")["spec"]["ports"][0]["targetPort"] == 9090


def test_scale_zero_removes_the_pods_and_recovery_brings_one_back(make_cluster):
    c = make_cluster("social-network")
    REGISTRY["scale_zero"].inject(c.kube, SOCIAL, "user-service")
    c.twin.advance(5)
    assert c.twin.get("deployments", SOCIAL, "user-service")["spec"]["replicas"] == 0
    assert c.pods(SOCIAL, "service", "user-service") == []
    assert c.kubectl(f"get deploy user-service -n {SOCIAL} --no-headers").split()[1] == "0/0"
    REGISTRY["scale_zero"].recover(c.kube, SOCIAL, "user-service")
    c.twin.advance(30)
    dep = c.twin.get("deployments", SOCIAL, "user-service")
    assert dep["spec"]["replicas"] == 1 and dep["status"]["availableReplicas"] == 1


def test_missing_node_leaves_the_pod_pending_until_recovered(make_cluster):
    c = make_cluster("social-network")
    uid = c.twin.get("deployments", SOCIAL, "user-service")["metadata"]["uid"]
    REGISTRY["missing_node"].inject(c.kube, SOCIAL, "user-service")
    c.twin.advance(10)
    dep = c.twin.get("deployments", SOCIAL, "user-service")
    assert dep["metadata"]["uid"] != uid  # deleted and created again, as AIOpsLab does
    assert dep["spec"]["template"]["spec"]["nodeSelector"] == {"kubernetes.io/hostname": "extra-node"}
    [pod] = c.pods(SOCIAL, "service", "user-service")
    assert pod["status"]["phase"] == "Pending"
    events = c.kubectl(f"get events -n {SOCIAL} --field-selector involvedObject.name={pod['metadata']['name']}")
    assert "FailedScheduling" in events and "didn't match Pod's node affinity/selector" in events
    REGISTRY["missing_node"].recover(c.kube, SOCIAL, "user-service")
    c.twin.advance(30)
    assert "nodeSelector" not in c.twin.get("deployments", SOCIAL, "user-service")["spec"]["template"]["spec"]
    [pod] = c.pods(SOCIAL, "service", "user-service")
    assert pod["status"]["phase"] == "Running" and ready(pod)


def test_image_swaps_to_the_buggy_geo_image_and_back(make_cluster):
    c = make_cluster("hotel-reservation")
    REGISTRY["image"].inject(c.kube, HOTEL, "geo")
    c.twin.advance(30)
    template = c.twin.get("deployments", HOTEL, "geo")["spec"]["template"]["spec"]["containers"][0]
    assert template["image"] == "yinfangchen/geo:app3"
    assert "yinfangchen/geo:app3" in images(c, "geo")
    REGISTRY["image"].recover(c.kube, HOTEL, "geo")
    c.twin.advance(30)
    dep = c.twin.get("deployments", HOTEL, "geo")
    assert dep["spec"]["template"]["spec"]["containers"][0]["image"] == "yinfangchen/hotelreservation:latest"
    assert not any(k.startswith("aoi") for k in dep["metadata"].get("annotations", {}))
    assert "yinfangchen/hotelreservation:latest" in images(c, "geo")


def test_image_needs_an_image_for_targets_without_a_known_bad_one(make_cluster):
    c = make_cluster("hotel-reservation")
    with pytest.raises(ValueError, match="pass value="):
        REGISTRY["image"].inject(c.kube, HOTEL, "rate")
    with pytest.raises(ValueError, match="no container 'nope'.*hotel-reserv-rate"):
        REGISTRY["image"].inject(c.kube, HOTEL, "rate", container="nope", value="busybox")


def test_command_runs_the_geo_binary_in_profile_and_back(make_cluster):
    c = make_cluster("hotel-reservation")
    uid = c.twin.get("deployments", HOTEL, "profile")["metadata"]["uid"]
    REGISTRY["command"].inject(c.kube, HOTEL, "profile")
    c.twin.advance(30)
    dep = c.twin.get("deployments", HOTEL, "profile")
    assert dep["metadata"]["uid"] != uid
    assert dep["spec"]["template"]["spec"]["containers"][0]["command"] == ["geo"]
    assert commands(c, "profile") == [["geo"]]
    REGISTRY["command"].recover(c.kube, HOTEL, "profile")
    c.twin.advance(30)
    assert commands(c, "profile") == [["profile"]]


@pytest.mark.parametrize("mechanism, store, service, echoed", [
    ("mongo_revoke", "mongodb-geo", "geo", "Downgrading admin user privileges..."),
    ("mongo_drop_user", "mongodb-rate", "rate", "Removing admin user...")])
def test_mongo_scripts_run_in_the_store_and_restart_its_service(make_cluster, mechanism, store, service, echoed):
    c = make_cluster("hotel-reservation")
    before = {p["metadata"]["name"] for p in c.pods(HOTEL, "io.kompose.service", service)}
    [mongo] = c.pods(HOTEL, "io.kompose.service", store)
    # The twin's `mongo` program may still be missing (the script then says "not found"): assert the script ran.
    [result] = REGISTRY[mechanism].inject(c.kube, HOTEL, store, check=False)
    assert result.pod == mongo["metadata"]["name"] and result.stdout.startswith(echoed)
    c.twin.advance(30)
    after = {p["metadata"]["name"] for p in c.pods(HOTEL, "io.kompose.service", service)}
    assert after and not (after & before)
    [result] = REGISTRY[mechanism].recover(c.kube, HOTEL, store, check=False)
    assert result.pod == mongo["metadata"]["name"]
    c.twin.advance(30)
    assert not ({p["metadata"]["name"] for p in c.pods(HOTEL, "io.kompose.service", service)} & after)


def test_mongo_tls_requires_tls_then_disables_it(make_cluster):
    c = make_cluster("social-network")
    old_clients = {p["metadata"]["name"] for p in c.pods(SOCIAL, "service", "url-shorten-service")}
    with c.budget(120):  # the injector waits for the store's rollout
        REGISTRY["mongo_tls"].inject(c.kube, SOCIAL, "url-shorten-mongodb")
    conf = c.twin.get("configmaps", SOCIAL, "url-shorten-mongodb")["data"]["mongod.conf"]
    assert conf == ("net:\n  tls:\n    mode: requireTLS\n    certificateKeyFile: /etc/tls/tls.pem\n"
                    "    CAFile: /etc/tls/ca.crt\n")
    template = c.twin.get("deployments", SOCIAL, "url-shorten-mongodb")["spec"]["template"]
    assert "kubectl.kubernetes.io/restartedAt" in template["metadata"]["annotations"]
    c.twin.advance(30)
    assert not ({p["metadata"]["name"] for p in c.pods(SOCIAL, "service", "url-shorten-service")} & old_clients)
    with c.budget(120):
        REGISTRY["mongo_tls"].recover(c.kube, SOCIAL, "url-shorten-mongodb")
    conf = c.twin.get("configmaps", SOCIAL, "url-shorten-mongodb")["data"]["mongod.conf"]
    assert conf == "net:\n  tls:\n    mode: disabled\n"


@pytest.mark.parametrize("flag, variant", [("paymentFailure", "100%"), ("imageSlowLoad", "10sec"), ("adFailure", "on")])
def test_flagd_flag_sets_the_fault_variant_and_restarts_flagd(make_cluster, flag, variant):
    c = make_cluster("astronomy-shop")
    flags = lambda: json.loads(c.twin.get("configmaps", SHOP, "flagd-config")["data"]["demo.flagd.json"])[  # noqa: E731
        "flags"]
    REGISTRY["flagd_flag"].inject(c.kube, SHOP, flag)
    assert flags()[flag]["defaultVariant"] == variant
    stamp = c.twin.get("deployments", SHOP, "flagd")["spec"]["template"]["metadata"]["annotations"]
    path = "{.spec.template.metadata.annotations.kubectl\\.kubernetes\\.io/restartedAt}"
    assert stamp["kubectl.kubernetes.io/restartedAt"] == c.kubectl(f"get deploy flagd -n {SHOP} -o jsonpath={path}")
    REGISTRY["flagd_flag"].recover(c.kube, SHOP, flag)
    assert flags()[flag]["defaultVariant"] == "off"


def test_flagd_flag_rejects_unknown_flags_and_variants(make_cluster):
    c = make_cluster("astronomy-shop")
    with pytest.raises(ValueError, match="unknown flag 'cartFailur'.*known flags: adFailure.*paymentFailure"):
        REGISTRY["flagd_flag"].inject(c.kube, SHOP, "cartFailur")
    with pytest.raises(ValueError, match="no variant '33%'.*100%"):
        REGISTRY["flagd_flag"].inject(c.kube, SHOP, "paymentFailure", variant="33%")


def test_redeploy_without_pv_leaves_claims_pending_until_the_volumes_are_freed(make_cluster):
    c = make_cluster("hotel-reservation")
    uid = c.twin.get("namespaces", "", HOTEL)["metadata"]["uid"]
    with c.budget(120):
        created = REGISTRY["redeploy_without_pv"].inject(c.kube, HOTEL)
    assert "Deployment/geo" in created and "PersistentVolumeClaim/geo-pvc" in created
    assert c.twin.get("namespaces", "", HOTEL)["metadata"]["uid"] != uid
    assert c.twin.get("rolebindings", HOTEL, "aoi-executor") is not None  # the executor keeps its access
    c.twin.advance(30)
    claims = {p["metadata"]["name"]: p["status"]["phase"] for p in c.twin.list("persistentvolumeclaims", HOTEL)}
    assert claims and set(claims.values()) == {"Pending"}
    volumes = {v["metadata"]["name"]: v for v in c.twin.list("persistentvolumes") if v["metadata"]["name"] == "geo-pv"}
    assert volumes["geo-pv"]["status"]["phase"] == "Released"
    assert c.pods(HOTEL, "io.kompose.service", "mongodb-geo")[0]["status"]["phase"] == "Pending"
    freed = REGISTRY["redeploy_without_pv"].recover(c.kube, HOTEL)
    assert "geo-pv" in freed
    c.twin.advance(60)
    assert {p["status"]["phase"] for p in c.twin.list("persistentvolumeclaims", HOTEL)} == {"Bound"}
    assert c.pods(HOTEL, "io.kompose.service", "mongodb-geo")[0]["status"]["phase"] == "Running"


def test_redeploy_is_deterministic_by_seed(make_cluster):
    def run() -> tuple:
        c = make_cluster("hotel-reservation")
        with c.budget(120):
            REGISTRY["redeploy_without_pv"].inject(c.kube, HOTEL)
        c.twin.advance(10)
        return c.twin.clock.now(), sorted(p["metadata"]["name"] for p in c.twin.list("pods", HOTEL))

    assert run() == run()


def test_redeploy_without_a_time_budget_times_out_clearly(make_cluster):
    c = make_cluster("hotel-reservation")
    with pytest.raises(TimeoutError, match="namespace test-hotel-reservation still exists"):
        REGISTRY["redeploy_without_pv"].inject(c.kube, HOTEL, timeout=1.5)


def test_chaos_injectors_create_aiopslab_shaped_objects_and_delete_them(make_cluster):
    c = make_cluster("hotel-reservation")
    body = REGISTRY["pod_chaos"].inject(c.kube, HOTEL, "geo", action="container-kill")
    stored = c.twin.get("podchaos", HOTEL, "container-kill")
    assert stored["spec"] == body["spec"] == {
        "action": "container-kill", "mode": "one", "duration": "200s",
        "selector": {"labelSelectors": {"io.kompose.service": "geo"}}, "containerNames": ["hotel-reserv-geo"]}
    loss = REGISTRY["network_chaos"].inject(c.kube, HOTEL, "user")
    assert loss["spec"]["selector"] == {"namespaces": [HOTEL], "labelSelectors": {"io.kompose.service": "user"}}
    assert loss["spec"]["loss"] == {"loss": "99", "correlation": "100"}
    delay = REGISTRY["network_chaos"].inject(c.kube, HOTEL, "user", action="delay")
    assert delay["spec"]["delay"] == {"latency": "10s", "correlation": "100", "jitter": "0ms"}
    assert c.kubectl(f"get networkchaos -n {HOTEL} -o name").split() == ["networkchaos.chaos-mesh.org/delay",
                                                                         "networkchaos.chaos-mesh.org/loss"]
    REGISTRY["pod_chaos"].recover(c.kube, HOTEL, "geo", action="container-kill")
    REGISTRY["network_chaos"].recover(c.kube, HOTEL, "user")
    REGISTRY["network_chaos"].recover(c.kube, HOTEL, "user")  # already gone is fine
    assert c.twin.get("podchaos", HOTEL, "container-kill") is None
    assert c.twin.get("networkchaos", HOTEL, "loss") is None


def test_noop_changes_nothing(make_cluster):
    c = make_cluster("hotel-reservation")
    rv = c.twin.store.rv
    REGISTRY["noop"].inject(c.kube, HOTEL, None)
    REGISTRY["noop"].recover(c.kube, HOTEL, None)
    assert c.twin.store.rv == rv
