"""`aoi report`: a run's results as Markdown and as a self-contained HTML page, optionally compared with other runs."""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass
from pathlib import Path

from aoi.evaluate.baseline import baseline_section
from aoi.evaluate.charts import Chart
from aoi.evaluate.compare import compare
from aoi.evaluate.gains import split_sections
from aoi.evaluate.metrics import group_by, outcomes, summarize
from aoi.evaluate.render import Section, Table, html, markdown
from aoi.evaluate.report_tables import (
    app_section,
    common_note,
    common_problems,
    flipped_section,
    problem_key,
    problems_section,
)
from aoi.evaluate.results import ResultsLog
from aoi.evaluate.summary import Summary, build_summary, read_sessions
from aoi.view.pages import write_pages

TOKEN_SERIES = (("env in", "in_tokens"), ("env out", "out_tokens"), ("model in", "model_in_tokens"),
                ("model out", "model_out_tokens"))
K_HEADERS = ["problems", "episodes", "avg@k %", "best@k %", "std %", "strict avg@k %", "strict best@k %"]


@dataclass
class Run:
    """One run directory, read back."""

    path: Path
    rows: list[dict]
    summary: Summary
    label: str | None = None  # the name given as LABEL=DIR (None: the folder's name)


def run_arg(value: str | Path) -> tuple[str | None, Path]:
    """Return (label, directory) of a run argument, DIR or LABEL=DIR (an existing directory named with "=" is a DIR).

    Example:
        >>> run_arg("sft=runs/sft"), run_arg("runs/base")
        (('sft', PosixPath('runs/sft')), (None, PosixPath('runs/base')))
    """
    label, sep, path = str(value).partition("=")
    if isinstance(value, Path) or not sep or "/" in label or Path(value).is_dir():
        return None, Path(value)
    if not label.strip() or not path.strip():
        raise ValueError(f"{value!r} is not a run: give DIR or LABEL=DIR with both parts, e.g. sft=runs/sft")
    return label.strip(), Path(path)


def load_runs(values: list[str | Path]) -> list[Run]:
    """Read runs given as DIR or LABEL=DIR (the first is the base, the others come from --compare); an unreadable one
    or a label used twice is a ValueError naming the argument."""
    runs = []
    for index, value in enumerate(values):
        try:
            runs.append(load_run(*reversed(run_arg(value))))
        except ValueError as exc:
            raise ValueError(f"--compare {value}: {exc}" if index else str(exc)) from None
    labels = [run.label for run in runs if run.label]
    if len(set(labels)) < len(labels):
        twice = sorted({label for label in labels if labels.count(label) > 1})
        raise ValueError(f"the label(s) {', '.join(twice)} name more than one run; give each run its own LABEL=DIR")
    return runs


def load_run(path: str | Path, label: str | None = None) -> Run:
    """Read a run directory written by `aoi eval --out` (results.jsonl, with summary.json for sessions if present)."""
    path = Path(path)
    if not (path / "results.jsonl").is_file():
        raise ValueError(f"{path} has no results.jsonl; pass a directory written by `aoi eval --out DIR`")
    rows, _ = ResultsLog(path / "results.jsonl").read()
    try:
        run = json.loads((path / "summary.json").read_text(encoding="utf-8")).get("run") or {}
    except (OSError, ValueError):
        run = {}
    return Run(path, rows, build_summary(rows, run, read_sessions(path / "summary.json")), label)


def _pct(value: float) -> str:
    return f"{100 * value:.1f}"


def _k_cells(stats: dict) -> list[str]:
    """Return the success cells of one group (counts, then percentages)."""
    return [str(stats["problems"]), str(stats["episodes"]), _pct(stats["avg_at_k"]), _pct(stats["best_at_k"]),
            _pct(stats["std"]), _pct(stats["strict_avg_at_k"]), _pct(stats["strict_best_at_k"])]


def _success_chart(title: str, groups: dict[str, dict], keys: tuple[str, ...] = ("avg_at_k", "best_at_k",
                   "strict_avg_at_k", "strict_best_at_k")) -> Chart:
    """Return bars of the given success figures (avg@k, best@k and their strict versions) per group, in percent."""
    def label(key: str) -> str:  # strict_avg_at_k -> strict avg@k
        return key.replace("_at_", "@").replace("_", " ")

    return Chart(title=title, labels=list(groups),
                 series={label(key): [100 * s[key] for s in groups.values()] for key in keys}, unit="%",
                 max_value=100.0)


def success_section(summary: Summary) -> Section:
    """Return success per task type and overall, parity and strict."""
    groups = {**summary.by_task_type, "overall": summary.overall}
    rows = [[name, *_k_cells(stats)] for name, stats in groups.items()]
    return Section("Success by task type", "Parity success follows AIOpsLab's scoring; strict success closes its "
                   "oracle holes. avg@k: mean over every attempt; best@k: share of problems solved at least once; "
                   "std: spread of the per-attempt success rates.", [Table(["task type", *K_HEADERS], rows)],
                   [_success_chart("Success by task type (%)", groups)])


