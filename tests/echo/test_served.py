"""Server-backed samplers against the loopback OpenAI-compatible server (aoi.echo.serve), over real HTTP."""

from __future__ import annotations

import socket

import pytest

from aoi.echo.engine import adapter_prefix, train_echo
from aoi.echo.policy import completion_logprobs, load_policy
from aoi.echo.sampler import Sampler, SamplerSpec
from aoi.echo.serve import PolicyServer, Running
from aoi.echo.trainer import Trainer, TrainSpec
from aoi.echo.weights import WeightStore, adapter_files
from aoi.train.common import read_jsonl
from aoi.train.dataset import load_view
from aoi.train.grpo import COLUMNS
from aoi.train.sampling import batch
from aoi.train.served import ServedObserver, ServedPolicy, ServerError

from .conftest import SMALL, echo_options


@pytest.fixture(scope="module")
def server():
    """The tiny policy served on 127.0.0.1 (runtime LoRA loading on, as vLLM under its env flag)."""
    with Running(PolicyServer("tiny")) as running:
        yield running


@pytest.fixture(scope="module")
def rows(dataset) -> list[dict]:
    return load_view(dataset, "rl", "by_target", "train").select_columns(list(COLUMNS)).to_list()


def spec(**more) -> SamplerSpec:
    """The tests' sampler settings: groups of two, 16-token decisions."""
    return SamplerSpec(base="tiny", generations=SMALL["num_generations"], max_new_tokens=16, **more)


def moved_adapter(seed: int) -> dict[str, bytes]:
    """Return a LoRA adapter whose B matrices are not zero (a policy unlike the base)."""
    import torch

    model, _ = load_policy("tiny")
    with torch.random.fork_rng(devices=[]), torch.no_grad():
        torch.manual_seed(seed)
        for name, weight in model.named_parameters():
            if "lora_B" in name:
                weight.normal_(0.0, 0.5)
    return adapter_files(model)


def test_a_server_sampler_draws_what_the_local_sampler_draws(server, rows, tmp_path):
    store = WeightStore(tmp_path / "weights")
    store.publish(0, moved_adapter(seed=1))
    local, served = Sampler(0, spec(), rows, store=store), Sampler(0, spec(server_url=server.url), rows, store=store)
    local.sync(), served.sync()
    ours, theirs = local.draw(0), served.draw(0)
    assert theirs.version == 0 and theirs.sync_s > 0  # the adapter was loaded into the server: weight sync counted
    for a, b in zip(ours.samples, theirs.samples):
        assert (a.prompt_ids, a.completion_ids, a.text, a.reward) == (b.prompt_ids, b.completion_ids, b.text, b.reward)
        assert b.logprobs == pytest.approx(a.logprobs, abs=1e-4)  # at temperature 1 raw and scaled agree
        assert b.logprobs_temperature == 1.0 and a.logprobs_temperature is None


def test_a_groups_draws_in_one_request_are_the_draws_of_as_many_calls(server, rows):
    policy = ServedPolicy(server.url, base="tiny", index=6)
    policy.swap(0, moved_adapter(seed=1))
    one_by_one = ServedObserver(policy, max_new_tokens=16, seed=5, score=False)
    texts = [one_by_one.complete(rows[0]["prompt"], role="observer").text for _ in range(3)]
    batched = ServedObserver(policy, max_new_tokens=16, seed=5, score=False)
    drawn = batched.draw(rows[0]["prompt"], role="observer", n=3)
    assert [c.text for c in drawn] == texts and len(set(texts)) > 1  # seeds 5, 6, 7 either way, and they differ
    assert [d.completion_ids for d in batched.calls] == [d.completion_ids for d in one_by_one.calls]
    assert all(d.logprobs is None for d in batched.calls)  # not scored: no second request
    assert batch(batched.calls)["logprobs"] is None
    policy.close()


def test_weight_sync_loads_the_new_version_and_changes_the_log_probs(server, rows):
    import torch

    policy = ServedPolicy(server.url, base="tiny", index=7)
    prompt = policy.encode(rows[0]["prompt"])
    policy.swap(0, moved_adapter(seed=1))
    [drawn] = policy.generate(prompt, max_tokens=8, temperature=1.0, seed=3, schema=None)
    before = policy.score(prompt, drawn)
    files = moved_adapter(seed=2)
    policy.swap(1, files)
    served = policy.server.models()
    assert "aoi-s7-v1" in served and "aoi-s7-v0" not in served  # the older version was unloaded
    after = policy.score(prompt, drawn)
    assert max(abs(x - y) for x, y in zip(before, after)) > 1e-3
    model, _ = load_policy("tiny")
    from aoi.echo.weights import load_adapter

    load_adapter(model, files)
    with torch.no_grad():  # the server's log-probs are the new policy's own
        expected = completion_logprobs(model, prompt, drawn, temperature=1.0).tolist()
    assert after == pytest.approx(expected, abs=1e-4)


def test_the_importance_weight_compares_like_with_like_at_any_temperature(server, rows, tmp_path):
    store = WeightStore(tmp_path / "weights")
    trainer = Trainer(TrainSpec(temperature=0.7), {"base": "tiny"}, tmp_path / "out", store=store)
    sampler = Sampler(0, spec(server_url=server.url, temperature=0.7), rows, store=store)
    sampler.sync(0)
    update = trainer.update([sampler.draw(1)])  # a fresh group: the behaviour policy is the trained one
    assert update["is_ratio_mean"] == pytest.approx(1.0, abs=1e-3)
    assert update["is_ratio_max"] == pytest.approx(1.0, abs=1e-3)


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_server_errors_say_what_to_fix(server):
    with pytest.raises(ServerError, match="no completions server answers at .* start it"):
        ServedPolicy(f"http://127.0.0.1:{closed_port()}/v1", base="tiny")
    with pytest.raises(ServerError, match="serves \\['tiny'.*not 'smollm2'; pass --sampler-model"):
        ServedPolicy(server.url, base="tiny", model="smollm2")
    policy = ServedPolicy(server.url, base="tiny", index=8)
    server.http.policy.runtime_lora = False  # as vLLM without VLLM_ALLOW_RUNTIME_LORA_UPDATING
    try:
        with pytest.raises(ServerError, match="404.*--enable-lora .*VLLM_ALLOW_RUNTIME_LORA_UPDATING=True"):
            policy.swap(0, moved_adapter(seed=1))
    finally:
        server.http.policy.runtime_lora = True
    with pytest.raises(ServerError, match="400 .*samples plainly.*'top_k': 5"):  # never a silent top-k cut
        policy.server.request("POST", "/v1/completions", {"model": "tiny", "prompt": [1, 2], "top_k": 5})
    policy.model = "aoi-s8-v5"
    with pytest.raises(ServerError, match="does not exist.*not loaded on the server"):
        policy.generate([1, 2, 3], max_tokens=4, temperature=1.0, seed=0, schema=None)


def test_colocated_with_a_server_trains_on_the_servers_draws(server, dataset, small_config, tmp_path):
    options = echo_options(dataset, small_config, tmp_path / "out", mode="colocated", sampler_url=server.url)
    manifest = train_echo(options)
    lines = read_jsonl(options.grpo.out / "metrics.jsonl")
    assert [line["versions"] for line in lines] == [[0], [1]]
    assert all(line["weight_sync_s"] > 0 for line in lines)  # the trainer's adapter went to the server each step
    prefix = adapter_prefix(options.grpo.out)  # the run's adapters left the server with it
    assert not [name for name in server.http.policy.adapters if name.startswith(prefix)]
    assert manifest["sampler_url"] == server.url and manifest["metrics"]["steps"] == 2
