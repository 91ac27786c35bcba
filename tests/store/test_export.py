"""Exports: AIOpsLab's result JSON (shape and file name), JSONL round trip, Hugging Face datasets."""

from __future__ import annotations

import importlib.util
import json

import pytest

from aoi.store import read_jsonl, to_aiopslab_json, to_hf_dataset, to_jsonl, write_aiopslab
from aoi.trajectory import Policy, Step, Trajectory

NEXT = "Please take the next action"  # the line AIOpsLab's orchestrator (and aoi.env) appends
HAS_DATASETS = importlib.util.find_spec("datasets") is not None


def episode(**extra) -> Trajectory:
    """Return an episode mixing env actions with steps that never reached the environment."""
    steps = [
        Step("observer", '{"next": "probe"}'),
        Step("probe", "I list pods.\n```\nexec_shell(\"kubectl get pods\")\n```",
             action='exec_shell("kubectl get pods")', observation=f"NAME READY\ngeo-1 0/1\n{NEXT}", input_tokens=50,
             output_tokens=9, logprobs=[-0.1, -0.2]),
        Step("compressor", "geo-1 is not ready", input_tokens=20, output_tokens=5),
        Step("observer", "submit", action='submit("Yes")', observation="1"),
    ]
    defaults = {"policy": Policy("expert"), "steps": steps, "results": {"Detection Accuracy": "Correct", "TTD": 30.0},
                "started_at": 1712345678.25, "ended_at": 1712345699.5, "id": "3f2a"}
    return Trajectory("k8s_target_port-misconfig-detection-1", "detection", **{**defaults, **extra})


def test_aiopslab_json_has_the_session_keys_in_order():
    data = to_aiopslab_json(episode(), "aoi-expert")
    assert list(data) == ["agent", "session_id", "problem_id", "start_time", "end_time", "trace", "results"]
    assert (data["agent"], data["session_id"], data["start_time"]) == ("aoi-expert", "3f2a", 1712345678.25)
    assert data["results"] == {"Detection Accuracy": "Correct", "TTD": 30.0}


def test_trace_keeps_only_env_actions_in_assistant_env_pairs():
    trace = to_aiopslab_json(episode(), "aoi")["trace"]
    assert trace == [{"role": "assistant", "content": 'exec_shell("kubectl get pods")'},
                     {"role": "env", "content": "NAME READY\ngeo-1 0/1"},
                     {"role": "assistant", "content": 'submit("Yes")'}, {"role": "env", "content": "1"}]


def test_write_aiopslab_names_the_file_like_aiopslab(tmp_path):
    path = write_aiopslab(episode(), tmp_path / "results", agent_name="aoi")
    assert path.name == "3f2a_1712345678.25.json"
    assert json.loads(path.read_text()) == to_aiopslab_json(episode(), "aoi")


def test_jsonl_round_trip(tmp_path):
    trajs = [episode(id="a"), episode(id="b", submission=["geo"], strict_success=False, error="timeout")]
    assert to_jsonl(trajs, tmp_path / "out" / "t.jsonl") == 2
    assert read_jsonl(tmp_path / "out" / "t.jsonl") == trajs


def test_read_jsonl_names_a_bad_line(tmp_path):
    path = tmp_path / "t.jsonl"
    to_jsonl([episode()], path)
    path.write_text(path.read_text() + "not json\n")
    with pytest.raises(ValueError, match=r"t.jsonl:2 "):
        read_jsonl(path)


@pytest.mark.skipif(not HAS_DATASETS, reason="the `datasets` package is not installed (pip install datasets)")
def test_hf_dataset_has_one_row_per_episode():
    ds = to_hf_dataset([episode(id="a"), episode(id="b", results={"Detection Accuracy": "Incorrect"})])
    assert ds.num_rows == 2 and ds["id"] == ["a", "b"] and ds["success"] == [True, False]
    assert ds[0]["model"] == "expert" and len(ds[0]["steps"]) == 4
    assert ds[0]["steps"][1]["logprobs"] == [-0.1, -0.2]
    assert json.loads(ds[1]["results"]) == {"Detection Accuracy": "Incorrect"}


@pytest.mark.skipif(HAS_DATASETS, reason="`datasets` is installed, so there is no ImportError to check")
def test_hf_dataset_without_datasets_says_what_to_install():
    with pytest.raises(ImportError, match="pip install datasets"):
        to_hf_dataset([episode()])
