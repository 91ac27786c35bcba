"""The family table: every AIOpsLab fault family as data. The 89 problem ids are built from it, in registry order.

Facts: reference/aiopslab.md sections 3.1-3.3. A row's `targets` are the defaults of its numbered instances; `rule`
says which other components `make(id, target=...)` accepts (aoi.problems.targets.RULES); `params` are keyword
arguments of the aoi.faults injector (`REGISTRY[mechanism].inject(kube, namespace, target, **params)`).
"""

from __future__ import annotations

from aoi.problems.model import AIOPSLAB, Family, Workload, frozen

D, L, A, M = "detection", "localization", "analysis", "mitigation"
HOTEL, SOCIAL, ASTRO, FLOWER = "hotel-reservation", "social-network", "astronomy-shop", "flower"

_HOTEL_LUA = "hotelReservation/wrk2/scripts/hotel-reservation/mixed-workload_type_1.lua"
WORKLOADS = {
    "social": Workload("socialNetwork/wrk2/scripts/social-network/compose-post.lua", "nginx-thrift", 8080,
                       "/wrk2-api/post/compose", rate=10, duration=10),
    "hotel": Workload(_HOTEL_LUA, "frontend", 5000, "", rate=10, duration=10),
    "hotel_short": Workload(_HOTEL_LUA, "frontend", 5000, "", rate=10, duration=5),
    "hotel_burst": Workload(_HOTEL_LUA, "frontend", 5000, "", rate=100, duration=10),
}

# Astronomy Shop flag problems: id stem, flag, variant switched on, AIOpsLab's localization answer (section 3.2).
FLAG_PROBLEMS = (
    ("ad_service_failure", "adFailure", "on", "ad"),
    ("ad_service_high_cpu", "adHighCpu", "on", "ad"),
    ("ad_service_manual_gc", "adManualGc", "on", "ad"),
    ("cart_service_failure", "cartFailure", "on", "cart"),
    ("image_slow_load", "imageSlowLoad", "10sec", "frontend"),
    ("kafka_queue_problems", "kafkaQueueProblems", "on", "kafka"),
    ("loadgenerator_flood_homepage", "loadGeneratorFloodHomepage", "on", "frontend"),
    ("payment_service_failure", "paymentFailure", "100%", "payment"),
    ("payment_service_unreachable", "paymentUnreachable", "on", "checkout"),
    ("product_catalog_service_failure", "productCatalogFailure", "on", "product-catalog"),
    ("recommendation_service_cache_failure", "recommendationCacheFailure", "on", "recommendation"),
)
FLAG_ANSWERS = {flag: answer for _, flag, _, answer in FLAG_PROBLEMS}
FLAG_VARIANTS = {flag: variant for _, flag, variant, _ in FLAG_PROBLEMS}

VIRT_MISCONFIG = ("Virtualization", "Misconfiguration")
VIRT_OPERATION = ("Virtualization", "Operation Error")
APP_MISCONFIG = ("Application", "Misconfiguration")
APP_STORAGE = ("Application", "Network/Storage Issue")


def _chaos(name: str, stem: str, mechanism: str, params: dict, target: str = "user", workload: str = "hotel",
           id_format: str | None = None) -> Family:
    """Return a Chaos Mesh family on HotelReservation (detection and localization only)."""
    return Family(name, id_format or f"{stem}-{{task}}-{{n}}", HOTEL, mechanism, (D, L), (target,), "service",
                  frozen(params), workload=workload)


def _flag(stem: str, flag: str) -> Family:
    """Return one Astronomy Shop flag family; kafka_queue_problems also has a mitigation id."""
    tasks = (D, L, M) if stem == "kafka_queue_problems" else (D, L)
    return Family(stem, f"astronomy_shop_{stem}-{{task}}-{{n}}", ASTRO, "flagd_flag", tasks, (flag,), "flag",
                  parity="pods_normal_guarded")


def _noop(app: str, workload: str | None) -> Family:
    """Return the no-fault detection family of one app (expected answer "No")."""
    return Family("no_op", f"noop_detection_{app.replace('-', '_')}-1", app, "noop", (D,), (None,), "none",
                  workload=workload, detection="No")


