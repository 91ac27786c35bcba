"""Echo's samplers and GRPO's groups on the real vLLM server (CPU here), one for the module: tiny's weights as a
folder vLLM's CPU backend serves (aoi.models.testing.save_tiny_for_vllm), in float32 as the trainer holds them.

Tolerance: the server's prompt_logprobs and the trainer's own log-probs (aoi.echo.policy.completion_logprobs at
temperature 1) of the same tokens differed by at most 9.5e-7 here (fp32 on both sides, base and adapter), so 1e-4
leaves room for other kernels and thread counts while any real mismatch (a temperature applied, an off-by-one
row, the masked log-probs: up to 11 nats) fails. A bf16 server against the fp32 trainer was not measured.
While each run trains, a thread lists /v1/models every 50 ms: every adapter version the run drew with must show
up there, and the previous one must go. Skips only where no python with vLLM is found (`make vllm`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import yaml

from aoi.models.testing import vllm_python

from .conftest import SMALL

PYTHON, WHY = vllm_python()
pytestmark = [pytest.mark.slow, pytest.mark.skipif(PYTHON is None, reason=f"no vLLM python found ({WHY})")]
AOI = str(Path(sys.executable).with_name("aoi"))
TOLERANCE = 1e-4  # nats per token between the fp32 server and the fp32 trainer (measured: at most 9.5e-7)


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    from aoi.models.testing import save_tiny_for_vllm

    return save_tiny_for_vllm(tmp_path_factory.mktemp("vllm") / "tiny32")


@pytest.fixture(scope="module")
def server(base, tmp_path_factory):
    """One fp32 vLLM server on the base for the module (a tenth of RAM reserved: tiny needs little), with the flags
    the managed sampler server gets."""
    from aoi.models.vllm_launch import SCORING_FLAGS
    from aoi.models.vllm_server import ManagedServer

    log = tmp_path_factory.mktemp("vllm-log") / "server.log"
    with ManagedServer(base=str(base), dtype="float32", memory=0.1, kv_cache_gib=1, log=log, python=PYTHON,
                       extra=list(SCORING_FLAGS)) as s:
        yield s


@pytest.fixture(scope="module")
def config(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("config") / "grpo.yaml"
    path.write_text(yaml.safe_dump({"grpo": SMALL}))
    return path


class Listing:
    """/v1/models, listed every 50 ms while a run trains: the snapshots in order."""

    def __init__(self, url: str):
        self.url, self.snapshots, self.done = url, [], threading.Event()
        self.thread = threading.Thread(target=self._poll, daemon=True)

    def _poll(self) -> None:
        while not self.done.is_set():
            with urllib.request.urlopen(f"{self.url}/models", timeout=10) as answer:
                self.snapshots.append({m["id"] for m in json.load(answer)["data"]})
            time.sleep(0.05)

    def __enter__(self) -> Listing:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.done.set()
        self.thread.join()

    def first(self, name: str) -> int:
        """Return the index of the first snapshot listing `name` (fails when none does)."""
        return next(i for i, names in enumerate(self.snapshots) if name in names)

    def unloaded_after(self, old: str, new: str) -> bool:
        """Tell whether `old` was gone from a snapshot that listed `new`, and never came back."""
        start = self.first(new)
        gone = [i for i in range(start, len(self.snapshots)) if old not in self.snapshots[i]]
        return bool(gone) and all(old not in names for names in self.snapshots[gone[0]:])


def ours(listing: Listing, prefix: str) -> set[str]:
    """Return every adapter name of a run seen on the server."""
    return {name for names in listing.snapshots for name in names if name.startswith(prefix)}


def randomize_adapter(model, seed: int) -> None:
    """Give the policy's LoRA B matrices seeded random weights (a fresh adapter is the base: B starts at 0)."""
    import torch

    with torch.no_grad():
        for name, weight in model.named_parameters():
            if "lora_B" in name:
                weight.normal_(0.0, 0.5, generator=torch.Generator().manual_seed(seed))


