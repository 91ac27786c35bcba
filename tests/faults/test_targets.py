"""Target validation: each injector lists what the cluster offers and rejects anything else by name."""

from __future__ import annotations

import pytest

from aoi.faults import REGISTRY

HOTEL, SOCIAL, SHOP = "test-hotel-reservation", "test-social-network", "astronomy-shop"


@pytest.mark.parametrize("mechanism, namespace, valid", [
    ("target_port", SOCIAL, "user-service"), ("scale_zero", SOCIAL, "user-service"),
    ("missing_node", SOCIAL, "user-service"), ("image", HOTEL, "geo"), ("command", HOTEL, "profile"),
    ("mongo_revoke", HOTEL, "mongodb-geo"), ("mongo_drop_user", HOTEL, "mongodb-rate"),
    ("mongo_tls", SOCIAL, "url-shorten-mongodb"), ("flagd_flag", SHOP, "paymentFailure"),
    ("redeploy_without_pv", HOTEL, HOTEL), ("pod_chaos", HOTEL, "user"), ("network_chaos", HOTEL, "user")])
def test_unknown_targets_are_rejected_with_the_valid_ones(all_apps, mechanism, namespace, valid):
    injector = REGISTRY[mechanism]
    assert valid in injector.targets(all_apps.kube, namespace)
    with pytest.raises(ValueError, match=f"{valid}") as err:
        injector.inject(all_apps.kube, namespace, "no-such-thing")
    assert "no-such-thing" in str(err.value) and mechanism in str(err.value)
    if mechanism not in ("pod_chaos", "network_chaos", "redeploy_without_pv"):  # those recover by object name
        with pytest.raises(ValueError, match=f"{valid}"):
            injector.recover(all_apps.kube, namespace, "no-such-thing")


def test_mongo_faults_only_target_stores_with_fault_scripts(all_apps):
    assert REGISTRY["mongo_revoke"].targets(all_apps.kube, HOTEL) == ["mongodb-geo", "mongodb-rate"]
    assert REGISTRY["mongo_revoke"].targets(all_apps.kube, SOCIAL) == []
    with pytest.raises(ValueError, match="valid targets: mongodb-geo, mongodb-rate"):
        REGISTRY["mongo_revoke"].inject(all_apps.kube, HOTEL, "mongodb-profile")


def test_an_empty_namespace_says_the_app_may_be_missing(all_apps):
    with pytest.raises(ValueError, match="is the app deployed in this namespace"):
        REGISTRY["scale_zero"].inject(all_apps.kube, "nowhere", "user-service")


def test_chaos_actions_are_checked(all_apps):
    with pytest.raises(ValueError, match="unknown action 'pod-explode'; choose one of: pod-failure"):
        REGISTRY["pod_chaos"].inject(all_apps.kube, HOTEL, "user", action="pod-explode")
    with pytest.raises(ValueError, match="choose one of: loss, delay"):
        REGISTRY["network_chaos"].inject(all_apps.kube, HOTEL, "user", action="pod-failure")