FAMILIES: tuple[Family, ...] = (
    Family("k8s_target_port_misconfig", "k8s_target_port-misconfig-{task}-{n}", SOCIAL, "target_port",
           (D, L, A, M), ("user-service", "text-service", "post-storage-service"), "thrift",
           frozen({"port": 9999}), VIRT_MISCONFIG, "target_port", "social"),
    Family("auth_miss_mongodb", "auth_miss_mongodb-{task}-{n}", SOCIAL, "mongo_tls", (D, L, A, M),
           ("url-shorten-mongodb",), "mongodb",
           frozen({"certificate_key_file": "/etc/tls/tls.pem", "ca_file": "/etc/tls/ca.crt"}), APP_MISCONFIG,
           "pods_normal", "social"),
    Family("revoke_auth", "revoke_auth_mongodb-{task}-{n}", HOTEL, "mongo_revoke", (D, L, A, M),
           ("mongodb-geo", "mongodb-rate"), "auth_mongodb", frozen(),
           ("Application", "Authentication Issue"), "pods_normal", "hotel_short"),
    Family("storage_user_unregistered", "user_unregistered_mongodb-{task}-{n}", HOTEL, "mongo_drop_user",
           (D, L, A, M), ("mongodb-geo", "mongodb-rate"), "auth_mongodb", frozen(),
           APP_STORAGE, "pods_normal", "hotel"),
    Family("misconfig_app", "misconfig_app_hotel_res-{task}-{n}", HOTEL, "image", (D, L, A, M), ("geo",),
           "go_service", frozen({"value": "yinfangchen/geo:app3"}), APP_MISCONFIG, "wait_ready", "hotel"),
    Family("scale_pod", "scale_pod_zero_social_net-{task}-{n}", SOCIAL, "scale_zero", (D, L, A, M),
           ("user-service",), "deployment", frozen(), VIRT_OPERATION, "scale", "social"),
    Family("assign_non_existent_node", "assign_to_non_existent_node_social_net-{task}-{n}", SOCIAL, "missing_node",
           (D, L, A, M), ("user-service",), "deployment", frozen({"node": "extra-node"}),
           ("Virtualization", "Dependency Problem"), "assign_node", "social"),
    _chaos("container_kill", "container_kill", "pod_chaos", {"action": "container-kill", "duration": "200s"}, "geo",
           "hotel_burst", "container_kill-{task}"),
    _chaos("pod_failure", "pod_failure_hotel_res", "pod_chaos", {"action": "pod-failure", "duration": "100s"}),
    _chaos("pod_kill", "pod_kill_hotel_res", "pod_chaos", {"action": "pod-failure", "duration": "100s",
                                                           "name": "pod-kill"}),
    _chaos("network_loss", "network_loss_hotel_res", "network_chaos",
           {"action": "loss", "loss": "99", "correlation": "100", "duration": "200s"}),
    _chaos("network_delay", "network_delay_hotel_res", "network_chaos",
           {"action": "delay", "latency": "10s", "jitter": "0ms", "correlation": "100", "duration": "200s"}),
    _noop(HOTEL, "hotel"),
    _noop(SOCIAL, "social"),
    _noop(ASTRO, None),
    *(_flag(stem, flag) for stem, flag, _, _ in FLAG_PROBLEMS),
    Family("redeploy_without_pv", "redeploy_without_PV-{task}-{n}", HOTEL, "redeploy_without_pv", (D, A, M),
           (None,), "none", frozen(), VIRT_OPERATION, "pods_normal", "hotel_short"),
    Family("wrong_bin_usage", "wrong_bin_usage-{task}-{n}", HOTEL, "command", (D, L, A, M), ("profile",),
           "go_service", frozen({"value": ["geo"]}), APP_STORAGE, "wrong_bin", "hotel"),
    Family("flower_node_stop", "flower_node_stop-{task}", FLOWER, "container_stop", (D,), ("supernode-1",),
           "fixed", backend=AIOPSLAB),
    Family("flower_model_misconfig", "flower_model_misconfig-{task}", FLOWER, "model_misconfig", (D,),
           ("clientapp-1",), "fixed", frozen({"file": "/app/.flwr/apps/*/task.py", "line": 24}), backend=AIOPSLAB),
)
