"""An eval whose models draw on vLLM starts one server per base (and per adapter, merged into the base) for all its
workers and roles (the server and the merge are faked here; real ones: tests/models/test_vllm_server.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from aoi.config import load_config
from aoi.evaluate import runner
from aoi.models.registry import shared_servers

ADAPTER_SPEC = "local:smollm2+adapter=runs/sft+engine=vllm"


@pytest.fixture
def servers(monkeypatch) -> list:
    """Replace the managed server by one that records (base, dtype, name, state) and serves a made-up URL, and the
    merge by one that records (base, adapter, dtype) and writes nothing."""
    from aoi.models import vllm_server

    started = []

    class Fake:
        def __init__(self, base, dtype, name=None):
            self.record = {"base": base, "dtype": dtype, "name": name, "running": False}
            self.url = f"http://127.0.0.1:{9000 + len(started)}/v1"
            started.append(self.record)

        def __enter__(self):
            self.record["running"] = True
            return self

        def __exit__(self, *exc):
            self.record["running"] = False

    def merge(base, adapter, out, dtype):
        started.append({"merged": (base, adapter, dtype), "into": out})
        return out

    monkeypatch.setattr(vllm_server, "ManagedServer", Fake)
    monkeypatch.setattr(vllm_server, "merge_adapter", merge)
    return started


def test_one_server_per_base_and_dtype_and_one_per_adapter_merged_into_its_base(servers):
    from aoi.models.vllm_model import adapter_name

    specs = ["expert", ADAPTER_SPEC, "local:smollm2+engine=vllm", "local:smollm2+engine=vllm+dtype=fp32",
             "local:tiny+server=http://127.0.0.1:8000/v1", "local:tiny", ADAPTER_SPEC + "+max_new_tokens=64"]
    with shared_servers(specs) as mapped:
        merge, *started = servers
        name = adapter_name(Path("runs/sft"))
        assert merge["merged"] == ("smollm2", "runs/sft", "bfloat16") and merge["into"].name == name
        assert merge["into"].parent.is_dir()  # the merged model's temporary folder lives while the servers do
        assert [(s["base"], s["dtype"], s["name"], s["running"]) for s in started] == [
            (str(merge["into"]), "bfloat16", name, True), ("smollm2", "bfloat16", None, True),
            ("smollm2", "float32", None, True)]
        assert mapped == {"expert": "expert",
                          ADAPTER_SPEC: ADAPTER_SPEC + "+server=http://127.0.0.1:9001/v1",
                          "local:smollm2+engine=vllm": "local:smollm2+engine=vllm+server=http://127.0.0.1:9002/v1",
                          "local:smollm2+engine=vllm+dtype=fp32":
                              "local:smollm2+engine=vllm+dtype=fp32+server=http://127.0.0.1:9003/v1",
                          "local:tiny+server=http://127.0.0.1:8000/v1": "local:tiny+server=http://127.0.0.1:8000/v1",
                          "local:tiny": "local:tiny",
                          ADAPTER_SPEC + "+max_new_tokens=64":
                              ADAPTER_SPEC + "+max_new_tokens=64+server=http://127.0.0.1:9001/v1"}
    assert not any(s.get("running") for s in servers) and not merge["into"].parent.exists()


def test_a_role_override_on_vllm_is_served_to_the_workers_from_the_run_servers(servers, monkeypatch, tmp_path):
    """The learning benchmark's case: the expert team with the Observer on vLLM, two workers."""
    config = load_config(overrides={"model": "expert", "models.observer.spec": ADAPTER_SPEC,
                                    "models.executor.spec": "local:smollm2+engine=vllm"}, environ={})
    given = []

    def drive(session, config, workers, executor):
        given.append((config, workers, [s["running"] for s in servers if "running" in s]))

    monkeypatch.setattr(runner, "_drive", drive)
    runner.run_eval([("noop_detection_hotel_reservation-1", None), ("noop_detection_astronomy_shop-1", None)],
                    k=1, workers=2, config=config, out_dir=tmp_path / "run")
    (seen, workers, running), = given
    assert (workers, running) == (2, [True, True]) and not any(s["running"] for s in servers[1:])
    assert seen.model_for("observer").spec == ADAPTER_SPEC + "+server=http://127.0.0.1:9001/v1"  # merged: its own
    assert seen.model_for("executor").spec == "local:smollm2+engine=vllm+server=http://127.0.0.1:9002/v1"
    assert seen.model_for("probe").spec == "expert" == seen.model.spec
    assert "+server=" not in (tmp_path / "run" / "config.json").read_text()  # the pinned config keeps the run's own


def test_a_run_without_vllm_keeps_its_config(servers):
    config = load_config(overrides={"model": "expert"}, environ={})
    with shared_servers(runner.model_specs(config)) as mapped:
        assert runner._with_specs(config, mapped) is config
    assert servers == []
