"""A training run's reward lines by step, read from its metrics.jsonl: for `aoi report` and `aoi view` alike."""

from __future__ import annotations

import json
from pathlib import Path


def read_steps(path: Path) -> list[dict]:
    """Return the reward lines of a metrics.jsonl by step (garbled lines skipped; the last line of a step wins).

    Example:
        >>> import tempfile; p = Path(tempfile.mkdtemp()) / "metrics.jsonl"
        >>> _ = p.write_text('{"step": 1, "reward": 0.5}\\n{"step": 1, "reward": 0.7}\\n{"train_loss": 0}\\n{"ste')
        >>> read_steps(p)
        [{'step': 1, 'reward': 0.7}]
    """
    steps = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue  # a torn last line of a killed run, or of one still writing
        if (isinstance(record, dict) and isinstance(record.get("reward"), int | float)
                and isinstance(record.get("step"), int | float)):
            steps[int(record["step"])] = record
    return [steps[step] for step in sorted(steps)]
