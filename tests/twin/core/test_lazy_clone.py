"""Lazy clones: a clone of a twin that never changes again shares its objects and copies each on first use."""

from __future__ import annotations

import orjson

from aoi.twin import build_twin
from aoi.twin.core.tables import Table

NS = "test-hotel-reservation"


def dump(twin) -> bytes:
    """Every object of every resource, in list order, with the store's version."""
    return orjson.dumps([twin.store.rv] + [twin.store.list(res) for res in sorted(twin.store.resources(),
                                                                                     key=lambda r: r.key)])


def test_a_lazy_clone_plays_exactly_as_a_full_copy_and_never_touches_its_source():
    base = build_twin(["hotel-reservation"], seed=0)
    before = dump(base)
    lazy, full = base.clone(lazy=True), base.clone()
    for twin in (lazy, full):
        with twin.lock:
            geo = twin.get("deployments", NS, "geo")
            geo["spec"]["replicas"] = 3  # in place, as controllers and handlers edit what they read
            twin.update("deployments", geo)
            twin.store.delete(twin.resource("configmaps"), NS, twin.list("configmaps", NS)[0]["metadata"]["name"])
        twin.advance(60.0)
    assert dump(lazy) == dump(full)
    assert dump(base) == before
    assert len(lazy.list("pods", NS, lambda p: p["metadata"]["name"].startswith("geo-"))) == 3


def test_reads_hand_out_the_clones_own_objects():
    source = Table()
    source.put(("a", "x"), {"metadata": {"name": "x"}, "spec": {"n": 1}})
    source.put(("a", "y"), {"metadata": {"name": "y"}, "spec": {"n": 2}})
    clone = source.copy(lazy=True)
    assert clone.get(("a", "x")) == source.objects[("a", "x")]
    assert clone.get(("a", "x")) is not source.objects[("a", "x")]
    clone.get(("a", "x"))["spec"]["n"] = 5
    for obj in clone.get_all([("a", "x"), ("a", "y")]):
        obj["spec"]["n"] += 10
    clone.pop(("a", "y"))["spec"]["n"] = 99  # even a removed object is the clone's own
    assert [o["spec"]["n"] for o in source.objects.values()] == [1, 2]
    assert clone.objects[("a", "x")]["spec"]["n"] == 15 and not clone.shared


def test_a_full_copy_of_a_lazy_clone_is_independent_of_both():
    source = Table()
    source.put(("a", "x"), {"metadata": {"name": "x"}, "spec": {"n": 1}})
    lazy = source.copy(lazy=True)
    full = lazy.copy()
    full.get(("a", "x"))["spec"]["n"] = 7
    assert source.objects[("a", "x")]["spec"]["n"] == lazy.get(("a", "x"))["spec"]["n"] == 1


def test_a_clone_records_events_of_its_own_and_folds_repeats_of_the_ones_before_it():
    base = build_twin(["hotel-reservation"], seed=0)
    clone = base.clone()
    seen = dict(base.recorder._seen)
    pod = clone.list("pods", NS)[0]
    with clone.lock:
        first = clone.recorder.record(pod, "Warning", "Probe", "a new event", "kubelet")
        again = clone.recorder.record(pod, "Warning", "Probe", "a new event", "kubelet")
    assert first["metadata"]["name"] == again["metadata"]["name"] and again["count"] == 2
    assert base.recorder._seen == seen and clone.recorder._seen != seen  # the original's stays as it was
    assert clone.recorder.twin is clone
    old_key, (ns, name) = next(iter(seen.items()))  # an event the base recorded before the clone
    assert clone.recorder._seen[old_key] == (ns, name)
