"""The problem registry: AIOpsLab's 89 ids, their answers, faults, workloads and parametric targets."""

from __future__ import annotations

import doctest
from collections import Counter

import pytest

from aoi.problems import build, families, make, problem_ids, registry, targets
from aoi.problems.registry import list_problems

DETECTION = """k8s_target_port-misconfig-detection-1 k8s_target_port-misconfig-detection-2
k8s_target_port-misconfig-detection-3 auth_miss_mongodb-detection-1 revoke_auth_mongodb-detection-1
revoke_auth_mongodb-detection-2 user_unregistered_mongodb-detection-1 user_unregistered_mongodb-detection-2
misconfig_app_hotel_res-detection-1 scale_pod_zero_social_net-detection-1
assign_to_non_existent_node_social_net-detection-1 container_kill-detection pod_failure_hotel_res-detection-1
pod_kill_hotel_res-detection-1 network_loss_hotel_res-detection-1 network_delay_hotel_res-detection-1
noop_detection_hotel_reservation-1 noop_detection_social_network-1 noop_detection_astronomy_shop-1
astronomy_shop_ad_service_failure-detection-1 astronomy_shop_ad_service_high_cpu-detection-1
astronomy_shop_ad_service_manual_gc-detection-1 astronomy_shop_cart_service_failure-detection-1
astronomy_shop_image_slow_load-detection-1 astronomy_shop_kafka_queue_problems-detection-1
astronomy_shop_loadgenerator_flood_homepage-detection-1 astronomy_shop_payment_service_failure-detection-1
astronomy_shop_payment_service_unreachable-detection-1 astronomy_shop_product_catalog_service_failure-detection-1
astronomy_shop_recommendation_service_cache_failure-detection-1 redeploy_without_PV-detection-1
wrong_bin_usage-detection-1 flower_node_stop-detection flower_model_misconfig-detection"""
LOCALIZATION = """k8s_target_port-misconfig-localization-1 k8s_target_port-misconfig-localization-2
k8s_target_port-misconfig-localization-3 auth_miss_mongodb-localization-1 revoke_auth_mongodb-localization-1
revoke_auth_mongodb-localization-2 user_unregistered_mongodb-localization-1 user_unregistered_mongodb-localization-2
misconfig_app_hotel_res-localization-1 scale_pod_zero_social_net-localization-1
assign_to_non_existent_node_social_net-localization-1 container_kill-localization
pod_failure_hotel_res-localization-1 pod_kill_hotel_res-localization-1 network_loss_hotel_res-localization-1
network_delay_hotel_res-localization-1 astronomy_shop_ad_service_failure-localization-1
astronomy_shop_ad_service_high_cpu-localization-1 astronomy_shop_ad_service_manual_gc-localization-1
astronomy_shop_cart_service_failure-localization-1 astronomy_shop_image_slow_load-localization-1
astronomy_shop_kafka_queue_problems-localization-1 astronomy_shop_loadgenerator_flood_homepage-localization-1
astronomy_shop_payment_service_failure-localization-1 astronomy_shop_payment_service_unreachable-localization-1
astronomy_shop_product_catalog_service_failure-localization-1
astronomy_shop_recommendation_service_cache_failure-localization-1 wrong_bin_usage-localization-1"""
ANALYSIS = """k8s_target_port-misconfig-analysis-1 k8s_target_port-misconfig-analysis-2
k8s_target_port-misconfig-analysis-3 auth_miss_mongodb-analysis-1 revoke_auth_mongodb-analysis-1
revoke_auth_mongodb-analysis-2 user_unregistered_mongodb-analysis-1 user_unregistered_mongodb-analysis-2
misconfig_app_hotel_res-analysis-1 scale_pod_zero_social_net-analysis-1
assign_to_non_existent_node_social_net-analysis-1 redeploy_without_PV-analysis-1 wrong_bin_usage-analysis-1"""
MITIGATION = """k8s_target_port-misconfig-mitigation-1 k8s_target_port-misconfig-mitigation-2
k8s_target_port-misconfig-mitigation-3 auth_miss_mongodb-mitigation-1 revoke_auth_mongodb-mitigation-1
revoke_auth_mongodb-mitigation-2 user_unregistered_mongodb-mitigation-1 user_unregistered_mongodb-mitigation-2
misconfig_app_hotel_res-mitigation-1 scale_pod_zero_social_net-mitigation-1
assign_to_non_existent_node_social_net-mitigation-1 astronomy_shop_kafka_queue_problems-mitigation-1
redeploy_without_PV-mitigation-1 wrong_bin_usage-mitigation-1"""
APPENDIX_A = (DETECTION + " " + LOCALIZATION + " " + ANALYSIS + " " + MITIGATION).split()

