"""An eval whose models draw on vLLM starts one server per base for all its workers and roles (the server is faked
here; a real one: tests/models/test_vllm_server.py)."""

from __future__ import annotations

import pytest

from aoi.config import load_config
from aoi.evaluate import runner
from aoi.models.registry import shared_servers

ADAPTER_SPEC = "local:smollm2+adapter=runs/sft+engine=vllm"


@pytest.fixture
def servers(monkeypatch) -> list:
    """Replace the managed server by one that records (base, dtype, state) and serves a made-up URL."""
    from aoi.models import vllm_server

    started = []

    class Fake:
        def __init__(self, base, dtype):
            self.record = {"base": base, "dtype": dtype, "running": False}
            self.url = f"http://127.0.0.1:{9000 + len(started)}/v1"
            started.append(self.record)

        def __enter__(self):
            self.record["running"] = True
            return self

        def __exit__(self, *exc):
            self.record["running"] = False

    monkeypatch.setattr(vllm_server, "ManagedServer", Fake)
    return started


def test_one_server_per_base_and_dtype_for_every_spec_drawn_on_vllm(servers):
    specs = ["expert", ADAPTER_SPEC, "local:smollm2+engine=vllm", "local:smollm2+engine=vllm+dtype=fp32",
             "local:tiny+server=http://127.0.0.1:8000/v1", "local:tiny"]
    with shared_servers(specs) as mapped:
        assert [(s["base"], s["dtype"], s["running"]) for s in servers] == [
            ("smollm2", "bfloat16", True), ("smollm2", "float32", True)]
        assert mapped == {"expert": "expert",
                          ADAPTER_SPEC: ADAPTER_SPEC + "+server=http://127.0.0.1:9000/v1",
                          "local:smollm2+engine=vllm": "local:smollm2+engine=vllm+server=http://127.0.0.1:9000/v1",
                          "local:smollm2+engine=vllm+dtype=fp32":
                              "local:smollm2+engine=vllm+dtype=fp32+server=http://127.0.0.1:9001/v1",
                          "local:tiny+server=http://127.0.0.1:8000/v1": "local:tiny+server=http://127.0.0.1:8000/v1",
                          "local:tiny": "local:tiny"}
    assert not any(s["running"] for s in servers)


def test_a_role_override_on_vllm_is_served_to_the_workers_from_one_server(servers, monkeypatch, tmp_path):
    """The learning benchmark's case: the expert team with the Observer on vLLM, two workers."""
    config = load_config(overrides={"model": "expert", "models.observer.spec": ADAPTER_SPEC,
                                    "models.executor.spec": "local:smollm2+engine=vllm"}, environ={})
    given = []

    def drive(session, config, workers, executor):
        given.append((config, workers, [s["running"] for s in servers]))

    monkeypatch.setattr(runner, "_drive", drive)
    runner.run_eval([("noop_detection_hotel_reservation-1", None), ("noop_detection_astronomy_shop-1", None)],
                    k=1, workers=2, config=config, out_dir=tmp_path / "run")
    (seen, workers, running), = given
    assert (workers, running) == (2, [True]) and not servers[0]["running"]
    url = "+server=http://127.0.0.1:9000/v1"
    assert seen.model_for("observer").spec == ADAPTER_SPEC + url
    assert seen.model_for("executor").spec == "local:smollm2+engine=vllm" + url
    assert seen.model_for("probe").spec == "expert" == seen.model.spec
    assert "+server=" not in (tmp_path / "run" / "config.json").read_text()  # the pinned config keeps the run's own


def test_a_run_without_vllm_keeps_its_config(servers):
    config = load_config(overrides={"model": "expert"}, environ={})
    with shared_servers(runner.model_specs(config)) as mapped:
        assert runner._with_specs(config, mapped) is config
    assert servers == []