def family_section(summary: Summary) -> Section:
    """Return success per fault family, parity and strict."""
    rows = [[name, *_k_cells(stats)] for name, stats in summary.by_family.items()]
    return Section("Success by family", "", [Table(["family", *K_HEADERS], rows)],
                   [_success_chart("avg@k by family, parity and strict (%)", summary.by_family,
                                   ("avg_at_k", "strict_avg_at_k"))])


def attempts_section(rows: list[dict]) -> Section:
    """Return how many problems had 0, 1, ..., k successful attempts, per task type."""
    groups = {**group_by(rows, "task_type"), "overall": rows}
    k = max((len(a) for a in outcomes(rows)), default=0)
    counts = {name: [sum(sum(a) == n for a in outcomes(group)) for n in range(k + 1)] for name, group in groups.items()}
    headers = ["task type", *(f"{n}/{k} solved" for n in range(k + 1))]
    series = {f"{n}/{k}": [float(c[n]) for c in counts.values()] for n in range(k + 1)}
    return Section("Attempts distribution", f"Problems by how many of their k={k} attempts succeeded (parity).",
                   [Table(headers, [[name, *map(str, c)] for name, c in counts.items()])],
                   [Chart(title="Problems by successful attempts", labels=list(counts), series=series, digits=0)])


def _spread(values: list) -> str:
    """Return 'mean / median / max' of the values given."""
    values = [v for v in values if v is not None] or [0]
    return f"{statistics.fmean(values):.1f} / {statistics.median(values):.0f} / {max(values):.0f}"


def cost_section(rows: list[dict]) -> Section:
    """Return steps, tokens, TTx and wall seconds per task type (mean / median / max)."""
    groups = {**group_by(rows, "task_type"), "overall": rows}
    def spread(group: list[dict], key: str) -> str:
        return _spread([r.get(key) for r in group])

    table = Table(["task type", "TTx s", "env steps", "model calls", "env tokens in", "env tokens out",
                   "model tokens in", "model tokens out", "wall s"],
                  [[name, *(spread(g, key) for key in ("ttx", "steps", "model_steps", "in_tokens", "out_tokens",
                                                       "model_in_tokens", "model_out_tokens", "seconds"))]
                   for name, g in groups.items()])
    figures = summarize(rows)["by_task_type"]
    labels = list(figures)
    return Section("Time, steps and tokens", "Each cell: mean / median / max per episode. Environment tokens are "
                   "AIOpsLab's in_tokens/out_tokens; model tokens are what the agents' models read and wrote.",
                   [table], [Chart(title="Mean steps per episode", labels=labels, series={
                       "env steps": [s["steps"] for s in figures.values()],
                       "model calls": [s["model_steps"] for s in figures.values()]}),
                             Chart(title="Mean tokens per episode", labels=labels, series={
                                 label: [s[key] for s in figures.values()] for label, key in TOKEN_SERIES},
                                   digits=0)])


def failures_section(summary: Summary) -> Section:
    """Return the primary failure reasons and the issues met on the way."""
    reasons = summary.overall["failures"]
    failed = sum(reasons.values())
    issues = Table(["issue", "steps", "episodes", "failed episodes"],
                   [[name, *(str(v[key]) for key in ("steps", "episodes", "failed_episodes"))]
                    for name, v in summary.issues.items()])
    text = (f"{failed} of {summary.overall['episodes']} episodes failed (parity). The last table counts steps with "
            "format errors, tool errors and denied approvals.")
    if not failed:
        return Section("Failure reasons", text, [issues])
    ordered = sorted(reasons.items(), key=lambda kv: -kv[1])
    table = Table(["reason", "episodes", "% of failures"], [[r, str(n), _pct(n / failed)] for r, n in ordered])
    chart = Chart(title="Failed episodes by reason", labels=[r for r, _ in ordered],
                  series={"episodes": [float(n) for _, n in ordered]}, digits=0)
    return Section("Failure reasons", text, [table, issues], [chart])


def _signed(value: float | None) -> str:
    return "" if value is None else f"{value:+.1f}"


def _names(runs: list[Run]) -> list[str]:
    """Return a short unique name per run (its label, else the folder name, or the path when two share a name)."""
    names = [run.label or run.path.name for run in runs]
    if len(set(names)) < len(names):
        names = [run.label or str(run.path) for run in runs]
    return names if len(set(names)) == len(names) else [f"{name} (#{i + 1})" for i, name in enumerate(names)]


def comparison(runs: list[Run]) -> tuple[list[list[dict]], str]:
    """Return each run's rows restricted to the problems every run has, and the sentence that says so."""
    common, extra = common_problems([run.rows for run in runs])
    rows = [[row for row in run.rows if problem_key(row) in common] for run in runs]
    return rows, common_note(_names(runs), common, extra)


