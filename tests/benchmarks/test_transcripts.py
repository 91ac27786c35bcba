"""benchmarks/transcripts.py records the same transcripts twice and --compare names an id whose transcript changed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "transcripts.py"
ONLY = "k8s_target_port-misconfig-mitigation-1"


def transcripts(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], cwd=ROOT, capture_output=True, text=True)


def test_two_runs_match_and_a_changed_transcript_is_named(tmp_path):
    first, second, changed = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "c.json"
    for out in (first, second):
        assert transcripts("--out", str(out), "--only", ONLY).returncode == 0
    data = json.loads(first.read_text())
    assert set(data["sha256"]) == {ONLY}
    assert data["transcripts"][ONLY]["agent"]["results"]["success"] is True
    assert transcripts("--compare", str(first), str(second)).returncode == 0
    data["sha256"][ONLY] = "0" * 64
    changed.write_text(json.dumps(data))
    done = transcripts("--compare", str(first), str(changed))
    assert (done.returncode, done.stdout) == (1, f"{ONLY}\n")
