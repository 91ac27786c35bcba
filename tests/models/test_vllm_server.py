"""The real vLLM server (CPU here), started once for the module by `aoi serve-model` on tiny's weights as a folder
vLLM's CPU backend serves (aoi.models.testing.save_tiny_for_vllm: tiny's 16-dimension heads it refuses):
constrained decisions parse, an adapter `aoi train sft` wrote loads by name, changes the log-probs and unloads, or
served merged into its base gives its log-probs under its name, an
adapter of another base is refused before it is sent, an episode runs to the end through `local:...+server=`, and
SIGTERM stops the server with its engine and workers. The errors that need no server run everywhere."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from aoi.models.base import ModelError
from aoi.models.compact import choices_line
from aoi.models.testing import vllm_python
from aoi.models.vllm_launch import VllmError, find_python, start_error

from ..train.conftest import DETECTION, MITIGATION, export

PYTHON, WHY = vllm_python()
needs_vllm = pytest.mark.skipif(PYTHON is None, reason=f"no vLLM python found ({WHY})")
pytestmark = pytest.mark.slow
AOI = str(Path(sys.executable).with_name("aoi"))
ASK = [{"role": "system", "content": "You are the Observer."},
       {"role": "user", "content": "Is there a fault?\n" + choices_line("detection", ["Yes", "No"])}]


def test_a_python_without_vllm_is_refused_saying_make_vllm():
    with pytest.raises(VllmError, match=f"AOI_VLLM_PYTHON={sys.executable} is not a python with vLLM.*make vllm"):
        find_python({"AOI_VLLM_PYTHON": sys.executable})
    done = subprocess.run([AOI, "serve-model", "--base", "smollm2"], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "AOI_VLLM_PYTHON": sys.executable})
    assert done.returncode == 2 and "make vllm" in done.stderr and len(done.stderr.strip().splitlines()) <= 2


def test_a_taken_port_is_refused_before_vllm_starts(tmp_path):
    from aoi.models.testing import save_tiny_for_vllm
    from aoi.models.vllm_server import ManagedServer

    folder = save_tiny_for_vllm(tmp_path / "tiny32")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        server = ManagedServer(base=str(folder), port=port, python=sys.executable, log=tmp_path / "log")
        with pytest.raises(VllmError, match=f"port {port} is taken on 127.0.0.1.*another --port"):
            server.start()
    assert server.process is None  # nothing was launched


def test_a_server_that_does_not_answer_in_time_is_a_timeout_saying_which_option_to_raise():
    from aoi.models.vllm_client import Server, ServerError

    with socket.socket() as silent:  # accepts the connection, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        server = Server(f"http://127.0.0.1:{silent.getsockname()[1]}/v1", timeout=0.5)
        with pytest.raises(ServerError, match="gave no answer to /v1/models within 0.5 s.*raise the timeout "
                                              "\\(model.timeout, or models.<role>.timeout"):
            server.models()


def test_a_failed_start_names_its_cause_and_the_log(tmp_path):
    log = tmp_path / "vllm.log"
    log.write_text("INFO starting\n(Worker pid=6) ERROR 12-06 03:06:10 [cpu_worker.py:83] ValueError: Available memory"
                   " on node 0 (2.1/23.5 GiB) on startup is less than desired CPU memory utilization (0.3, 7 GiB).\n")
    assert str(start_error(log, 1)).startswith("not enough free memory for vLLM (ValueError: Available memory on node")
    log.write_text("RuntimeError: Worker failed with error 'Unsupported CPU attention configuration: head_dim=16'\n")
    assert "heads of 32 to 512 dimensions" in str(start_error(log, 1))
    log.write_text("Traceback (most recent call last):\nOSError: config.json is not valid JSON\nbye\n")
    assert str(start_error(log, 1)) == (f"the vLLM server died during start (exit 1): OSError: config.json is not "
                                        f"valid JSON; log: {log}")


def test_vllm_specs_parse_and_refuse_transformers_parts():
    from aoi.models.registry import load_model, vllm_parts

    assert vllm_parts("local:smollm2+adapter=runs/a b+server=http://127.0.0.1:8000/v1") == {
        "adapter": "runs/a b", "server": "http://127.0.0.1:8000/v1", "base": "smollm2"}
    with pytest.raises(ValueError, match="\\+device and \\+threads set the transformers engine"):
        load_model("local:smollm2+engine=vllm+threads=1")
    with pytest.raises(ValueError, match="unknown part '\\+?engine=tgi'"):
        load_model("local:smollm2+engine=tgi")


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    """tiny's weights as a folder vLLM's CPU backend serves."""
    from aoi.models.testing import save_tiny_for_vllm

    return save_tiny_for_vllm(tmp_path_factory.mktemp("vllm") / "tiny32")


@pytest.fixture(scope="module")
def served(base, tmp_path_factory):
    """`aoi serve-model` on the base (one server for the module): its URL, the CLI process and the log; SIGTERM at
    the end must stop vLLM's whole process group."""
    if PYTHON is None:
        pytest.skip(f"no vLLM python found ({WHY})")
    log = tmp_path_factory.mktemp("vllm-log") / "server.log"
    cli = subprocess.Popen([AOI, "serve-model", "--base", str(base), "--port", "0", "--log", str(log)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ,
                                                                                           "AOI_VLLM_PYTHON": PYTHON})
    url = cli.stdout.readline().strip()
    if not url:
        cli.wait(30)
        pytest.fail(f"aoi serve-model did not start: {cli.stderr.read()}")
    group = _vllm_group(cli.pid)
    yield url, log
    cli.send_signal(signal.SIGTERM)
    assert cli.wait(120) == 0
    assert group and not _alive(group)  # the server, its engine core and its workers are gone


