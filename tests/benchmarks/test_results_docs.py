"""benchmarks/results_docs.py: docs/results.md and the README's learning headline are what the committed result files
give, and a learning result renders its table, phase times and curve (on a tiny run's JSON, learning_tiny.json)."""

from __future__ import annotations

import doctest
import importlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "results_docs.py"
TINY = Path(__file__).with_name("learning_tiny.json")  # `benchmarks/learning.py --tiny`'s learning.json


@pytest.fixture
def results_docs(monkeypatch):
    monkeypatch.syspath_prepend(str(SCRIPT.parent))
    return importlib.import_module("results_docs")


def check(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), "--check", "--root", str(root)], capture_output=True,
                          text=True)


def repository(tmp_path: Path, *results: Path) -> Path:
    """Return a copy of the README with docs/ and the given result files, rendered by the generator."""
    (tmp_path / "docs").mkdir(parents=True)
    (tmp_path / "benchmarks" / "results").mkdir(parents=True)
    shutil.copy(ROOT / "README.md", tmp_path / "README.md")
    for path in results:
        shutil.copy(path, tmp_path / "benchmarks" / "results" / "learning.json")
    done = subprocess.run([sys.executable, str(SCRIPT), "--root", str(tmp_path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return tmp_path


def test_the_committed_pages_are_what_the_committed_results_give():
    done = check(ROOT)
    assert done.returncode == 0, done.stderr


def test_check_names_a_page_that_differs_from_the_results(tmp_path):
    root = repository(tmp_path, TINY)
    assert check(root).returncode == 0
    page = root / "docs" / "results.md"
    page.write_text(page.read_text().replace("| SFT+GRPO | held-out targets | 8 | 0.250", "| SFT+GRPO | held-out "
                                                                                       "targets | 8 | 0.500"))
    readme = root / "README.md"
    readme.write_text(readme.read_text().replace("expert 0.750", "expert 0.875"))
    done = check(root)
    assert done.returncode == 1 and "docs/results.md, README.md;" in done.stderr


def test_a_learning_result_renders_every_variant_set_phase_and_the_curve(tmp_path):
    data, root = json.loads(TINY.read_text()), repository(tmp_path, TINY)
    page = (root / "docs" / "results.md").read_text()
    rows = [line for line in page.splitlines() if line.startswith("| ") and "held-out" in line]
    sets = [(v, s) for v, found in data["table"].items() for s in found]
    assert len(rows) == len(sets) + 2  # and the constant answer on each of the two sets
    assert "| SFT at 50% of its steps | held-out targets | 8 | 0.250 | 0.000 | 0.000 |" in page
    assert "| constant answer | held-out targets | problems: 4 | n/a | - | n/a |" in page
    assert all(f"| {phase} | {seconds:.0f} |" in page for phase, seconds in data["phase_seconds"].items())
    assert "- GRPO groups (samples.jsonl): 1, of which 1 had the same success in every sample, 0 of those" in page
    assert "](images/learning-curve.png)" in page
    assert (root / "docs" / "images" / "learning-curve.png").read_bytes()[:4] == b"\x89PNG"


def test_the_readme_shows_the_headline_of_learning_json_and_until_then_says_it_has_not_finished(tmp_path,
                                                                                                 results_docs):
    readme = (repository(tmp_path / "with", TINY) / "README.md").read_text()
    assert ("on held-out targets (8 episodes each) base 0.500, SFT 0.250, SFT+GRPO 0.250, expert 0.750 (a constant "
            "answer: analysis 1.000, detection 1.000, localization 1.000)") in readme
    assert results_docs.NOT_YET not in readme
    assert "| SFT+GRPO | held-out targets | 8 |" in readme and "](docs/images/learning-curve.png)" in readme
    without = (repository(tmp_path / "without") / "README.md").read_text()
    assert f"{results_docs.START}\n{results_docs.NOT_YET}\n{results_docs.END}" in without


def test_an_echo_result_renders_each_modes_rates_and_its_reward_by_step_and_wall_clock(results_docs):
    figures = {"steps/s": 0.011, "rollouts/s": 0.044, "trainer idle": 0.8, "sampler idle": 0.2, "staleness": 0,
               "dropped": 0, "reward": 3.153, "wall": 718.4}
    data = {"command": "python benchmarks/echo.py --steps 2", "commit": "abc", "base": "smollm2", "init": "",
            "steps": 2, "groups": 1, "generations": 4, "cores": 2, "load_average_end": 5.12,
            "figures": {"colocated": figures, "async S=1 N=2": {**figures, "dropped": 7}},
            "curves": {"colocated": [{"step": 1, "wall": 81.1, "reward": 3.1666}, {"step": 2, "wall": 199.2,
                                                                                  "reward": 3.14}]}}
    text = "\n".join(results_docs.page({"echo-test": data}).splitlines())
    assert "| colocated | 0.011 | 0.044 | 0.8 | 0.2 | 0 | 0 | 3.153 | 718.4 |" in text
    assert "| async S=1 N=2 | 0.011 | 0.044 | 0.8 | 0.2 | 0 | 7 | 3.153 | 718.4 |" in text
    assert "- colocated: 1 (81 s): 3.17, 2 (199 s): 3.14" in text and "load average 5.1 at the end" in text


def test_a_result_file_without_a_renderer_is_refused(tmp_path, results_docs):
    (tmp_path / "benchmarks" / "results").mkdir(parents=True)
    (tmp_path / "benchmarks" / "results" / "other.json").write_text("{}")
    with pytest.raises(SystemExit, match="no renderer for benchmarks/results/other.json"):
        results_docs.page(results_docs.load(tmp_path))


def test_the_examples_in_the_docstrings_hold(results_docs):
    result = doctest.testmod(results_docs)
    assert result.attempted >= 3 and result.failed == 0


def test_grpos_state_choice_is_printed_when_the_run_made_one(results_docs):
    data = json.loads(TINY.read_text())
    assert not any(line.startswith("- GRPO states") for line in results_docs.training_lines(data))
    data["curve"]["grpo_states"] = {"states": 65, "varied": 11, "flat_one_decision": 33}
    assert ("- GRPO states (states.jsonl): 11 of 65 kept (their first group's rewards differed); of the rest, 33 drew "
            "one decision every time and 21 different ones that ended alike") in results_docs.training_lines(data)


def test_the_episode_by_episode_comparison_is_printed_when_the_run_made_one(results_docs):
    data = json.loads(TINY.read_text())  # written before learning.py compared variants episode by episode
    assert "Episode by episode" not in "\n".join(results_docs.learning_section("learning", data))
    data["paired"] = {"grpo vs sft": {"held-out targets": {"episodes": 40, "gained": ["a seed 0", "a seed 1"],
                                                           "lost": ["noop-1 seed 1"], "sign_test_p": 1.0}},
                      "sft vs base": {"held-out targets": {"episodes": 40, "gained": [f"k{i}" for i in range(18)],
                                                           "lost": [], "sign_test_p": 7.63e-06}}}
    lines = results_docs.paired_lines(data)
    assert lines == ["- SFT+GRPO against SFT on held-out targets: 2 gained, 1 lost of 40 episodes (sign test p 1.000); "
                     "gained: a seed 0, a seed 1; lost: noop-1 seed 1",
                     "- SFT against base on held-out targets: 18 gained, 0 lost of 40 episodes (sign test p < 0.001)"]
    assert "Episode by episode (the same key and seed):" in results_docs.headline(data)
