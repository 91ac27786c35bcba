"""Viewer fixtures: real runs made by `aoi eval`'s runner (the expert, and a replay model that answers "No"), the
viewer serving them, and headless Chromium (tests that need it skip, saying why, when no binary is installed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.view.browser import Browser, find_chromium

from aoi.config import load_config
from aoi.evaluate.runner import run_eval
from aoi.view.server import serve

MITIGATION = "k8s_target_port-misconfig-mitigation-1"  # the Executor patches a Service: approvals, long outputs
DETECTION = ("revoke_auth_mongodb-detection-1", "noop_detection_hotel_reservation-1")


def no_script(folder: Path) -> str:
    """Write a replay script whose Observer submits "No" at once; return its model spec (fails revoke_auth)."""
    decision = {"phase": "submit", "next": "submit", "instruction": "", "context": "", "answer": "No"}
    path = folder / "submit-no.json"
    path.write_text(json.dumps([{"role": "observer", "text": json.dumps(decision)}]))
    return f"replay:{path}"


def evaluate(out: Path, spec: str, problems) -> Path:
    """Run each problem once with the model `spec` into `out` (as `aoi eval --out`); return out."""
    config = load_config(overrides={"model": spec}, environ={})
    run_eval([(p, None) for p in problems], 1, 1, config, out, console=None)
    return out


@pytest.fixture(scope="session")
def runs(tmp_path_factory) -> Path:
    """A folder of two eval runs: `expert` (3 problems, all solved) and `replay-no` (2 detection, 1 failed)."""
    root = tmp_path_factory.mktemp("runs")
    evaluate(root / "expert", "expert", (MITIGATION, *DETECTION))
    evaluate(root / "replay-no", no_script(root), DETECTION)
    return root


@pytest.fixture(scope="session")
def more(tmp_path_factory) -> Path:
    """A second folder of runs, for the runs tests make themselves (the `runs` folder stays as it was made)."""
    return tmp_path_factory.mktemp("more")


@pytest.fixture(scope="session")
def viewer(runs, more):
    """The viewer serving both folders (as `aoi view RUNS MORE`), in a thread of this process."""
    server = serve([runs, more]).start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="session")
def chromium_binary() -> str:
    """The Chromium binary, or a skip saying how to get one."""
    found = find_chromium()
    if found is None:
        pytest.skip("no chromium binary on the PATH; install Debian's package (apt-get install -y chromium), as "
                    ".ci/run does, to run the browser tests")
    return found


@pytest.fixture(scope="session")
def browser(chromium_binary, tmp_path_factory):
    """One headless Chromium for the session's browser tests."""
    opened = Browser(chromium_binary, tmp_path_factory.mktemp("chromium-profile"))
    yield opened
    opened.close()


@pytest.fixture
def shots(tmp_path) -> Path:
    """The test's folder for screenshots."""
    folder = tmp_path / "screenshots"
    folder.mkdir()
    return folder
