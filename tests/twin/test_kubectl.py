"""kubectl's cache: discovery one per process, shared by every served twin; the rest in memory, one per twin
served, removed with it."""

from __future__ import annotations

from aoi import runtime_dirs
from aoi.apps.catalog import load_app
from aoi.env import make
from aoi.twin.testing import Served


def discovery_requests(done) -> list[str]:
    """The discovery GETs a kubectl run at -v=6 logged (/api, /apis and their group-versions)."""
    return [line for line in done.stderr.splitlines() if " GET " in line and ("/api?" in line or "/apis?" in line
                                                                             or "/api/v1?" in line)]


def test_a_later_twin_is_served_from_the_discovery_kubectl_cached_for_an_earlier_one(settled_hotel, tmp_path):
    shared = [load_app("hotel-reservation"), load_app("platform")]
    first = Served(settled_hotel.clone(shared, lazy=True), tmp_path / "first")
    second = Served(settled_hotel.clone(shared, lazy=True), tmp_path / "second")
    try:
        assert first.server.url != second.server.url  # two servers, so two cache folders by kubectl's naming
        first.ok("get pods -n test-hotel-reservation")
        done = second.kubectl("get pods -n test-hotel-reservation -v=6")
        assert done.returncode == 0 and len(done.stdout.splitlines()) == 20
        assert discovery_requests(done) == []
        again = second.kubectl("api-resources -v=6")  # --cached=false: kubectl refetches, as from any cache
        assert again.returncode == 0 and discovery_requests(again)
        assert "pods" in again.stdout.split()
    finally:
        first.close()
        second.close()


def test_kubectls_cache_is_in_memory_and_goes_with_its_twin(settled_hotel, tmp_path):
    served = Served(settled_hotel.clone([load_app("hotel-reservation"), load_app("platform")], lazy=True), tmp_path)
    cache = served._runners["admin"].cache_dir
    try:
        assert {runner.cache_dir for runner in served._runners.values()} == {cache}
        if runtime_dirs.memory_root() is not None:
            assert cache.parent == runtime_dirs.memory_root()
        served.ok("get pods -n test-hotel-reservation")
        assert any((cache / "http").iterdir())  # what kubectl rewrites on every call lands there
    finally:
        served.close()
    assert not cache.exists()


def test_an_episode_leaves_no_kubectl_cache_behind():
    env = make("noop_detection_hotel_reservation-1")
    env.reset()
    first = env.backend.runners["admin"].cache_dir
    env.reset()  # a reset serves a new twin with a cache of its own
    second = env.backend.runners["admin"].cache_dir
    assert first != second and not first.exists() and second.is_dir()
    env.close()
    assert not second.exists()
