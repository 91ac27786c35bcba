"""benchmarks/transcripts.py records the same transcripts twice and --compare names an id whose transcript changed
(and at which level), leaving out the env-level info keys --ignore-info-keys names."""

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
    data["transcripts"][ONLY]["env"][1][-1]["added"] = True  # an env-level info key a change added
    changed.write_text(json.dumps(data))
    done = transcripts("--compare", str(first), str(changed))
    assert (done.returncode, done.stdout) == (1, f"{ONLY}: env\n")
    assert transcripts("--compare", str(first), str(changed), "--ignore-info-keys", "added").returncode == 0