def test_prompt_logprobs_match_the_trainers_logprobs_for_the_base_and_an_adapter(server, base, dataset):
    import torch

    from aoi.echo.policy import completion_logprobs, load_policy
    from aoi.echo.weights import adapter_files
    from aoi.train.dataset import load_view
    from aoi.train.served import ServedObserver, ServedPolicy

    prompt = load_view(dataset, "rl", "by_target", "train")[0]["prompt"]
    model, _ = load_policy(str(base))
    policy = ServedPolicy(server.url, base=str(base), index=9)
    for seed in (1, 2):
        randomize_adapter(model, seed)
        policy.swap(seed, adapter_files(model))
        observer = ServedObserver(policy, max_new_tokens=64, seed=seed)
        decision = json.loads(observer.complete(prompt, role="observer").text)  # the structured output parses
        assert decision["next"] in ("probe", "execute", "submit")
        drawn = observer.calls[-1]
        with torch.no_grad():
            own = completion_logprobs(model, drawn.prompt_ids, drawn.completion_ids, 1.0).tolist()
        assert len(drawn.logprobs) == len(own) > 0
        assert max(abs(a - b) for a, b in zip(own, drawn.logprobs)) < TOLERANCE
    assert "aoi-s9-v2" in policy.server.models() and "aoi-s9-v1" not in policy.server.models()
    policy.close()
    assert "aoi-s9-v2" not in server.server.models()


def test_a_groups_draws_in_one_request_are_the_draws_of_as_many_seeded_requests(server, base, dataset):
    """GRPO's served rollout draws a group with n=G in one request: vLLM seeds its i-th child `seed + i`, which is
    what G calls of `complete` would have sent."""
    from aoi.echo.policy import load_policy
    from aoi.echo.weights import adapter_files
    from aoi.train.dataset import load_view
    from aoi.train.served import ServedObserver, ServedPolicy

    prompt = load_view(dataset, "rl", "by_target", "train")[0]["prompt"]
    model, _ = load_policy(str(base))
    randomize_adapter(model, 4)
    policy = ServedPolicy(server.url, base=str(base), index=5)
    policy.swap(1, adapter_files(model))
    one_by_one = ServedObserver(policy, max_new_tokens=48, seed=11, score=False)
    texts = [one_by_one.complete(prompt, role="observer").text for _ in range(3)]
    batched = ServedObserver(policy, max_new_tokens=48, seed=11, score=False)
    assert [c.text for c in batched.draw(prompt, role="observer", n=3)] == texts and len(set(texts)) > 1
    policy.close()


def test_two_samplers_draw_and_score_at_once_under_their_adapters(server, base, dataset):
    """Async Echo with two samplers on one server: each draws and scores while the other does (vLLM 0.32 without
    SCORING_FLAGS: the engine dies on the first scoring request batched beside another under an adapter)."""
    import torch

    from aoi.echo.policy import completion_logprobs, load_policy
    from aoi.echo.weights import adapter_files
    from aoi.train.dataset import load_view
    from aoi.train.served import ServedObserver, ServedPolicy

    prompt = load_view(dataset, "rl", "by_target", "train")[0]["prompt"]
    model, _ = load_policy(str(base))
    randomize_adapter(model, 3)
    policies = [ServedPolicy(server.url, base=str(base), index=index) for index in (7, 8)]
    for policy in policies:
        policy.swap(1, adapter_files(model))
    observers = [ServedObserver(policy, max_new_tokens=48, seed=index) for index, policy in enumerate(policies)]
    with ThreadPoolExecutor(2) as pool:  # an error in either raises here
        list(pool.map(lambda observer: [observer.complete(prompt, role="observer") for _ in range(3)], observers))
    for observer in observers:
        assert len(observer.calls) == 3
        for drawn in observer.calls:
            with torch.no_grad():
                own = completion_logprobs(model, drawn.prompt_ids, drawn.completion_ids, 1.0).tolist()
            assert max(abs(a - b) for a, b in zip(own, drawn.logprobs)) < TOLERANCE
    for policy in policies:
        policy.close()


