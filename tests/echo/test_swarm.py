"""Echo on a simulated two-node Ray cluster with the tiny model: sequential pull, async push-pull, and faults."""

from __future__ import annotations

import threading
import time

import pytest

from aoi.echo.engine import train_echo
from aoi.echo.serve import PolicyServer, Running
from aoi.train.common import read_jsonl

from ..ray_cluster import module_cluster
from .conftest import config_file, echo_options

pytestmark = pytest.mark.slow  # a two-node Ray cluster and Echo runs in it: over three minutes on two cores

ray_cluster = module_cluster()


def test_sequential_pulls_fresh_groups_from_every_sampler(ray_cluster, dataset, tmp_path):
    options = echo_options(dataset, config_file(tmp_path, groups=2), tmp_path / "out", mode="sequential",
                           samplers=2, max_steps=2)
    manifest = train_echo(options)
    lines = read_jsonl(options.grpo.out / "metrics.jsonl")
    assert [line["versions"] for line in lines] == [[0, 0], [1, 1]]  # samplers refreshed to the trainer's version
    assert all(line["staleness"] == [0, 0] for line in lines)
    assert {gid.split("-")[0] for line in lines for gid in line["group_ids"]} == {"s0", "s1"}  # both samplers drew
    assert manifest["mode"] == "sequential" and manifest["metrics"]["steps"] == 2


def test_sequential_trains_on_groups_a_server_drew(ray_cluster, dataset, tmp_path):
    with Running(PolicyServer("tiny")) as server:  # the sampler actor reaches it over HTTP on 127.0.0.1
        options = echo_options(dataset, config_file(tmp_path, groups=1), tmp_path / "out", mode="sequential",
                               samplers=1, max_steps=2, sampler_url=server.url)
        train_echo(options)
        adapters = set(server.http.policy.adapters)
    lines = read_jsonl(options.grpo.out / "metrics.jsonl")
    assert [line["versions"] for line in lines] == [[0], [1]] and all(line["staleness"] == [0] for line in lines)
    assert all(line["weight_sync_s"] > 0 for line in lines) and not adapters  # the last one left with the run
    # The server's behaviour log-probs are the trained policy's own: fresh groups weigh 1.
    assert all(abs(line["is_ratio_max"] - 1) < 1e-3 and abs(line["is_ratio_mean"] - 1) < 1e-3 for line in lines)


def kill_when_trained(ray, name: str, out, stop: threading.Event) -> None:
    """Once a step is logged, kill sampler 0 (drawing its next group by then) and the trainer; Ray restarts both."""
    while not stop.is_set() and not (out / "metrics.jsonl").is_file():
        time.sleep(0.2)
    if not stop.is_set():
        ray.kill(ray.get_actor(f"{name}-sampler-0"), no_restart=False)
        ray.kill(ray.get_actor(f"{name}-trainer"), no_restart=False)


@pytest.fixture(scope="module")
def async_run(ray_cluster, dataset, tmp_path_factory):
    import ray

    folder = tmp_path_factory.mktemp("async")
    options = echo_options(dataset, config_file(folder, groups=1), folder / "out", mode="async", samplers=2,
                           staleness=1, max_steps=3, name="echo-test")
    stop = threading.Event()
    killer = threading.Thread(target=kill_when_trained, args=(ray, "echo-test", options.grpo.out, stop))
    killer.start()
    try:
        manifest = train_echo(options)
    finally:
        stop.set()
        killer.join()
    return manifest, read_jsonl(options.grpo.out / "metrics.jsonl")


def test_async_never_trains_on_groups_older_than_the_bound(async_run):
    _, lines = async_run
    for line in lines:
        assert len(line["versions"]) == len(line["staleness"]) == 1  # every consumed group carries its version
        assert all(0 <= s <= 1 for s in line["staleness"])
        assert line["staleness"] == [line["policy_version"] - 1 - v for v in line["versions"]]
        assert line["staleness_max"] == max(line["staleness"])


def test_a_killed_sampler_loses_no_group_and_duplicates_none(async_run):
    manifest, lines = async_run
    summary, consumed = manifest["metrics"], [gid for line in lines for gid in line["group_ids"]]
    assert summary["sampler_restarts"] >= 1 and summary["buffer"]["incarnations"]["0"] >= 1
    assert len(consumed) == len(set(consumed)) == 3  # no group twice
    assert all(line["rollouts"] == 2 for line in lines)  # whole groups only: the half-drawn one never arrived
    buffer = summary["buffer"]  # every group the buffer took was trained on, dropped as stale, or is still there
    assert buffer["accepted"] == buffer["consumed"] + buffer["dropped_stale"] + buffer["depth"]
    assert buffer["dropped_stale"] == lines[-1]["dropped_stale_total"]


def test_a_restarted_trainer_resumes_from_its_checkpoint_and_version(async_run):
    manifest, lines = async_run
    assert manifest["metrics"]["trainer_resumed_from"] is not None
    assert [line["step"] for line in lines] == [1, 2, 3]
    assert [line["policy_version"] for line in lines] == [1, 2, 3]  # a fresh trainer would have started at 0 again
