"""Training runs in `aoi report`: reward against steps and wall-clock for runs side by side, and the Echo figures.

A training run is a folder of `aoi train grpo --out DIR` (any engine): it has `metrics.jsonl` and no
`results.jsonl` (that is an eval run). Each line that has a `reward` is one optimizer step: `step`, `time` (unix
seconds), `reward`, `rewards/<term>/mean`, and under `--engine echo` `wall` plus the Echo figures (policy version,
staleness, idle shares, rollouts/s, ...). A resumed run logs some steps twice; the last line of a step wins.
A run with `heldout.jsonl` (benchmarks/learning.py writes one: {"step", "set", "success"} per evaluated checkpoint)
also gets a learning curve, reward and held-out success by step, in the report and as `learning_curve.png` beside it.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass
from pathlib import Path

from aoi.evaluate.linecharts import Lines, png, text
from aoi.evaluate.render import Section, Table, html, markdown
from aoi.evaluate.report import report_paths, run_arg
from aoi.store.steps import read_steps

METRICS, MANIFEST, HELD_OUT = "metrics.jsonl", "manifest.json", "heldout.jsonl"
MAX_ROWS = 20  # steps shown in the reward-by-step table (evenly spread, first and last included)


@dataclass
class TrainingRun:
    """One training run folder, read back: its steps (one dict per optimizer step, by step) and manifest."""

    path: Path
    steps: list[dict]
    manifest: dict
    label: str | None = None

    @property
    def name(self) -> str:
        """Return the label, else the folder's name."""
        return self.label or self.path.name

    @property
    def echo(self) -> bool:
        """Return whether the Echo engine wrote the run."""
        return self.manifest.get("engine") == "echo" or any(s.get("engine") == "echo" for s in self.steps)


def is_training_run(path: str | Path) -> bool:
    """Return whether a folder holds a training run (metrics.jsonl and no results.jsonl).

    Example:
        >>> is_training_run("/nonexistent")
        False
    """
    path = Path(path)
    return (path / METRICS).is_file() and not (path / "results.jsonl").is_file()


