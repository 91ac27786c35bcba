"""Shared fixtures: twins served over HTTPS and driven by the real kubectl."""

from __future__ import annotations

import pytest

from aoi.twin import build_twin
from aoi.apps.catalog import load_app
from aoi.twin.testing import Served


@pytest.fixture(scope="session")
def cluster(tmp_path_factory) -> Served:
    """All three apps, shared by tests that only read."""
    served = Served(build_twin(seed=0), tmp_path_factory.mktemp("cluster"))
    yield served
    served.close()


@pytest.fixture(scope="session")
def settled_hotel():
    """A HotelReservation twin built once per session, never served: `hotel` hands out clones of it."""
    return build_twin(["hotel-reservation"], seed=0)


@pytest.fixture
def hotel(settled_hotel, tmp_path) -> Served:
    """A private HotelReservation twin for tests that change things (a clone: same state as a fresh build)."""
    shared = [load_app("hotel-reservation"), load_app("platform")]
    served = Served(settled_hotel.clone(shared), tmp_path)
    yield served
    served.close()
