"""`aoi scenarios validate FILE` (every dimension with its evidence, --json, exit 1 when any is invalid) and
`aoi scenarios seeds --out FILE` (the seed scenarios round-trip)."""

from __future__ import annotations

import json

from tests.handmade_scenarios import scale_zero
from typer.testing import CliRunner

from aoi.cli import app
from aoi.problems.scenarios import dumps, load_scenarios
from aoi.problems.seeds import seed_scenarios


def invoke(*args: str):
    return CliRunner().invoke(app, ["scenarios", *args], catch_exceptions=False)


def said(result) -> str:
    """Return a result's output as one line of words (usage errors come folded inside a box)."""
    return " ".join(word for word in result.output.split() if word not in "│╭╮╰╯─")


def test_seeds_export_round_trips(tmp_path):
    out = tmp_path / "seeds" / "seeds.jsonl"
    done = invoke("seeds", "--out", str(out))
    assert done.exit_code == 0 and f"wrote {len(seed_scenarios())} seed scenarios" in done.output
    assert load_scenarios(out) == seed_scenarios()


def test_validate_prints_every_dimension_and_fails_on_an_invalid_line(tmp_path):
    seeds = tmp_path / "seeds.jsonl"
    seeds.write_text(dumps(seed_scenarios()[0]) + "\n")
    file = tmp_path / "candidates.jsonl"
    file.write_text(json.dumps(scale_zero()) + "\n\n{not json\n")
    done = invoke("validate", str(file), "--seeds", str(seeds), "--json")
    assert done.exit_code == 1
    good, bad = json.loads(done.output)
    assert (good["line"], good["id"], good["valid"], bad["line"], bad["valid"]) == (1, "geo-scaled-to-zero", True, 3,
                                                                                    False)
    effectiveness = good["scores"]["solution_effectiveness"]
    assert (effectiveness["score"], effectiveness["weight"]) == (1.0, 0.3)
    assert "health check passes" in effectiveness["evidence"]
    assert bad["scores"]["format"]["score"] == 0.0 and "not one JSON object" in bad["scores"]["format"]["evidence"]
    assert good["record"]["faulty"][0]["role"] == "probe"

    file.write_text(json.dumps(scale_zero()) + "\n")
    judge = tmp_path / "judge.yaml"
    judge.write_text("- '{\"score\": 6, \"reason\": \"plausible but common\"}'\n")
    text = invoke("validate", str(file), "--seeds", str(seeds), "--judge", f"replay:{judge}")
    assert text.exit_code == 0 and "1/1 scenario(s) valid" in text.output
    assert all(name in text.output for name in ("solution_effectiveness", "diversity", "format", "nearest: seed"))
    assert "judge                   0.60 (weight 0.10)  judge replay:judge.yaml: plausible but common" in text.output


def test_validate_says_what_is_wrong_with_its_arguments(tmp_path):
    missing = invoke("validate", str(tmp_path / "nope.jsonl"))
    assert missing.exit_code == 2 and "does not exist" in said(missing)
    (tmp_path / "w.yaml").write_text("beauty: 1\n")
    (tmp_path / "s.jsonl").write_text(json.dumps(scale_zero()) + "\n")
    weights = invoke("validate", str(tmp_path / "s.jsonl"), "--weights", str(tmp_path / "w.yaml"))
    assert weights.exit_code == 2 and "unknown reward dimension(s) beauty" in said(weights)
    (tmp_path / "w.yaml").write_text("diversity: [\n")
    broken = invoke("validate", str(tmp_path / "s.jsonl"), "--weights", str(tmp_path / "w.yaml"))
    assert broken.exit_code == 2 and "not valid YAML" in said(broken)
    (tmp_path / "empty.jsonl").write_text("\n")
    empty = invoke("validate", str(tmp_path / "empty.jsonl"))
    assert empty.exit_code == 2 and "holds no scenario" in said(empty)
