"""Bearer tokens come from `secrets`: never from the seed, new for every twin and clone, and drawing them leaves
the seeded simulation where it was."""

from __future__ import annotations

import random

from aoi.apps.catalog import load_app
from aoi.rbac import IDENTITY_NAMESPACE
from aoi.twin import build_twin
from aoi.twin.testing import Served

NS = "test-hotel-reservation"


def shared():
    return [load_app("hotel-reservation"), load_app("platform")]


def names_and_uids(twin) -> list[tuple[str, str]]:
    return [(p["metadata"]["name"], p["metadata"]["uid"]) for p in twin.list("pods", NS)]


def test_tokens_do_not_follow_from_the_seed(settled_hotel):
    again = build_twin(["hotel-reservation"], seed=0)
    seeded = random.Random(0)
    first_draws = {f"{seeded.getrandbits(256):064x}" for _ in range(3)}  # what the tokens used to be
    assert not first_draws & set(settled_hotel.tokens) and not first_draws & set(again.tokens)
    assert set(again.credentials) == {"admin", "probe", "executor"} and len(set(again.credentials.values())) == 3
    assert not set(again.tokens) & set(settled_hotel.tokens)
    assert names_and_uids(again) == names_and_uids(settled_hotel)  # the simulation still follows the seed


def test_a_clone_gets_new_tokens_and_the_same_simulation(settled_hotel):
    one, two = settled_hotel.clone(shared()), settled_hotel.clone(shared())
    tokens = [set(t.tokens) for t in (settled_hotel, one, two)]
    assert not tokens[0] & tokens[1] and not tokens[0] & tokens[2] and not tokens[1] & tokens[2]
    assert {t.tokens[t.credentials["probe"]] for t in (settled_hotel, one, two)} == \
        {settled_hotel.tokens[settled_hotel.credentials["probe"]]}  # same identities under new tokens
    assert one.ids.rng.getstate() == settled_hotel.ids.rng.getstate() == two.ids.rng.getstate()


def test_the_originals_token_is_refused_by_a_served_clone(settled_hotel, hotel):
    stolen = settled_hotel.credentials["admin"]
    done = hotel.kubectl(["--token", stolen, "get", "pods", "-n", NS])
    assert done.returncode == 1 and "You must be logged in to the server" in done.stderr
    assert "NAME" in hotel.ok(f"get pods -n {NS}")  # the clone's own kubeconfig works


def test_kubectl_create_token_is_random_and_leaves_the_seeded_ids_alone(settled_hotel, hotel, tmp_path):
    untouched = Served(settled_hotel.clone(shared()), tmp_path / "other")
    try:
        first, second = (hotel.ok(f"create token probe -n {IDENTITY_NAMESPACE}").strip() for _ in range(2))
        assert first != second and len(first) == 64
        assert "NAME" in hotel.kubectl(["--token", first, "get", "pods", "-n", NS]).stdout
        for served in (hotel, untouched):
            served.ok(f"create configmap after-tokens -n {NS} --from-literal=a=b")
        uids = [s.twin.get("configmaps", NS, "after-tokens")["metadata"]["uid"] for s in (hotel, untouched)]
        assert uids[0] == uids[1]
    finally:
        untouched.close()