def load_training(path: str | Path, label: str | None = None) -> TrainingRun:
    """Read a training run folder; ValueError saying what is missing."""
    path = Path(path)
    if not is_training_run(path):
        what = "an eval run (results.jsonl)" if (path / "results.jsonl").is_file() else f"no {METRICS}"
        raise ValueError(f"{path} is {what}, not a training run; compare training runs (`aoi train grpo --out DIR`) "
                         "with training runs and eval runs with eval runs")
    steps = read_steps(path / METRICS)
    if not steps:
        raise ValueError(f"{path / METRICS} has no step with a reward yet; report it after the run's first step")
    try:
        manifest = json.loads((path / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        manifest = {}  # a run still in progress has no manifest yet
    return TrainingRun(path, steps, manifest if isinstance(manifest, dict) else {}, label)


def load_trainings(values: list[str | Path]) -> list[TrainingRun]:
    """Read training runs given as DIR or LABEL=DIR; names must be unique."""
    runs = [load_training(path, label) for label, path in map(run_arg, values)]
    names = [run.name for run in runs]
    if len(set(names)) < len(names):
        raise ValueError(f"two runs are named {', '.join(sorted({n for n in names if names.count(n) > 1}))}; give "
                         "each its own LABEL=DIR")
    return runs


def walls(steps: list[dict]) -> list[float]:
    """Return seconds since the run started at each step: Echo's `wall`, else `time` from the first step's start.

    Example:
        >>> walls([{"time": 100.0, "step_time": 30.0}, {"time": 160.0}])
        [30.0, 90.0]
    """
    if all("wall" in step for step in steps):
        return [float(step["wall"]) for step in steps]
    start = steps[0]["time"] - steps[0].get("step_time", 0.0)
    return [round(float(step["time"]) - start, 3) for step in steps]


def reward_lines(runs: list[TrainingRun]) -> tuple[Lines, Lines]:
    """Return reward against steps and against wall-clock seconds, one series per run."""
    by_step = {run.name: [(float(s["step"]), float(s["reward"])) for s in run.steps] for run in runs}
    by_wall = {run.name: list(zip(walls(run.steps), (float(s["reward"]) for s in run.steps), strict=True))
               for run in runs}
    return (Lines(title="Reward by step", series=by_step, x_label="step"),
            Lines(title="Reward by wall-clock", series=by_wall, x_label="seconds since the run started", x_min=0.0))


def terms(runs: list[TrainingRun]) -> list[str]:
    """Return the reward terms any run logged (rewards/<term>/mean), in first-seen order."""
    found = [key.split("/")[1] for run in runs for s in run.steps for key in s
             if key.startswith("rewards/") and key.endswith("/mean")]
    return list(dict.fromkeys(found))


def _f(value, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def runs_table(runs: list[TrainingRun]) -> Table:
    """Return one row per run: engine, base, steps, wall, s/step, reward first/last/best, each term's last mean."""
    names = terms(runs)
    rows = []
    for run in runs:
        wall, rewards, last = walls(run.steps)[-1], [s["reward"] for s in run.steps], run.steps[-1]
        engine = f"echo {last.get('mode', run.manifest.get('mode', ''))}".strip() if run.echo else "trl"
        rows.append([run.name, engine, str(run.manifest.get("base", "-")), str(run.steps[-1]["step"]), _f(wall, 0),
                     _f(wall / len(run.steps), 1), _f(rewards[0]), _f(rewards[-1]), _f(max(rewards)),
                     *(_f(last.get(f"rewards/{term}/mean")) for term in names)])
    return Table(["run", "engine", "base", "steps", "wall s", "s/step", "reward first", "last", "best",
                  *(f"{term} (last)" for term in names)], rows)


def _mean(values: list) -> float | None:
    values = [v for v in values if isinstance(v, int | float)]
    return statistics.fmean(values) if values else None


def _echo_row(run: TrainingRun) -> list[str]:
    """Return one Echo run's figures: last version, staleness over the run, idle shares and speed at the end."""
    steps, last = run.steps, run.steps[-1]
    stale_max = [s["staleness_max"] for s in steps if isinstance(s.get("staleness_max"), int | float)]
    syncs = [s.get("weight_sync_s") for s in steps if s.get("weight_sync_s")]  # 0: no sampler synced that step
    idle = {key: _f(100 * last[key], 0) if isinstance(last.get(key), int | float) else "-"
            for key in ("trainer_idle", "sampler_idle")}
    return [run.name, str(last.get("mode", "-")), str(last.get("samplers", run.manifest.get("samplers", "-"))),
            str(run.manifest.get("staleness", "-")), str(last.get("policy_version", "-")),
            _f(_mean([s.get("staleness_mean") for s in steps])), str(max(stale_max, default="-")),
            str(last.get("dropped_stale_total", "-")), _f(_mean([s.get("queue_depth") for s in steps]), 1),
            idle["trainer_idle"], idle["sampler_idle"], _f(_mean(syncs)), _f(last.get("rollouts_per_s")),
            _f(last.get("tokens_per_s"), 1)]


def echo_table(runs: list[TrainingRun]) -> Table | None:
    """Return the Echo figures per Echo run (None when no run is one)."""
    rows = [_echo_row(run) for run in runs if run.echo]
    headers = ["run", "mode", "samplers", "S", "policy version", "staleness mean", "staleness max", "dropped stale",
               "queue depth mean", "trainer idle %", "sampler idle %", "weight sync s", "rollouts/s", "tokens/s"]
    return Table(headers, rows) if rows else None


def _spread(count: int, limit: int = MAX_ROWS) -> list[int]:
    """Return up to `limit` indexes evenly spread over range(count), first and last included.

    Example:
        >>> _spread(3), _spread(100, 4)
        ([0, 1, 2], [0, 33, 66, 99])
    """
    if count <= limit:
        return list(range(count))
    return sorted({round(i * (count - 1) / (limit - 1)) for i in range(limit)})


def step_table(runs: list[TrainingRun]) -> Table:
    """Return reward and wall seconds per step, runs side by side (at most MAX_ROWS steps, evenly spread)."""
    cells = {run.name: {s["step"]: (s["reward"], w) for s, w in zip(run.steps, walls(run.steps), strict=True)}
             for run in runs}
    steps = sorted({step for by_step in cells.values() for step in by_step})
    rows = []
    for step in (steps[i] for i in _spread(len(steps))):
        row = [str(step)]
        for by_step in cells.values():
            reward, wall = by_step.get(step, (None, None))
            row += [_f(reward), _f(wall, 0)]
        rows.append(row)
    return Table(["step", *(f"{name} {what}" for name in cells for what in ("reward", "wall s"))], rows)


def training_sections(runs: list[TrainingRun]) -> list[Section]:
    """Return the report's sections: runs, reward by step, reward by wall-clock, and the Echo figures if any."""
    by_step, by_wall = reward_lines(runs)
    sections = [Section("Runs", "Reward is the weighted reward mean over each step's samples; a term's column is its "
                        "own mean at the last step.", [runs_table(runs)]),
                Section("Reward by step", "", [step_table(runs)], [by_step], [text(by_step)]),
                Section("Reward by wall-clock", "Seconds since the run started: Echo's `wall`; for TRL runs, from the "
                        "start of the first step.", [], [by_wall], [text(by_wall)])]
    curve = learning_curve(runs)
    if curve:
        sections.append(Section("Learning curve", f"Held-out success of the checkpoints ({HELD_OUT}) and reward, by "
                                "step; also drawn in learning_curve.png beside this report.", [], [curve],
                                [text(curve)]))
    echo = echo_table(runs)
    if echo:
        sections.append(Section("Echo", "Policy version after the last step; staleness (trainer version minus the "
                                "version a group was sampled at) over the run; idle shares, rollouts/s and tokens/s "
                                "at the end; weight sync: mean seconds a sampler took to load a new adapter.", [echo]))
    return sections


def learning_curve(runs: list[TrainingRun]) -> Lines | None:
    """Return reward and held-out success by step for the runs with a heldout.jsonl (None when none has one)."""
    series = {}
    for run in runs:
        held = [json.loads(line) for line in _lines(run.path / HELD_OUT)]
        for name in dict.fromkeys(h["set"] for h in held):
            series[f"{run.name} {name} success"] = sorted((float(h["step"]), float(h["success"])) for h in held
                                                          if h["set"] == name)
        if held:
            series[f"{run.name} reward"] = [(float(s["step"]), float(s["reward"])) for s in run.steps]
    return Lines(title="Learning curve", series=series, x_label="step") if series else None


def _lines(path: Path) -> list[str]:
    """Return a file's non-empty lines (none when it is missing)."""
    return [line for line in path.read_text().splitlines() if line.strip()] if path.is_file() else []


def _meta(runs: list[TrainingRun]) -> list[str]:
    """Return one line per run: its folder, base and kind."""
    return [f"{run.name}: {run.path} · base {run.manifest.get('base', '?')} · {len(run.steps)} step(s) logged"
            for run in runs]


def write_training_report(run_dir: str | Path, compare_dirs: list[str | Path] = (), out: str | Path | None = None
                          ) -> tuple[Path, Path]:
    """Write training runs side by side as Markdown (text charts) and HTML (SVG); return both paths.

    Example:
        >>> write_training_report("colocated=runs/echo-c", ["async=runs/echo-a"])  # doctest: +SKIP
        (PosixPath('runs/echo-c/report.md'), PosixPath('runs/echo-c/report.html'))
    """
    runs = load_trainings([run_dir, *compare_dirs])
    sections, title = training_sections(runs), f"AOI training report: {runs[0].name}"
    md_path, html_path = report_paths(runs[0].path, out)
    md_path.parent.mkdir(parents=True, exist_ok=True)
    md_path.write_text(markdown(title, _meta(runs), sections), encoding="utf-8")
    curve = learning_curve(runs)
    if curve:
        png([curve], md_path.parent / "learning_curve.png")
    html_path.write_text(html(title, _meta(runs), sections), encoding="utf-8")
    return md_path, html_path
