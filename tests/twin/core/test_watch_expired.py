"""The watch history is bounded by bytes; a watch from a version it no longer holds gets 410 Expired."""

from __future__ import annotations

import json

import pytest
from kubernetes import config

from aoi.twin import build_twin
from aoi.twin.core import operations
from aoi.twin.core.changelog import ENTRY_OVERHEAD, ChangeLog
from aoi.twin.testing import Served


@pytest.fixture
def twin():
    return build_twin([], seed=0)


def make_configmap(twin, name: str, size: int) -> None:
    with twin.lock:
        operations.create(twin, twin.resource("configmaps"), "default", {
            "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"blob": "x" * size}})


def churn(twin, rounds: int, size: int = 1000) -> None:
    """Rewrite ConfigMap `churn` `rounds` times with `size` bytes of data."""
    with twin.lock:
        if twin.get("configmaps", "default", "churn") is None:
            make_configmap(twin, "churn", size)
        for i in range(rounds):
            cm = twin.get("configmaps", "default", "churn")
            cm["data"] = {"blob": str(i) * size}
            twin.update("configmaps", cm)


def watch(served, **query) -> list[dict]:
    """Open a watch on default's ConfigMaps through the Python client's plumbing; return the events it streamed."""
    api = config.new_client_from_config(config_file=str(served.kubeconfigs["admin"]))
    args = api.param_serialize("GET", "/api/v1/namespaces/default/configmaps",
                               query_params=[("watch", "true"), *query.items()], auth_settings=["BearerToken"])
    done = api.call_api(*args)
    assert done.status == 200
    return [json.loads(line) for line in done.read().splitlines() if line.strip()]


def test_a_watch_from_a_compacted_version_is_410_expired(twin, tmp_path):
    twin.store.log.budget = 20_000
    start = twin.store.rv
    churn(twin, 50)
    oldest = twin.store.oldest_rv()
    assert oldest > start
    served = Served(twin, tmp_path)
    try:
        events = watch(served, resourceVersion=str(start), timeoutSeconds="5")
        replay = watch(served, resourceVersion=str(twin.store.rv - 2), timeoutSeconds="1")
    finally:
        served.close()
    assert events == [{"type": "ERROR", "object": {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "reason": "Expired",
        "message": f"too old resource version: {start} ({oldest})", "code": 410}}]
    assert [e["type"] for e in replay] == ["MODIFIED", "MODIFIED"]  # a version still held replays as before


def test_history_stays_within_its_byte_budget_under_churn(twin):
    budget = 64 * 1024
    twin.store.log.budget = budget
    start = twin.store.rv
    for round_ in range(30):
        make_configmap(twin, f"big-{round_}", 5000)
        churn(twin, 10, size=100 * round_)
        with twin.lock:
            operations.delete(twin, twin.resource("configmaps"), "default", f"big-{round_}")
        log = twin.store.log
        assert 0 < log.bytes <= budget
        assert log.bytes == sum(len(c.data) + ENTRY_OVERHEAD for c in log.since(0))  # the count is honest
    assert twin.store.oldest_rv() > start + 200  # most of the 360 changes went to make room


def test_a_clone_starts_with_an_empty_history_of_the_same_budget(twin):
    twin.store.log.budget = 123_456
    churn(twin, 3)
    copy = twin.clone()
    assert (copy.store.log.budget, len(copy.store.log), copy.store.log.bytes) == (123_456, 0, 0)
    assert copy.store.oldest_rv() == copy.store.rv and len(twin.store.log) > 0


def test_a_budget_below_zero_is_refused():
    with pytest.raises(ValueError, match="0 or more"):
        ChangeLog(budget=-1)
    with pytest.raises(ValueError, match="whole number of bytes"):
        ChangeLog(budget="64Mi")


def test_lowering_the_budget_drops_old_changes_at_once(twin):
    churn(twin, 40)
    kept = len(twin.store.log)
    twin.store.log.budget = 10_000
    assert twin.store.log.bytes <= 10_000 and 0 < len(twin.store.log) < kept