@pytest.mark.parametrize("mode", ["sequential", "async"])
def test_an_echo_run_loads_each_version_on_vllm_and_unloads_the_last(server, base, dataset, config, tmp_path,
                                                                     mode):
    from aoi.echo.engine import adapter_prefix, train_echo
    from aoi.echo.run import EchoOptions
    from aoi.train.common import read_jsonl
    from aoi.train.grpo import GrpoOptions

    out = tmp_path / mode
    grpo = GrpoOptions(data=dataset, out=out, max_steps=2, config=config, base=str(base))
    options = EchoOptions(grpo=grpo, mode=mode, staleness=1, sampler_url=server.url)
    with Listing(server.url) as listing:
        manifest = train_echo(options)
    lines, prefix = read_jsonl(out / "metrics.jsonl"), adapter_prefix(out)
    assert manifest["metrics"]["steps"] == 2 and manifest["sampler_url"] == server.url and len(lines) == 2
    drawn = sorted({v for line in lines for v in line["versions"]})
    if mode == "sequential":  # each step's groups were drawn by the trainer's version of that step
        assert [line["versions"] for line in lines] == [[0], [1]]
        assert all(abs(line["is_ratio_mean"] - 1) < 1e-3 for line in lines)  # behaviour == pi_old, to rounding
    else:
        assert all(s <= 1 for line in lines for s in line["staleness"])
    seen = ours(listing, prefix)
    assert {f"{prefix}-s0-v{v}" for v in drawn} <= seen  # every version that drew a group was on the server
    loaded = sorted(seen, key=lambda name: int(name.rsplit("-v", 1)[1]))
    for old, new in zip(loaded, loaded[1:]):
        assert listing.unloaded_after(old, new), (old, new)
    assert not any(name.startswith(prefix) for name in server.server.models())  # the last one left with the run


def test_grpo_draws_its_groups_on_vllm_and_loads_each_step(server, base, dataset, config, tmp_path):
    out = tmp_path / "grpo"
    before = _counters(server.url)
    with Listing(server.url) as listing:
        done = subprocess.run([AOI, "train", "grpo", "--data", str(dataset), "--out", str(out), "--base", str(base),
                               "--max-steps", "2", "--config", str(config), "--sampler-url", server.url],
                              capture_output=True, text=True, timeout=900, env={**os.environ,
                                                                                "TRL_EXPERIMENTAL_SILENCE": "1"})
    assert done.returncode == 0, done.stderr[-2000:]
    after = _counters(server.url)
    lines = [json.loads(line) for line in (out / "served.jsonl").read_text().splitlines()]
    assert [line["step"] for line in lines] == [0, 1] and all(line["decisions"] == 2 for line in lines)
    assert json.loads((out / "manifest.json").read_text())["sampler_url"] == server.url
    assert after - before == 2  # a group is one request (n=2), not scored (TRL ignores a rollout's log-probs)
    adapters = [line["adapter"] for line in lines]
    assert ours(listing, adapters[0].rsplit("-s0-", 1)[0]) == set(adapters)
    assert listing.unloaded_after(adapters[0], adapters[1])
    assert not set(adapters) & set(server.server.models())


def _counters(url: str) -> float:
    """Return how many completion requests the server answered (its /metrics)."""
    with urllib.request.urlopen(url.removesuffix("/v1") + "/metrics", timeout=10) as answer:
        lines = answer.read().decode().splitlines()
    return sum(float(line.rsplit(" ", 1)[1]) for line in lines
               if line.startswith('http_requests_total{handler="/v1/completions"') and 'status="2xx"' in line)


def test_grpo_draws_its_varied_states_and_then_its_groups_on_vllm(server, base, dataset, tmp_path):
    config = tmp_path / "grpo.yaml"
    config.write_text(yaml.safe_dump({"grpo": SMALL, "rollout": {"varied_states": True}}))
    out = tmp_path / "grpo"
    before = _counters(server.url)
    done = subprocess.run([AOI, "train", "grpo", "--data", str(dataset), "--out", str(out), "--base", str(base),
                           "--max-steps", "1", "--config", str(config), "--sampler-url", server.url],
                          capture_output=True, text=True, timeout=900,
                          env={**os.environ, "TRL_EXPERIMENTAL_SILENCE": "1"})
    states = [json.loads(line) for line in (out / "states.jsonl").read_text().splitlines()]
    served = [json.loads(line) for line in (out / "served.jsonl").read_text().splitlines()]
    assert len(states) == 4 and all(len(line["decisions"]) == SMALL["num_generations"] for line in states)
    # the random tiny model may end every state's two draws alike: then training does not start, and says why
    varied = any(line["varied"] for line in states)
    assert (done.returncode == 0) == varied, done.stderr[-2000:]
    assert varied or "none of the 4 states gave 2 draws with different rewards" in done.stderr
    trained = ["step"] if varied else []  # step 0's group
    assert [line["for"] for line in served] == ["states"] * len(states) + trained
    assert _counters(server.url) - before == len(states) + len(trained)  # each group: 1 request
    assert not {line["adapter"] for line in served} & set(server.server.models())  # unloaded, trained or not
