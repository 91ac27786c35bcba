"""Shared fixtures: twins served over HTTPS and driven by the real kubectl; golden files and their update flag; the
order that starts the longest test files first."""

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


# Test files that take a minute or more on two cores, longest first (from `--durations`). Under -n the workers take
# whole files in collection order (pyproject's addopts: --dist loadfile --no-loadscope-reorder), so these start first:
# none is left to run alone at the end while the other worker idles. The learning benchmark keeps one worker for
# minutes while the other takes the two vLLM files in turn: never two vLLM servers at once. A slow file missing here
# costs only balance, never a result.
LONGEST_FIRST = (
    "tests/benchmarks/test_learning.py",  # the tiny learning benchmark, every phase, killed and resumed
    "tests/models/test_vllm_server.py",  # a vLLM server (aoi serve-model) and an SFT adapter for the module
    "tests/echo/test_vllm.py",  # a vLLM server for the module
    "tests/train/test_sft_positions.py",  # SFT runs by epochs and resumed
    "tests/echo/test_swarm.py",  # a two-node Ray cluster
    "tests/train/test_sft.py",
    "tests/train/test_grpo.py",
    "tests/echo/test_colocated.py",
    "tests/echo/test_served.py",
    "tests/train/test_evolver.py",
    "tests/env/test_determinism.py",
    "tests/test_cli_errors.py",
    "tests/test_terminal.py",
    "tests/env/test_scenario_env.py",
    "tests/test_cli.py",
    "tests/models/test_expert.py",
)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Move the files of LONGEST_FIRST to the front, in that order (the rest keep pytest's order)."""
    missing = [path for path in LONGEST_FIRST if not (config.rootpath / path).is_file()]
    if missing:
        raise pytest.UsageError(f"tests/conftest.py's LONGEST_FIRST names {', '.join(missing)}, which is not there: "
                                "give the file's new path or drop it from the list")
    rank = {path: i for i, path in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.partition("::")[0], len(rank)))


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