# family -> (default targets, localization answer(s) of the first target, (system_level, fault_type) or None)
FAMILY_ANSWERS = {
    "k8s_target_port_misconfig": (("user-service", "text-service", "post-storage-service"), ("user-service",),
                                  ("Virtualization", "Misconfiguration")),
    "auth_miss_mongodb": (("url-shorten-mongodb",), ("url-shorten-mongodb",), ("Application", "Misconfiguration")),
    "revoke_auth": (("mongodb-geo", "mongodb-rate"), ("mongodb-geo", "geo"), ("Application", "Authentication Issue")),
    "storage_user_unregistered": (("mongodb-geo", "mongodb-rate"), ("mongodb-geo", "geo"),
                                  ("Application", "Network/Storage Issue")),
    "misconfig_app": (("geo",), ("geo",), ("Application", "Misconfiguration")),
    "scale_pod": (("user-service",), ("user-service",), ("Virtualization", "Operation Error")),
    "assign_non_existent_node": (("user-service",), ("user-service",), ("Virtualization", "Dependency Problem")),
    "container_kill": (("geo",), ("geo",), None),
    "pod_failure": (("user",), ("user",), None),
    "pod_kill": (("user",), ("user",), None),
    "network_loss": (("user",), ("user",), None),
    "network_delay": (("user",), ("user",), None),
    "redeploy_without_pv": ((None,), (), ("Virtualization", "Operation Error")),
    "wrong_bin_usage": (("profile",), ("profile",), ("Application", "Network/Storage Issue")),
}
FLAG_ANSWERS = {"ad_service_failure": "ad", "ad_service_high_cpu": "ad", "ad_service_manual_gc": "ad",
                "cart_service_failure": "cart", "image_slow_load": "frontend", "kafka_queue_problems": "kafka",
                "loadgenerator_flood_homepage": "frontend", "payment_service_failure": "payment",
                "payment_service_unreachable": "checkout", "product_catalog_service_failure": "product-catalog",
                "recommendation_service_cache_failure": "recommendation"}


def test_the_89_ids_in_registry_order():
    assert problem_ids() == APPENDIX_A
    assert len(set(APPENDIX_A)) == 89


def test_counts_per_task_type_and_backend():
    problems = list_problems()
    assert Counter(p.task_type for p in problems) == {"detection": 34, "localization": 28, "analysis": 13,
                                                      "mitigation": 14}
    assert Counter(p.backend for p in problems) == {"twin": 87, "aiopslab": 2}
    assert len(problem_ids("detection")) == 34  # a substring filter, as AIOpsLab's: noop_detection_* included


def test_flower_problems_say_they_need_aiopslab():
    for pid in ("flower_node_stop-detection", "flower_model_misconfig-detection"):
        problem = make(pid)
        problem.require_backend("aiopslab")
        with pytest.raises(ValueError, match="backend='aiopslab'"):
            problem.require_backend("twin")
    make("wrong_bin_usage-detection-1").require_backend("twin")


@pytest.mark.parametrize("pid", APPENDIX_A)
def test_every_default_target_is_valid(pid):
    problem = make(pid)
    assert problem.target in problem.valid_targets or (problem.target is None and not problem.valid_targets)
    assert problem.fault.target == problem.target and problem.fault.namespace == problem.namespace


@pytest.mark.parametrize("family", FAMILY_ANSWERS)
def test_family_answers(family):
    defaults, loc, rca = FAMILY_ANSWERS[family]
    problems = [p for p in list_problems() if p.family == family]
    assert tuple(dict.fromkeys(p.target for p in problems)) == defaults
    first = problems[0]
    assert first.answers.localization == loc and first.answers.detection == "Yes"
    assert (first.answers.system_level, first.answers.fault_type) == (rca or (None, None))


@pytest.mark.parametrize("stem", FLAG_ANSWERS)
def test_flag_answers_follow_aiopslab(stem):
    problem = make(f"astronomy_shop_{stem}-localization-1")
    assert problem.answers.localization == (FLAG_ANSWERS[stem],)
    assert problem.fault.mechanism == "flagd_flag" and problem.workload is None


def test_noop_expects_no_and_takes_no_target():
    for pid in ("noop_detection_hotel_reservation-1", "noop_detection_social_network-1",
                "noop_detection_astronomy_shop-1"):
        assert make(pid).answers.detection == "No" and make(pid).fault.mechanism == "noop"
        with pytest.raises(ValueError, match="takes no target"):
            make(pid, target="frontend")


