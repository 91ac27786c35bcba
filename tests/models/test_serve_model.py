"""`aoi serve-model` hands vLLM the flags its options name (the server itself: tests/models/test_vllm_server.py)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from aoi.cli import app
from aoi.models.base import ModelError


@pytest.fixture
def started(monkeypatch) -> list:
    """Replace the managed server by one that records its spec and fails to start (so the command returns)."""
    from aoi.models import vllm_server
    from aoi.models.vllm_launch import ServerSpec

    specs = []

    class Recorder:
        def __init__(self, **fields):
            self.spec = ServerSpec(**fields)
            specs.append(self.spec)

        def start(self):
            raise ModelError("not started in this test")

        def stop(self):
            pass

    monkeypatch.setattr(vllm_server, "ManagedServer", Recorder)
    return specs


@pytest.mark.parametrize(("flags", "extra"), [([], []), (["--for-samplers"], ["--max-num-seqs", "1"])])
def test_for_samplers_serves_one_sequence_per_step(started, flags, extra):
    result = CliRunner().invoke(app, ["serve-model", "--base", "smollm2", "--port", "0", *flags])
    assert result.exit_code == 2 and "not started in this test" in result.output
    assert started[0].extra == extra
