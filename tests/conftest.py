"""Shared fixtures: twins served over HTTPS and driven by the real kubectl; golden files and their update flag."""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest

from aoi.apps.catalog import load_app
from aoi.twin import build_twin
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
    """A private HotelReservation twin for tests that change things (a clone: same state as a fresh build; lazy,
    as episodes clone: settled_hotel never changes)."""
    shared = [load_app("hotel-reservation"), load_app("platform")]
    served = Served(settled_hotel.clone(shared, lazy=True), tmp_path)
    yield served
    served.close()


def pytest_addoption(parser):
    """Add --update-golden: golden tests rewrite their files instead of comparing."""
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="rewrite the golden files of golden tests (tests/**/golden/) from the current behaviour")


@pytest.fixture
def golden(request):
    """Return check(path, text): fail with a unified diff when text differs from the golden file at path.

    Under `pytest --update-golden` the file is (re)written instead, so an intended change is one command away.
    """
    update = request.config.getoption("--update-golden")

    def check(path: Path, text: str) -> None:
        """Compare text with the golden file (or write it under --update-golden)."""
        how = f"if the change is intended, run: pytest --update-golden '{request.node.nodeid}'"
        if update:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            return
        if not path.exists():
            pytest.fail(f"golden file {path} is missing; {how}", pytrace=False)
        expected = path.read_text()
        if text != expected:
            diff = difflib.unified_diff(expected.splitlines(keepends=True), text.splitlines(keepends=True),
                                        f"{path} (golden)", f"{path} (now)")
            pytest.fail(f"behaviour differs from {path}:\n{''.join(diff)}\n{how}", pytrace=False)

    return check
