"""Echo's tests share Learning I's tiny teacher dataset and a small GRPO config for the tiny model."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from aoi.echo.run import EchoOptions
from aoi.train.grpo import GrpoOptions

from ..train.conftest import DETECTION, MITIGATION, export

# Groups of two samples; a short completion cap keeps a tiny model's decisions fast.
SMALL = {"num_generations": 2, "per_device_train_batch_size": 2, "max_completion_length": 16,
         "learning_rate": 1e-3}


@pytest.fixture(scope="session")
def dataset(tmp_path_factory) -> Path:
    """The expert's mitigation episode for training, the detection one held out."""
    return export(tmp_path_factory.mktemp("data"), [(MITIGATION, "train"), (DETECTION, "test")])


def config_file(folder: Path, groups: int) -> Path:
    """Write a GRPO config with SMALL settings and `groups` groups per step; return its path."""
    path = folder / f"grpo-{groups}.yaml"
    path.write_text(yaml.safe_dump({"grpo": {**SMALL, "per_device_train_batch_size": 2 * groups}}))
    return path


@pytest.fixture(scope="session")
def small_config(tmp_path_factory) -> Path:
    """A GRPO config file with SMALL settings: one group of two samples per step."""
    return config_file(tmp_path_factory.mktemp("config"), groups=1)


def echo_options(dataset: Path, config: Path, out: Path, **echo) -> EchoOptions:
    """Return Echo options for a run on the tiny model."""
    steps = echo.pop("max_steps", 2)
    resume = echo.pop("resume", False)
    grpo = GrpoOptions(data=dataset, out=out, max_steps=steps, config=config, base="tiny", resume=resume)
    return EchoOptions(grpo=grpo, **echo)
