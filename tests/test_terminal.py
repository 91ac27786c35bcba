"""What the terminal shows: `aoi run`'s header and trajectory id, tables within 80 columns, pytest's summary line."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from .test_cli import PROBLEM, aoi

ROOT = Path(__file__).resolve().parents[1]


def widest(text: str) -> int:
    """Return the length of the longest line."""
    return max((len(line) for line in text.splitlines()), default=0)


def test_run_names_each_role_model_and_prints_the_id_it_saved(tmp_path):
    decision = {"phase": "submit", "next": "submit", "instruction": "", "context": "", "answer": "No"}
    script = tmp_path / "s.json"
    script.write_text(json.dumps([{"role": "observer", "text": json.dumps(decision)}]))
    (tmp_path / "aoi.yaml").write_text(f"model: expert\nmodels:\n  observer: replay:{script}\n")
    done = aoi("run", PROBLEM, cwd=tmp_path, env={"COLUMNS": "80"})
    assert done.returncode == 0, done.stdout
    flat = " ".join(done.stdout.split())
    assert f"with observer replay:{script}; probe, executor, compressor expert" in flat, done.stdout
    assert widest(done.stdout) <= 80, done.stdout
    printed = re.search(r"trajectory\s*│\s*([0-9a-f]{32})", done.stdout).group(1)
    shown = aoi("trajectories", "show", printed, cwd=tmp_path, env={"COLUMNS": "80"})
    assert shown.returncode == 0 and printed in shown.stdout and PROBLEM in shown.stdout, shown.stdout


def test_run_with_one_model_names_it_once(tmp_path):
    done = aoi("run", PROBLEM, "--model", "expert", "--max-steps", "3", cwd=tmp_path, env={"COLUMNS": "80"})
    assert "on the twin (seed 0) with expert\n" in done.stdout, done.stdout


def test_make_test_prints_pytest_summary_line():
    # `make test` runs pytest with the Makefile's options on top of pyproject's addopts: a doubled -q hid the
    # "N passed" line.
    recipe = next(line for line in (ROOT / "Makefile").read_text().splitlines() if "-m pytest" in line)
    options = recipe.split("-m pytest", 1)[1].split()
    done = subprocess.run([sys.executable, "-m", "pytest", *options, "-p", "no:cacheprovider",
                           "src/aoi/evaluate/charts.py"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert re.match(r"1 passed in [\d.]+s", done.stdout.strip().splitlines()[-1]), done.stdout
