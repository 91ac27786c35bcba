"""The scenario generator: replies become candidates with provenance, valid or not with reasons; local models decode
constrained to the scenario schema; `aoi evolve scenarios` writes them."""

from __future__ import annotations

import json

import pytest
import yaml
from tests.handmade_scenarios import scale_zero, variant
from typer.testing import CliRunner

from aoi.cli import app
from aoi.evolve.generate import ROLE, decoding_schema, generate, load_generator, seed_messages, write_candidates
from aoi.models.base import Completion
from aoi.models.local import LocalModel
from aoi.models.replay import ReplayModel
from aoi.models.retry import with_retries
from aoi.problems.scenarios import NOT_JSON, dumps, load_scenarios
from aoi.problems.seeds import seed_scenarios


@pytest.fixture
def one_thread():
    """Run torch on one thread, then restore: on a shared, loaded machine threads mostly wait on each other."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def hotel_seed():
    return next(s for s in seed_scenarios() if s.app == "hotel-reservation")


def replies() -> list[str]:
    """A fenced valid scenario, a refusal, a JSON object missing fields, and one reaching kube-system."""
    new = json.dumps(scale_zero(), indent=1)
    outside = variant(scale_zero(), solution_commands=["kubectl delete pod coredns -n kube-system"])
    return [f"Here is a new scenario:\n```json\n{new}\n```", "I cannot write that.",
            '{"app": "hotel-reservation"}', json.dumps(outside)]


def test_replay_replies_become_valid_and_invalid_candidates_with_provenance(hotel_seed, tmp_path):
    model = ReplayModel([(ROLE, text) for text in replies()])
    made = generate(model, [hotel_seed], group=4, generator="replay:steps.yaml")
    counts = write_candidates(made, tmp_path / "out.jsonl", tmp_path / "valid.jsonl")
    model.assert_done()
    records = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert counts == {"candidates": 4, "valid": 1}
    assert [(r["seed"], r["generator"], r["group"]) for r in records] == [
        (hotel_seed.id, "replay:steps.yaml", index) for index in range(4)]
    assert [r["valid"] for r in records] == [True, False, False, False]
    assert records[1]["scenario"] is None and records[1]["errors"][0].startswith(NOT_JSON + " (it holds none)")
    assert any("missing fields 'namespace'" in e for e in records[2]["errors"])
    assert any("kube-system" in e for e in records[3]["errors"])
    [kept] = load_scenarios(tmp_path / "valid.jsonl")  # the valid ones alone form a scenario file
    assert kept.id == f"{hotel_seed.id}-g0" and kept.fault == tuple(scale_zero()["fault"])
    assert kept.source == {"seed": hotel_seed.id, "generator": "replay:steps.yaml", "group": 0}


def test_the_prompt_shows_the_seed_and_asks_for_a_new_fault_in_its_namespace(hotel_seed):
    system, user = seed_messages(hotel_seed)
    assert dumps(hotel_seed) in user["content"] and hotel_seed.namespace in user["content"]
    assert "different fault kind" in user["content"] and '"solution_commands"' in system["content"]


def test_every_call_sends_its_seeds_decoding_schema_through_a_wrapped_model(hotel_seed):
    seeds, sent = [hotel_seed, seed_scenarios()[0]], []

    class Asked:  # what the call carries, past the retry wrapper load_generator puts around every model
        name = "asked"

        def complete(self, messages, *, role, schema=None, **call):
            sent.append(schema)
            return Completion("{}")

    list(generate(with_retries(Asked()), seeds, group=2, generator="asked"))
    assert sent == [decoding_schema(seeds[0])] * 2 + [decoding_schema(seeds[1])] * 2


def test_a_local_model_decodes_within_the_scenario_schema(hotel_seed, one_thread):
    model = LocalModel("tiny", temperature=1.0, seed=3, progress=False)
    [made] = generate(model, [hotel_seed], group=1, generator="local:tiny", max_tokens=600)
    assert made.scenario is not None, made.errors  # random weights, yet the reply is one JSON object
    schema = decoding_schema(hotel_seed)
    assert set(schema["required"]) <= set(made.scenario)
    assert (made.scenario["app"], made.scenario["namespace"]) == (hotel_seed.app, hotel_seed.namespace)


def test_the_command_writes_candidates_and_refuses_the_expert(hotel_seed, tmp_path):
    script, seeds, out = tmp_path / "steps.yaml", tmp_path / "seeds.jsonl", tmp_path / "out.jsonl"
    script.write_text(yaml.safe_dump(replies()[:2]))
    seeds.write_text(dumps(hotel_seed) + "\n" + dumps(seed_scenarios()[0]) + "\n")
    base = ["evolve", "scenarios", "--seeds", str(seeds), "--out", str(out), "--group", "2", "--limit", "1"]
    result = CliRunner().invoke(app, [*base, "--model", f"replay:{script}"])
    assert result.exit_code == 0, result.output
    assert "2 candidates from 1 seeds, 1 valid" in result.output and len(out.read_text().splitlines()) == 2
    refused = CliRunner().invoke(app, [*base, "--model", "expert"])
    assert refused.exit_code == 2 and "writes no scenarios" in refused.output


def test_a_replay_generator_is_loaded_from_its_spec(tmp_path):
    script = tmp_path / "steps.json"
    script.write_text('["{}"]')
    assert load_generator(f"replay:{script}").complete([], role=ROLE).text == "{}"
