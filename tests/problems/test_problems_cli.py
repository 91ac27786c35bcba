"""`aoi problems list`: AIOpsLab's registry order, JSON output, and a table that fits the terminal."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from aoi.problems.cli import problems_app
from aoi.problems.registry import make

# AIOpsLab's PROBLEM_REGISTRY, in its order: aiopslab/orchestrator/problems/registry.py, lines 38-219 at commit
# ddf7e40619689dad75eaf8f2174e263c4157ec76 (a dict literal: family by family, each instance's task types in turn).
AIOPSLAB_ORDER = """
k8s_target_port-misconfig-detection-1 k8s_target_port-misconfig-localization-1 k8s_target_port-misconfig-analysis-1
k8s_target_port-misconfig-mitigation-1 k8s_target_port-misconfig-detection-2
k8s_target_port-misconfig-localization-2 k8s_target_port-misconfig-analysis-2 k8s_target_port-misconfig-mitigation-2
k8s_target_port-misconfig-detection-3 k8s_target_port-misconfig-localization-3 k8s_target_port-misconfig-analysis-3
k8s_target_port-misconfig-mitigation-3 auth_miss_mongodb-detection-1 auth_miss_mongodb-localization-1
auth_miss_mongodb-analysis-1 auth_miss_mongodb-mitigation-1 revoke_auth_mongodb-detection-1
revoke_auth_mongodb-localization-1 revoke_auth_mongodb-analysis-1 revoke_auth_mongodb-mitigation-1
revoke_auth_mongodb-detection-2 revoke_auth_mongodb-localization-2 revoke_auth_mongodb-analysis-2
revoke_auth_mongodb-mitigation-2 user_unregistered_mongodb-detection-1 user_unregistered_mongodb-localization-1
user_unregistered_mongodb-analysis-1 user_unregistered_mongodb-mitigation-1 user_unregistered_mongodb-detection-2
user_unregistered_mongodb-localization-2 user_unregistered_mongodb-analysis-2 user_unregistered_mongodb-mitigation-2
misconfig_app_hotel_res-detection-1 misconfig_app_hotel_res-localization-1 misconfig_app_hotel_res-analysis-1
misconfig_app_hotel_res-mitigation-1 scale_pod_zero_social_net-detection-1 scale_pod_zero_social_net-localization-1
scale_pod_zero_social_net-analysis-1 scale_pod_zero_social_net-mitigation-1
assign_to_non_existent_node_social_net-detection-1 assign_to_non_existent_node_social_net-localization-1
assign_to_non_existent_node_social_net-analysis-1 assign_to_non_existent_node_social_net-mitigation-1
container_kill-detection container_kill-localization pod_failure_hotel_res-detection-1
pod_failure_hotel_res-localization-1 pod_kill_hotel_res-detection-1 pod_kill_hotel_res-localization-1
network_loss_hotel_res-detection-1 network_loss_hotel_res-localization-1 network_delay_hotel_res-detection-1
network_delay_hotel_res-localization-1 noop_detection_hotel_reservation-1 noop_detection_social_network-1
noop_detection_astronomy_shop-1 astronomy_shop_ad_service_failure-detection-1
astronomy_shop_ad_service_failure-localization-1 astronomy_shop_ad_service_high_cpu-detection-1
astronomy_shop_ad_service_high_cpu-localization-1 astronomy_shop_ad_service_manual_gc-detection-1
astronomy_shop_ad_service_manual_gc-localization-1 astronomy_shop_cart_service_failure-detection-1
astronomy_shop_cart_service_failure-localization-1 astronomy_shop_image_slow_load-detection-1
astronomy_shop_image_slow_load-localization-1 astronomy_shop_kafka_queue_problems-detection-1
astronomy_shop_kafka_queue_problems-localization-1 astronomy_shop_kafka_queue_problems-mitigation-1
astronomy_shop_loadgenerator_flood_homepage-detection-1 astronomy_shop_loadgenerator_flood_homepage-localization-1
astronomy_shop_payment_service_failure-detection-1 astronomy_shop_payment_service_failure-localization-1
astronomy_shop_payment_service_unreachable-detection-1 astronomy_shop_payment_service_unreachable-localization-1
astronomy_shop_product_catalog_service_failure-detection-1
astronomy_shop_product_catalog_service_failure-localization-1
astronomy_shop_recommendation_service_cache_failure-detection-1
astronomy_shop_recommendation_service_cache_failure-localization-1 redeploy_without_PV-detection-1
redeploy_without_PV-analysis-1 redeploy_without_PV-mitigation-1 wrong_bin_usage-detection-1
wrong_bin_usage-localization-1 wrong_bin_usage-analysis-1 wrong_bin_usage-mitigation-1 flower_node_stop-detection
flower_model_misconfig-detection""".split()  # noqa: SIM905 - the registry's ids, pasted as words


def invoke(*args: str, width: int = 80):
    """Run `aoi problems ARGS` at a terminal width."""
    return CliRunner().invoke(problems_app, list(args), env={"COLUMNS": str(width)})


def listed_ids(output: str) -> list[str]:
    """Return the ids of a wide listing, in order (the header and the closing count left out)."""
    return [line.split()[0] for line in output.splitlines()[1:-1] if line.strip()]


def test_list_follows_aiopslab_registry_order():
    done = invoke("list", width=200)
    assert done.exit_code == 0 and listed_ids(done.output) == AIOPSLAB_ORDER
    assert done.output.splitlines()[-1] == "89 problems"


def test_filters_keep_the_order():
    done = invoke("list", "--task-type", "mitigation", width=200)
    assert listed_ids(done.output) == [p for p in AIOPSLAB_ORDER if "-mitigation" in p]
    social = [json.loads(invoke("list", "--app", "social-network", "--json").output)[i]["id"] for i in range(3)]
    assert social == ["k8s_target_port-misconfig-detection-1", "k8s_target_port-misconfig-localization-1",
                      "k8s_target_port-misconfig-analysis-1"]


def test_json_has_one_object_per_problem():
    records = json.loads(invoke("list", "--json").output)
    assert [r["id"] for r in records] == AIOPSLAB_ORDER
    geo = next(r for r in records if r["id"] == "revoke_auth_mongodb-localization-1")
    assert geo == {"id": "revoke_auth_mongodb-localization-1", "app": "hotel-reservation", "task_type": "localization",
                   "family": "revoke_auth", "target": "mongodb-geo", "backend": "twin",
                   "namespace": "test-hotel-reservation",
                   "valid_targets": list(make("revoke_auth_mongodb-localization-1").valid_targets)}
    assert {r["backend"] for r in records if r["app"] == "flower"} == {"aiopslab"}


def test_tables_fit_80_columns_and_keep_every_id():
    listing = invoke("list")
    assert listing.exit_code == 0 and max(len(line) for line in listing.output.splitlines()) <= 80
    assert "".join(listing.output.split()).count("-mitigation-") == 14  # folded ids are still all there
    assert "k8s_target_port-misconfig-detection-1" in listing.output and "astronomy" in listing.output
    shown = invoke("show", "revoke_auth_mongodb-mitigation-1")
    assert max(len(line) for line in shown.output.splitlines()) <= 80
    assert "mixed-workload_type_1.lua" in "".join(shown.output.split())  # folded, not cut


def test_an_unknown_task_type_is_a_clear_error():
    done = invoke("list", "--task-type", "repair")
    assert done.exit_code == 2 and "unknown task type 'repair'" in done.output
