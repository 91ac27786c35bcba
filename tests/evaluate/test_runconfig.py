"""A resumed eval must use the options it started with, except where files go and how long a request may wait."""

from __future__ import annotations

import pytest

from aoi.config import RunConfig
from aoi.evaluate.runconfig import pin_config


def resolved(**models) -> dict:
    return RunConfig.model_validate({"model": "expert", "models": models}).model_dump(mode="json")


def test_a_resume_may_wait_longer_for_its_model_but_not_ask_another(tmp_path):
    path = tmp_path / "run" / "config.json"
    pin_config(path, resolved(observer={"spec": "local:smollm2", "timeout": 60}))
    pin_config(path, resolved(observer={"spec": "local:smollm2", "timeout": 600, "max_retry_wait": 5}))
    with pytest.raises(ValueError, match="models.observer.spec differ from"):
        pin_config(path, resolved(observer={"spec": "local:tiny", "timeout": 600}))
