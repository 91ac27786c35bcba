"""Terminal output at 80 and 160 columns (issue 27, item 5): ids are never cut or folded, a column left out is named
with the way to see it, cut text ends with "…", counts and tokens are labelled, times carry their unit."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from rich.console import Console
from typer.testing import CliRunner

from aoi.evaluate.summary import build_summary, summary_table
from aoi.problems.cli import problems_app
from aoi.problems.registry import list_problems

PROBLEM = "noop_detection_hotel_reservation-1"
COLUMNS = {"id": "id", "task type": "task_type", "app": "app", "family": "family", "target": "target",
           "backend": "backend"}


def listing(width: int) -> list[str]:
    """Return the lines `aoi problems list` prints at a terminal width."""
    done = CliRunner().invoke(problems_app, ["list"], env={"COLUMNS": str(width)})
    assert done.exit_code == 0 and done.stderr == "", done.output
    return done.stdout.splitlines()


def full_width() -> int:
    """Return the columns the whole table takes: each column's longest cell (or header), two spaces between."""
    problems = list_problems()
    widths = [max(len(header), *(len(getattr(p, attr) or "-") for p in problems)) for header, attr in COLUMNS.items()]
    return sum(widths) + 2 * (len(widths) - 1)


@pytest.mark.parametrize("width", [80, 160])
def test_problem_ids_are_whole_and_copyable_at_any_width(width):
    lines = listing(width)
    assert all(len(line) <= width for line in lines), [line for line in lines if len(line) > width]
    ids = [p.id for p in list_problems()]
    firsts = [line.split()[0] for line in lines[1:1 + len(ids)]]  # one row per problem, its id whole and first
    assert sorted(firsts) == sorted(ids)


def test_at_80_columns_the_hidden_columns_are_named_with_how_to_see_them():
    lines = listing(80)
    assert lines[0].split() == ["id", "target"]
    note = " ".join(" ".join(lines[-2:]).split())
    assert note == (f"{len(list_problems())} problems; task type, app, family, backend not shown at 80 columns: "
                    f"`aoi problems list --json` or a terminal of {full_width()}+ columns shows every column")


def test_at_160_columns_every_column_shows_and_a_cut_family_ends_with_an_ellipsis():
    lines = listing(160)
    assert lines[0].split() == ["id", "task", "type", "app", "family", "target", "backend"]
    assert lines[-1] == f"{len(list_problems())} problems"  # nothing hidden, so no note
    families = {p.id: p.family for p in list_problems()}
    cut = [(line.split()[0], line.split()[3]) for line in lines[1:-1] if "…" in line]
    assert cut and all(shown.endswith("…") and families[pid].startswith(shown[:-1]) for pid, shown in cut)
    assert len(listing(full_width())[-1].split()) == 2  # wide enough: nothing cut, nothing hidden


def test_the_summary_table_names_what_it_leaves_out_where_the_full_one_does_not_fit():
    rows = [{"problem_id": "p", "task_type": "detection", "family": "f", "attempt": 0, "success": True, "ttx": 12.0,
             "steps": 5, "in_tokens": 9412, "out_tokens": 608, "model_in_tokens": 36338, "model_out_tokens": 2639,
             "seconds": 3.0}]
    for width in (80, 160):
        console = Console(width=width, record=True)
        console.print(summary_table(build_summary(rows, {}, []), width=width))
        text = " ".join(console.export_text().split())
        assert "not shown at this width: TTx s, env steps, env tokens, wall s (" in text
        assert "+ columns, summary.json or the report)" in text
    wide = Console(width=250, record=True)
    wide.print(summary_table(build_summary(rows, {}, []), width=250))
    shown = wide.export_text()
    assert "env steps" in shown and "TTx s" in shown and "9412/608" in shown and "not shown" not in shown


def test_run_cuts_long_commands_with_an_ellipsis_and_labels_its_verdict(tmp_path):
    long = "kubectl get pods -n test-hotel-reservation -o custom-columns=" + ",".join(
        f"COLUMN{n}:.metadata.labels.label{n}" for n in range(12))
    steps = [{"role": "observer", "text": json.dumps({"phase": "survey", "next": "probe", "instruction": "look",
                                                      "context": ""})},
             {"role": "probe", "text": json.dumps({"thought": "", "tool": "exec_shell", "args": {"command": long}})},
             {"role": "probe", "text": json.dumps({"thought": "", "tool": "finish", "args": {"findings": "none"}})},
             {"role": "observer", "text": json.dumps({"phase": "submit", "next": "submit", "instruction": "",
                                                      "context": "", "answer": "No"})}]
    script = tmp_path / "long.json"
    script.write_text(json.dumps(steps))
    done = subprocess.run([sys.executable, "-m", "aoi", "run", PROBLEM, "--model", f"replay:{script}"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300, env=os.environ | {"COLUMNS": "250"})
    assert done.returncode == 0 and done.stderr == "", done.stdout + done.stderr
    shown = next(line for line in done.stdout.splitlines() if "custom-columns" in line)
    command = shown.split("probe ", 1)[1]
    assert command.endswith("…") and len(command) <= 200 and f'exec_shell("{long}")'.startswith(command[:-1])
    cells = {row.split("│")[1].strip(): row.split("│")[2].strip() for row in done.stdout.splitlines()
             if row.count("│") == 3}
    assert {"TTD (s)", "env steps", "env tokens (in/out)", "model calls", "model tokens (in/out)",
            "trajectory"} <= set(cells), cells
    assert "in_tokens" not in cells and "steps" not in cells and cells["model calls"].isdigit()
    assert cells["env steps"] == "2" and float(cells["TTD (s)"]) >= 0


def test_problems_show_prints_the_longest_id_whole_at_80_columns():
    longest = max((p.id for p in list_problems()), key=len)
    done = CliRunner().invoke(problems_app, ["show", longest], env={"COLUMNS": "80"})
    assert done.exit_code == 0 and done.stdout.splitlines()[0] == longest
    assert max(len(line) for line in done.stdout.splitlines()) <= 80
