"""The family table: every AIOpsLab fault family as data. The 89 problem ids are built from it, in registry order.

Facts: reference/aiopslab.md sections 3.1-3.3. A row's `targets` are the defaults of its numbered instances; `rule`
says which other components `make(id, target=...)` accepts (aoi.problems.targets.RULES); `params` are keyword
arguments of the aoi.faults injector (`REGISTRY[mechanism].inject(kube, namespace, target, **params)`).
"""

from __future__ import annotations

from aoi.problems.model import AIOPSLAB, Family, Workload, frozen
from aoi.tasks import TaskType

D, L, A, M = TaskType
HOTEL, SOCIAL, ASTRO, FLOWER = "hotel-reservation", "social-network", "astronomy-shop", "flower"

_HOTEL_LUA = "hotelReservation/wrk2/scripts/hotel-reservation/mixed-workload_type_1.lua"
WORKLOADS = {
    "social": Workload(script="socialNetwork/wrk2/scripts/social-network/compose-post.lua", service="nginx-thrift",
                       port=8080, path="/wrk2-api/post/compose", rate=10, duration=10),
    "hotel": Workload(script=_HOTEL_LUA, service="frontend", port=5000, path="", rate=10, duration=10),
    "hotel_short": Workload(script=_HOTEL_LUA, service="frontend", port=5000, path="", rate=10, duration=5),
    "hotel_burst": Workload(script=_HOTEL_LUA, service="frontend", port=5000, path="", rate=100, duration=10),
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
    return Family(name=name, id_format=id_format or f"{stem}-{{task}}-{{n}}", app=HOTEL, mechanism=mechanism,
                  tasks=(D, L), targets=(target,), rule="service", params=frozen(params), workload=workload)


def _flag(stem: str, flag: str) -> Family:
    """Return one Astronomy Shop flag family; kafka_queue_problems also has a mitigation id."""
    tasks = (D, L, M) if stem == "kafka_queue_problems" else (D, L)
    return Family(name=stem, id_format=f"astronomy_shop_{stem}-{{task}}-{{n}}", app=ASTRO, mechanism="flagd_flag",
                  tasks=tasks, targets=(flag,), rule="flag", parity="pods_normal_guarded")


def _noop(app: str, workload: str | None) -> Family:
    """Return the no-fault detection family of one app (expected answer "No")."""
    return Family(name="no_op", id_format=f"noop_detection_{app.replace('-', '_')}-1", app=app, mechanism="noop",
                  tasks=(D,), targets=(None,), rule="none", workload=workload, detection="No")


FAMILIES: tuple[Family, ...] = (
    Family(name="k8s_target_port_misconfig", id_format="k8s_target_port-misconfig-{task}-{n}", app=SOCIAL,
           mechanism="target_port", tasks=(D, L, A, M),
           targets=("user-service", "text-service", "post-storage-service"), rule="thrift",
           params=frozen({"port": 9999}), analysis=VIRT_MISCONFIG, parity="target_port", workload="social"),
    Family(name="auth_miss_mongodb", id_format="auth_miss_mongodb-{task}-{n}", app=SOCIAL, mechanism="mongo_tls",
           tasks=(D, L, A, M), targets=("url-shorten-mongodb",), rule="mongodb",
           params=frozen({"certificate_key_file": "/etc/tls/tls.pem", "ca_file": "/etc/tls/ca.crt"}),
           analysis=APP_MISCONFIG, parity="pods_normal", workload="social"),
    Family(name="revoke_auth", id_format="revoke_auth_mongodb-{task}-{n}", app=HOTEL, mechanism="mongo_revoke",
           tasks=(D, L, A, M), targets=("mongodb-geo", "mongodb-rate"), rule="auth_mongodb", params=frozen(),
           analysis=("Application", "Authentication Issue"), parity="pods_normal", workload="hotel_short"),
    Family(name="storage_user_unregistered", id_format="user_unregistered_mongodb-{task}-{n}", app=HOTEL,
           mechanism="mongo_drop_user", tasks=(D, L, A, M), targets=("mongodb-geo", "mongodb-rate"),
           rule="auth_mongodb", params=frozen(), analysis=APP_STORAGE, parity="pods_normal", workload="hotel"),
    Family(name="misconfig_app", id_format="misconfig_app_hotel_res-{task}-{n}", app=HOTEL, mechanism="image",
           tasks=(D, L, A, M), targets=("geo",), rule="go_service", params=frozen({"value": "yinfangchen/geo:app3"}),
           analysis=APP_MISCONFIG, parity="wait_ready", workload="hotel"),
    Family(name="scale_pod", id_format="scale_pod_zero_social_net-{task}-{n}", app=SOCIAL, mechanism="scale_zero",
           tasks=(D, L, A, M), targets=("user-service",), rule="deployment", params=frozen(),
           analysis=VIRT_OPERATION, parity="scale", workload="social"),
    Family(name="assign_non_existent_node", id_format="assign_to_non_existent_node_social_net-{task}-{n}",
           app=SOCIAL, mechanism="missing_node", tasks=(D, L, A, M), targets=("user-service",), rule="deployment",
           params=frozen({"node": "extra-node"}), analysis=("Virtualization", "Dependency Problem"),
           parity="assign_node", workload="social"),
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
    Family(name="redeploy_without_pv", id_format="redeploy_without_PV-{task}-{n}", app=HOTEL,
           mechanism="redeploy_without_pv", tasks=(D, A, M), targets=(None,), rule="none", params=frozen(),
           analysis=VIRT_OPERATION, parity="pods_normal", workload="hotel_short"),
    Family(name="wrong_bin_usage", id_format="wrong_bin_usage-{task}-{n}", app=HOTEL, mechanism="command",
           tasks=(D, L, A, M), targets=("profile",), rule="go_service", params=frozen({"value": ["geo"]}),
           analysis=APP_STORAGE, parity="wrong_bin", workload="hotel"),
    Family(name="flower_node_stop", id_format="flower_node_stop-{task}", app=FLOWER, mechanism="container_stop",
           tasks=(D,), targets=("supernode-1",), rule="fixed", backend=AIOPSLAB),
    Family(name="flower_model_misconfig", id_format="flower_model_misconfig-{task}", app=FLOWER,
           mechanism="model_misconfig", tasks=(D,), targets=("clientapp-1",), rule="fixed",
           params=frozen({"file": "/app/.flwr/apps/*/task.py", "line": 24}), backend=AIOPSLAB),
)
