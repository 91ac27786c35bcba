"""Guidance at Observer time: retrieval, the prompt block, the record of shown entries, and no change without it."""

from __future__ import annotations

import hashlib
import json

import pytest

from aoi.agents.guidance import Entry, Guide, load_guidance, write_guidance
from aoi.agents.runtime import run_episode
from aoi.config import ConfigError, load_config, resolved
from aoi.env import make
from aoi.models.embedder import Embedder
from aoi.models.replay import ReplayModel

ROLES = ("observer", "probe", "executor", "compressor")
PROBLEM = "k8s_target_port-misconfig-detection-1"

ENTRIES = [
    Entry(id="g-port", task_type="detection", symptoms=["connection refused", "no endpoints"],
          keywords=["user-service", "targetPort", "endpoints"],
          lesson="Answered No while user-service refused connections: compare each Service's targetPort with its "
                 "pods' container ports before answering.", provenance=["t1", "t2"]),
    Entry(id="g-mongo", task_type="detection", symptoms=["not authorized on geo-db"],
          keywords=["mongodb-geo", "auth"], lesson="Read the MongoDB logs for authorization errors.",
          provenance=["t3"]),
    Entry(id="g-disk", task_type="detection", symptoms=["disk quota exceeded"], keywords=["node", "disk"],
          lesson="Check node disk pressure conditions.", provenance=["t4"]),
    Entry(id="g-mitig", task_type="mitigation", symptoms=["connection refused"], keywords=["user-service"],
          lesson="Patch the Service's targetPort back, then verify the endpoints.", provenance=["t5"]),
]


def decide(next_: str, instruction: str = "", answer=None) -> tuple[str, str]:
    body = {"phase": "survey", "next": next_, "instruction": instruction, "context": ""}
    if next_ == "submit":
        body["answer"] = answer
    return "observer", json.dumps(body)


def call(tool: str, **args) -> tuple[str, str]:
    return "probe", json.dumps({"thought": "", "tool": tool, "args": args})


SCRIPT = [decide("probe", "list the pods and endpoints of test-social-network"),
          call("exec_shell", command="kubectl get endpoints -n test-social-network"),
          call("finish", findings="user-service has no endpoints; connection refused from compose-post-service"),
          decide("submit", answer="Yes")]


def episode(guidance: dict | None):
    """Run the scripted episode; return (trajectory, the Observer's requests)."""
    model = ReplayModel(SCRIPT)
    overrides = {"model": "expert"} | ({"agent.guidance": guidance} if guidance else {})
    config = load_config(overrides=overrides, environ={})
    env = make(PROBLEM)
    try:
        traj = run_episode(env, config, dict.fromkeys(ROLES, model))
    finally:
        env.close()
    model.assert_done()
    return traj, [messages for role, messages in model.requests if role == "observer"]


@pytest.fixture
def guidance_file(tmp_path):
    path = tmp_path / "guidance.jsonl"
    write_guidance(ENTRIES, path)
    return path


def test_retrieval_ranks_the_relevant_entry_first():
    guide = Guide(ENTRIES, top_k=2)
    situation = "user-service: no endpoints, connections refused by the Service on port 9090"
    ranked = guide.ranked("detection", situation)
    assert ranked[0][1].id == "g-port"
    assert {entry.task_type for _, entry in ranked} == {"detection"}  # the mitigation lesson is not offered
    assert [e.id for e in guide.select("detection", situation)][0] == "g-port"
    assert len(guide.select("detection", situation)) == 2


def test_selection_stays_within_the_token_budget():
    tight = Guide(ENTRIES, embedder=Embedder.hashed(), top_k=3, budget_tokens=20)
    chosen = tight.select("detection", "mongodb-geo not authorized")
    assert [e.id for e in chosen] == ["g-mongo"]  # the long port lesson alone exceeds 20 tokens


def test_the_observer_sees_the_block_and_the_trajectory_records_the_ids(guidance_file):
    traj, prompts = episode({"file": str(guidance_file), "top_k": 2})
    first, second = (p[1]["content"] for p in prompts)
    assert "Lessons from earlier failed runs" in first and "[g-port]" in second
    assert "[g-mitig]" not in first + second
    observer_steps = [s for s in traj.steps if s.role == "observer" and s.messages]
    assert all(s.guidance_ids and len(s.guidance_ids) <= 2 for s in observer_steps)
    assert "g-port" in observer_steps[-1].guidance_ids
    assert all(s.guidance_ids is None for s in traj.steps if s.role == "probe")
    assert set(traj.guidance_ids) == {i for s in observer_steps for i in s.guidance_ids}
    assert traj.results["Detection Accuracy"] == "Correct"
    recorded = traj.config["agent"]["guidance"]
    assert recorded["sha256"] == hashlib.sha256(guidance_file.read_bytes()).hexdigest()


def test_without_guidance_the_messages_are_those_of_no_guide(guidance_file, tmp_path):
    plain, plain_prompts = episode(None)
    other = tmp_path / "other.jsonl"
    write_guidance([ENTRIES[3]], other)  # only a mitigation lesson: nothing to show in a detection task
    guided, guided_prompts = episode({"file": str(other)})
    assert plain_prompts == guided_prompts
    assert "Lessons from earlier" not in json.dumps(plain_prompts)
    assert [s.prompt_hash for s in plain.steps] == [s.prompt_hash for s in guided.steps]
    assert all(s.guidance_ids is None for s in plain.steps) and plain.guidance_ids == []
    assert plain.config["agent"]["guidance"] is None


def test_a_bad_or_changed_guidance_file_is_a_clear_error(tmp_path, guidance_file):
    with pytest.raises(ConfigError, match="does not exist; write one with `aoi evolve guidance"):
        load_config(overrides={"agent.guidance.file": str(tmp_path / "none.jsonl")}, environ={})
    config = load_config(overrides={"agent.guidance.file": str(guidance_file)}, environ={})
    pinned = resolved(config)["agent"]["guidance"]
    guidance_file.write_text(guidance_file.read_text() + "\n")
    with pytest.raises(ConfigError, match="changed since sha256"):
        load_config(overrides={"agent.guidance": pinned}, environ={})
    broken = tmp_path / "broken.jsonl"
    broken.write_text(json.dumps(ENTRIES[0].to_json()) + '\n{"id": "x"}\n')
    with pytest.raises(ValueError, match=r"broken.jsonl:2 is not a guidance entry"):
        load_guidance(broken)


def test_aoi_run_takes_guidance_and_stores_the_ids_shown(guidance_file, tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from aoi.cli import app
    from aoi.store.sqlite import TrajectoryStore

    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"role": role, "text": text} for role, text in SCRIPT]))
    monkeypatch.setenv("AOI_STORE", str(tmp_path / "t.db"))
    monkeypatch.setenv("AOI_AUDIT_LOG", str(tmp_path / "audit.jsonl"))
    result = CliRunner().invoke(app, ["run", PROBLEM, "--model", f"replay:{script}", "--guidance", str(guidance_file)])
    assert result.exit_code == 0, result.output
    (traj,) = TrajectoryStore(tmp_path / "t.db").query()
    assert "g-port" in traj.guidance_ids and traj.config["agent"]["guidance"]["file"] == str(guidance_file)
    missing = CliRunner().invoke(app, ["run", PROBLEM, "--guidance", str(tmp_path / "none.jsonl")])
    assert missing.exit_code == 2 and "aoi evolve guidance" in " ".join(missing.output.split())