def compare_section(runs: list[Run]) -> Section:
    """Return the runs side by side on their common problems, per task type and overall, with deltas."""
    names = _names(runs)
    common_rows, note = comparison(runs)
    rows = compare([summarize(r) for r in common_rows])
    headers = ["group", "metric", names[0], *(f"{label}{name}" for name in names[1:] for label in ("", "Δ "))]
    cells = [[r["group"], r["metric"], _number(r["values"][0]),
              *(c for v, d in zip(r["values"][1:], r["deltas"][1:]) for c in (_number(v), _signed(d)))]
             for r in rows]
    avg = [r for r in rows if r["metric"] == "avg@k %"]
    chart = Chart(title="avg@k by run (%)", labels=[r["group"] for r in avg],
                  series={name: [r["values"][i] or 0.0 for r in avg] for i, name in enumerate(names)}, unit="%",
                  max_value=100.0)
    return Section("Comparison", f"{note} Deltas are each run minus {names[0]}; success in percentage points, "
                   "steps and tokens as means per episode.", [Table(headers, cells)], [chart])


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def _meta(run: Run) -> list[str]:
    """Return the run's one-line facts: model, k, seed, episodes, wall time, throughput."""
    info, s = run.summary.run, run.summary
    facts = [*([f"split {info['split']} of {info.get('data', '?')}"] if info.get("split") else []),
             f"model {info.get('model', '?')}", f"k={info.get('k', s.overall['k'])}", f"seed {info.get('seed', '?')}",
             f"max steps {info.get('max_steps', '?')}", f"{s.overall['problems']} problems",
             f"{s.overall['episodes']} episodes", f"wall {s.wall_seconds:.0f} s over {len(s.sessions)} session(s)",
             f"{s.episodes_per_hour:.0f} episodes/h"]
    stopped = sum(1 for session in s.sessions if session.get("interrupted"))
    if stopped:  # Ctrl-C, SIGTERM, or killed (a session is on record as interrupted until it ends on its own)
        facts.append(f"{stopped} session(s) interrupted, {s.pending} episode(s) missing")
    return [" · ".join(facts)]


def judged_section(runs: list[Run]) -> Section:
    """Return each run's success beside its forced-submit successes and its constant-answer baseline."""
    return baseline_section(_names(runs), [run.summary for run in runs])


def report_paths(run_dir: Path, out: str | Path | None) -> tuple[Path, Path]:
    """Return the Markdown and HTML paths: out with .md and .html suffixes (default RUN_DIR/report)."""
    base = Path(out) if out else Path(run_dir) / "report"
    base = base.with_suffix("") if base.suffix in (".md", ".html") else base
    return base.parent / f"{base.name}.md", base.parent / f"{base.name}.html"


def gain_sections(runs: list[Run]) -> list[Section]:
    """Return one section per split part the runs hold: success over seeds per run, deltas against the first."""
    return split_sections(_names(runs), [run.rows for run in runs])


def pages(runs: list[Run], folder: Path) -> dict[str, str]:
    """Write the runs' trajectory pages into folder/view (aoi.view); return {problem or trajectory id: its href}."""
    written = write_pages([(name, run.path) for name, run in zip(_names(runs), runs)], folder / "view")
    return {key: f"view/{name}" for key, name in written.items()}


def write_report(run_dir: str | Path, compare_dirs: list[str | Path] = (), out: str | Path | None = None
                 ) -> tuple[Path, Path]:
    """Write the report of a run (and its comparison with other runs) as Markdown and HTML; return both paths.

    Runs are given as DIR or LABEL=DIR (the label names the run in tables; default: the folder's name).

    Example:
        >>> write_report("base=runs/base", ["sft=runs/sft", "runs/grpo"])  # doctest: +SKIP
        (PosixPath('runs/base/report.md'), PosixPath('runs/base/report.html'))
    """
    run, *others = load_runs([run_dir, *compare_dirs])
    md_path, html_path = report_paths(run.path, out)
    links = pages([run, *others], html_path.parent)
    sections = [*gain_sections([run, *others]), success_section(run.summary), judged_section([run, *others]),
                app_section(run.rows, K_HEADERS, _k_cells),
                family_section(run.summary), attempts_section(run.rows), cost_section(run.rows),
                failures_section(run.summary), problems_section(run.rows, links)]
    if others:
        sections += [compare_section([run, *others]),
                     flipped_section(_names([run, *others]), [r.rows for r in [run, *others]], links)]
    title = f"AOI eval report: {run.label or run.path.name}"
    md_path.write_text(markdown(title, _meta(run), sections), encoding="utf-8")
    html_path.write_text(html(title, _meta(run), sections), encoding="utf-8")
    return md_path, html_path
