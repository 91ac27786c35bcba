"""Eval test helpers: a scripted Observer that submits one fixed answer at once, and small runs with it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aoi.config import load_config
from aoi.evaluate.runner import run_eval

# Detection problems of one app (one twin to build per seed): two with a fault ("Yes"), one without ("No").
PROBLEMS = ("misconfig_app_hotel_res-detection-1", "noop_detection_hotel_reservation-1",
            "revoke_auth_mongodb-detection-1")


def submit_script(folder: Path, answer: str) -> str:
    """Write a replay script whose Observer submits `answer` on its first decision; return its model spec."""
    decision = {"phase": "submit", "next": "submit", "instruction": "", "context": "", "answer": answer}
    path = folder / f"submit-{answer}.json"
    path.write_text(json.dumps([{"role": "observer", "text": json.dumps(decision)}]))
    return f"replay:{path}"


def small_run(out: Path, answer: str = "Yes", k: int = 2, workers: int = 2, executor: str = "process",
              problems=PROBLEMS):
    """Run the detection problems with a model that always answers `answer`; return the Summary."""
    spec = submit_script(out.parent, answer)
    config = load_config(overrides={"model": spec}, environ={})
    return run_eval([(p, None) for p in problems], k, workers, config, out, executor=executor)


@pytest.fixture
def script(tmp_path):
    """Return a function writing a submit script under tmp_path."""
    return lambda answer: submit_script(tmp_path, answer)
