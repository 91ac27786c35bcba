"""What the request engine keeps between request batches follows the cluster: routes the store, effects the flags."""

from __future__ import annotations

import pytest

from aoi.apps.catalog import load_app
from aoi.twin import build_twin
from aoi.twin.behaviour.network import ROUTE_READS, StoreMemo, connect
from aoi.twin.core import operations

HOTEL = "test-hotel-reservation"


@pytest.fixture(scope="module")
def settled():
    return build_twin(["hotel-reservation"])


@pytest.fixture
def twin(settled):
    return settled.clone()


def batch_connect(twin, host: str, port: int):
    """Open host:port the way a request batch does (holding the cluster still)."""
    behaviour = twin.extensions.behaviour
    with behaviour.holding_still():
        return connect(twin, behaviour, HOTEL, host, port)


def test_a_route_kept_from_an_earlier_batch_follows_a_scale_down(twin):
    assert batch_connect(twin, "geo", 8083).ok
    with twin.lock:
        operations.set_replicas(twin, twin.resource("deployments"), twin.get("deployments", HOTEL, "geo"), 0)
        twin.advance(30)
    after = batch_connect(twin, "geo", 8083)
    assert (after.ok, after.error) == (False, "refused")


def test_a_process_that_starts_listening_is_reached_by_the_next_batch(twin):
    behaviour = twin.extensions.behaviour
    pod = batch_connect(twin, "geo", 8083).pod
    container = pod["spec"]["containers"][0]["name"]
    proc = behaviour.process(pod, container)
    proc.listening, proc.retry = False, "mongodb-geo"  # as a boot whose createIndexes failed leaves it ...
    behaviour.process_changes += 1  # ... counted, as every boot is
    assert batch_connect(twin, "geo", 8083).error == "refused"
    assert behaviour.retry(pod, container, twin.clock.now())  # indexes created: it listens, the store unchanged
    assert batch_connect(twin, "geo", 8083).ok


def test_a_clone_routes_to_its_own_pods(twin):
    first = batch_connect(twin, "geo", 8083)
    clone = twin.clone()
    reach = batch_connect(clone, "geo", 8083)
    assert reach.pod is clone.get("pods", HOTEL, first.pod["metadata"]["name"])
    assert reach.pod is not first.pod


def test_flag_effects_follow_each_flag_reload(twin):
    behaviour, shop = twin.extensions.behaviour, load_app("astronomy-shop")
    behaviour.flags[shop.namespace] = {"adHighCpu": "on"}  # as flagd's boot loads them: a new dict each time
    high = behaviour.flag_effect(shop, "ad")
    assert behaviour.flag_effect(shop, "ad") is high
    behaviour.flags[shop.namespace] = {"adHighCpu": "off"}
    assert (high.cpu, behaviour.flag_effect(shop, "ad").cpu) == (0.9, 0.0)


def test_a_store_memo_keeps_its_entries_through_changes_to_resources_it_does_not_read(twin):
    memo = StoreMemo(ROUTE_READS)
    memo.current(twin.store)["route"] = "kept"
    with twin.lock:
        twin.store.create(twin.resource("configmaps"), {"metadata": {"name": "unrelated", "namespace": HOTEL}})
    assert memo.current(twin.store) == {"route": "kept"}
    pod = twin.list("pods", HOTEL)[0]
    with twin.lock:
        twin.update("pods", pod)
    assert memo.current(twin.store) == {}


def test_a_store_memo_forgets_when_its_epoch_moves(twin):
    memo = StoreMemo(ROUTE_READS)
    memo.current(twin.store, epoch=1)["landing"] = "kept"
    assert memo.current(twin.store, epoch=1) == {"landing": "kept"}
    assert memo.current(twin.store, epoch=2) == {}


def test_a_store_memo_forgets_when_the_log_no_longer_reaches_back(twin):
    memo = StoreMemo(ROUTE_READS)
    memo.current(twin.store)["route"] = "kept"
    twin.store.log.budget = 0  # the watch history keeps nothing: what changed is unknown
    with twin.lock:
        twin.store.create(twin.resource("configmaps"), {"metadata": {"name": "unrelated", "namespace": HOTEL}})
    assert memo.current(twin.store) == {}