def _vllm_group(parent: int) -> int:
    """Return the process group of the vLLM server the CLI started (its only child)."""
    children = Path(f"/proc/{parent}/task/{parent}/children").read_text().split()
    return os.getpgid(int(children[0]))


def _alive(group: int) -> list[int]:
    """Return the live processes of a process group."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and os.getpgid(int(entry.name)) == group:
                found.append(int(entry.name))
        except OSError:
            pass
    return found


@pytest.fixture(scope="module")
def adapter(base, tmp_path_factory) -> Path:
    """An adapter `aoi train sft` wrote on the base (2 steps)."""
    from aoi.train.sft import SftOptions, train_sft

    data = export(tmp_path_factory.mktemp("data"), [(MITIGATION, "train"), (DETECTION, "test")])
    out = tmp_path_factory.mktemp("sft") / "adapter"
    train_sft(SftOptions(data=data, out=out, base=str(base), max_steps=2, learning_rate=5e-3, eval_rows=1))
    return out


@needs_vllm
def test_constrained_decisions_parse(base, served):
    from aoi.models.registry import load_model
    from aoi.models.schemas import tool_call_schema

    model = load_model(f"local:{base}+server={served[0]}", temperature=1.0)
    for _ in range(4):
        decision = json.loads(model.complete(ASK, role="observer").text)
        assert decision["next"] in ("probe", "submit") and decision.get("answer", "Yes") in ("Yes", "No")
    tools = ["exec_shell", "get_logs", "get_metrics", "get_traces", "read_file", "finish"]
    call = json.loads(model.complete(ASK, role="probe", schema=tool_call_schema(tools)).text)
    assert call["tool"] in tools


@needs_vllm
def test_an_adapter_loads_by_name_changes_the_logprobs_and_unloads(base, served, adapter):
    from aoi.models.bases import load_tokenizer
    from aoi.models.local import render, token_ids
    from aoi.models.vllm_client import Server, prompt_logprobs
    from aoi.models.vllm_server import load_adapter, unload_adapter

    server, tokenizer = Server(served[0]), load_tokenizer(str(base))
    ids = token_ids(tokenizer, render(tokenizer, ASK))
    manifest = load_adapter(server, str(base), "sft", adapter)
    assert "sft" in server.models() and manifest["version"].startswith("sft-")
    plain, tuned = (prompt_logprobs(server, name, ids[:8], ids[8:]) for name in ("tiny32", "sft"))
    assert len(plain) == len(tuned) == len(ids) - 8 and max(abs(a - b) for a, b in zip(plain, tuned)) > 1e-3
    unload_adapter(server, "sft")
    assert "sft" not in server.models()


@needs_vllm
def test_an_adapter_merged_into_its_base_serves_its_logprobs_under_its_name(base, adapter, tmp_path):
    from aoi.echo.policy import completion_logprobs, load_policy
    from aoi.models.bases import load_base, load_tokenizer
    from aoi.models.local import render, token_ids
    from aoi.models.vllm_client import prompt_logprobs
    from aoi.models.vllm_model import VllmModel, adapter_name
    from aoi.models.vllm_server import ManagedServer, merge_adapter

    tokenizer, name = load_tokenizer(str(base)), adapter_name(adapter)
    ids = token_ids(tokenizer, render(tokenizer, ASK))
    tuned, plain = load_policy(str(base), init=adapter)[0], load_base(str(base))[0]
    expected, untuned = (completion_logprobs(m, ids[:8], ids[8:], 1.0).tolist() for m in (tuned, plain))
    merged = merge_adapter(str(base), adapter, tmp_path / name, "float32")
    with ManagedServer(base=str(merged), dtype="float32", name=name, python=PYTHON) as server:
        model = VllmModel(str(base), adapter=adapter, server=server.url)
        assert model.model == name and server.server.models() == [name]  # used as served: nothing loaded at runtime
        served = prompt_logprobs(model.server, name, ids[:8], ids[8:])
    assert max(abs(a - b) for a, b in zip(served, expected)) < 1e-4 < max(abs(a - b) for a, b in zip(served, untuned))


@needs_vllm
def test_a_seeded_draw_of_a_prompt_longer_than_a_prefill_chunk_completes(base, served):
    """vLLM 0.32's CPU engine died on a seeded request whose prompt it prefilled in chunks (2,048 tokens by default);
    the server now prefills a whole prompt at once, and the engine lives on."""
    from aoi.models.vllm_client import Server, completion_ids

    server = Server(served[0])
    prompt = [(7 * i) % 1000 + 10 for i in range(2500)]
    for seed in (1, 2):
        [(ids, reason)] = completion_ids(server, "tiny32", prompt, max_tokens=4, temperature=1.0, seed=seed,
                                         schema=None)
        assert 1 <= len(ids) <= 4 and reason in ("stop", "length")
    assert "tiny32" in server.models()  # still serving


@needs_vllm
def test_an_adapter_of_another_base_is_refused_before_it_is_sent(base, served, tmp_path):
    from aoi.models.bases import base_identity
    from aoi.models.vllm_client import Server
    from aoi.models.vllm_server import load_adapter
    from aoi.train.manifest import write_manifest

    folder = tmp_path / "on-tiny"
    folder.mkdir()
    (folder / "adapter_config.json").write_text(json.dumps({"r": 8}))
    (folder / "adapter_model.safetensors").write_bytes(b"weights")  # the manifest names their digest
    write_manifest(folder, base=base_identity("tiny"), data_sha256="d", split="by_target", role="observer",
                   hyper_parameters={}, metrics={}, kind="sft")
    server = Server(served[0])
    with pytest.raises(ModelError, match=f"adapter {folder} was trained on base 'tiny'.*not on '{base}'"):
        load_adapter(server, str(base), "on-tiny", folder)
    assert "on-tiny" not in server.models()


@needs_vllm
def test_an_episode_runs_to_the_end_through_vllm_and_records_the_adapter(base, served, adapter):
    from aoi.agents.runtime import run_episode
    from aoi.config import load_config
    from aoi.env import make
    from aoi.models.registry import load_model

    model = load_model(f"local:{base}+adapter={adapter}+server={served[0]}", temperature=1.0)
    config = load_config(overrides={"model": "expert", "agent.max_iterations": 3, "agent.probe_budget": 1},
                         environ={})
    env = make("noop_detection_hotel_reservation-1")
    started = time.monotonic()
    try:
        traj = run_episode(env, config, dict.fromkeys(("observer", "probe", "executor"), model))
    finally:
        env.close()
    decided = [s for s in traj.steps if s.role == "observer" and s.messages]
    assert traj.error is None and "Detection Accuracy" in traj.results, time.monotonic() - started
    assert decided and all(s.status != "format_error" for s in decided)
    assert traj.policy.adapter == str(adapter.resolve()) and traj.policy.version.startswith("sft-")
    assert traj.policy.model == "local:tiny32+adapter+vllm"


@needs_vllm
def test_an_eval_runs_its_workers_on_the_server(base, served, tmp_path):
    from aoi.config import load_config
    from aoi.evaluate.runner import run_eval
    from aoi.store.sqlite import TrajectoryStore

    spec = f"local:{base}+server={served[0]}"
    config = load_config(overrides={"model": spec, "agent.max_iterations": 2, "agent.probe_budget": 1}, environ={})
    summary = run_eval([("noop_detection_hotel_reservation-1", None)], 2, 2, config, tmp_path / "run")
    assert summary.pending == 0 and not summary.interrupted
    episodes = TrajectoryStore(tmp_path / "run" / "trajectories.db").query()
    assert len(episodes) == 2 and {t.policy.model for t in episodes} == {"local:tiny32+vllm"}