def test_faults_of_the_reference_problems():
    port = make("k8s_target_port-misconfig-mitigation-2").fault
    assert (dict(port.params), dict(port.expect)) == ({"port": 9999}, {"original_target_port": 9090})
    assert make("astronomy_shop_payment_service_failure-detection-1").fault.params["variant"] == "100%"
    assert make("astronomy_shop_image_slow_load-detection-1").fault.params["variant"] == "10sec"
    chaos = make("pod_failure_hotel_res-detection-1").fault
    assert (chaos.mechanism, chaos.params["action"], chaos.params["duration"]) == ("pod_chaos", "pod-failure", "100s")
    assert make("pod_kill_hotel_res-detection-1").fault.params["action"] == "pod-failure"
    assert make("container_kill-detection").fault.params["container_names"] == ["hotel-reserv-geo"]
    assert make("network_delay_hotel_res-localization-1").fault.params["latency"] == "10s"
    wrong_bin = make("wrong_bin_usage-mitigation-1").fault
    assert dict(wrong_bin.params) == {"container": "hotel-reserv-profile", "value": ["geo"]}
    assert wrong_bin.expect["original_command"] == ["profile"]
    image = make("misconfig_app_hotel_res-mitigation-1").fault
    assert dict(image.params) == {"container": "hotel-reserv-geo", "value": "yinfangchen/geo:app3"}
    assert image.expect["original_image"] == "yinfangchen/hotelreservation:latest"
    assert dict(make("assign_to_non_existent_node_social_net-mitigation-1").fault.params) == {"node": "extra-node"}
    assert dict(make("astronomy_shop_cart_service_failure-detection-1").fault.params) == {"variant": "on"}
    assert make("redeploy_without_PV-mitigation-1").fault.mechanism == "redeploy_without_pv"
    revoke = make("revoke_auth_mongodb-mitigation-2").fault
    assert dict(revoke.params) == {} and (revoke.expect["db"], revoke.expect["dependents"]) == ("rate-db", ["rate"])


def test_workloads():
    social = make("scale_pod_zero_social_net-detection-1").workload
    assert (social.rate, social.duration, social.dist, social.connections, social.threads) == (10, 10, "exp", 2, 2)
    assert social.url("10.96.1.2") == "http://10.96.1.2:8080/wrk2-api/post/compose"
    assert make("revoke_auth_mongodb-detection-1").workload.duration == 5
    assert make("redeploy_without_PV-detection-1").workload.duration == 5
    assert make("container_kill-detection").workload.rate == 100
    assert make("wrong_bin_usage-detection-1").workload.script.endswith("mixed-workload_type_1.lua")
    assert make("noop_detection_astronomy_shop-1").workload is None


def test_parametric_targets():
    port = make("k8s_target_port-misconfig-localization-1", target="compose-post-service")
    assert port.target == "compose-post-service" and port.answers.localization == ("compose-post-service",)
    assert make("scale_pod_zero_social_net-mitigation-1", target="jaeger").fault.target == "jaeger"
    assert make("revoke_auth_mongodb-localization-1", target="mongodb-rate").answers.localization == \
        ("mongodb-rate", "rate")
    tls = make("auth_miss_mongodb-mitigation-1", target="user-mongodb").fault.expect
    assert tls["configmap"] == "user-mongodb" and set(tls["dependents"]) == {"user-mention-service", "user-service"}
    image = make("misconfig_app_hotel_res-mitigation-1", target="rate").fault
    assert image.params["container"] == "hotel-reserv-rate" and image.params["value"] == "yinfangchen/geo:app3"
    assert make("wrong_bin_usage-mitigation-1", target="geo").fault.params["value"] == ["frontend"]
    chaos = make("container_kill-localization", target="frontend").fault
    assert chaos.params["container_names"] == ["hotel-reserv-frontend"]
    assert chaos.expect["selector"] == {"io.kompose.service": "frontend"}
    cart = make("astronomy_shop_ad_service_failure-localization-1", target="cartFailure")
    assert cart.answers.localization == ("cart",) and cart.fault.target == "cartFailure"


def test_flag_targets_come_from_the_flagd_configmap():
    assert sorted(targets.flags("astronomy-shop")) == sorted(families.FLAG_VARIANTS)
    assert targets.flag_reader("astronomy-shop", "paymentUnreachable") == "checkout"


def test_incompatible_target_lists_the_valid_ones():
    with pytest.raises(ValueError, match="choose one of: .*user-service"):
        make("k8s_target_port-misconfig-mitigation-1", target="user-mongodb")
    with pytest.raises(ValueError, match="mongodb-geo, mongodb-rate"):
        make("revoke_auth_mongodb-detection-1", target="mongodb-user")
    with pytest.raises(ValueError, match="unknown problem id"):
        make("revoke_auth_mongodb-detection-9")


def test_doctests():
    for module in (registry, targets, build):
        assert doctest.testmod(module).failed == 0


def test_every_twin_fault_has_an_injector():
    faults = pytest.importorskip("aoi.faults")
    for problem in list_problems():
        if problem.backend == "twin":
            assert problem.fault.mechanism in faults.REGISTRY, problem.id


def test_cli_list_and_show():
    from typer.testing import CliRunner

    from aoi.problems.cli import problems_app

    runner = CliRunner()
    listed = runner.invoke(problems_app, ["list", "--task-type", "analysis", "--app", "hotel-reservation"])
    assert listed.exit_code == 0 and "7 problems" in listed.output and "redeploy_without_PV-analysis-1" in listed.output
    shown = runner.invoke(problems_app, ["show", "revoke_auth_mongodb-mitigation-2"])
    assert shown.exit_code == 0 and "mongodb-rate" in shown.output and "mongo_revoke" in shown.output
    bad = runner.invoke(problems_app, ["show", "wrong_bin_usage-mitigation-1", "--target", "consul"])
    assert bad.exit_code != 0 and "not a valid target" in bad.output
