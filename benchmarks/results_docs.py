"""Render the result files under benchmarks/results/ into docs/results.md, and the README's learning headline.

Each JSON file there gets a section from the renderer its name starts with (learning*.json, written by
benchmarks/learning.py: the table per variant and held-out set, the phase times, and the learning curve drawn from
the JSON's own curve into docs/images/NAME-curve.png; echo*.json, written by benchmarks/echo.py --results: each
mode's rates and its reward by step and by wall-clock). The README's block between the learning markers shows
learning.json's headline, table and curve, or says that the default run has not finished while that file does not
exist.
    .venv/bin/python benchmarks/results_docs.py            # rewrite docs/results.md, its charts and the README block
    .venv/bin/python benchmarks/results_docs.py --check    # exit 1 naming what differs (tests/benchmarks runs it)
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import learning_results

ROOT = Path(__file__).resolve().parent.parent
START, END = "<!-- learning:start -->", "<!-- learning:end -->"
NOT_YET = "The default run of `benchmarks/learning.py` has not finished: there are no learning figures yet."
NAMES = {"base": "base", "sft": "SFT", "grpo": "SFT+GRPO", "expert": "expert"}  # variant -> how a reader knows it


def load(root: Path) -> dict[str, dict]:
    """Return {file stem: data} of every result file under root/benchmarks/results, by name."""
    return {path.stem: json.loads(path.read_text(encoding="utf-8"))
            for path in sorted((root / "benchmarks" / "results").glob("*.json"))}


def variant_name(variant: str) -> str:
    """Return how the page names a variant.

    Example:
        >>> variant_name("grpo"), variant_name("sft@50")
        ('SFT+GRPO', 'SFT at 50% of its steps')
    """
    run, _, share = variant.partition("@")
    name = NAMES.get(run, run)
    return f"{name} at {share}% of its steps" if share else name


def number(value, digits: int = 3) -> str:
    """Return a figure as the page prints it ("-" where the run did not record it).

    Example:
        >>> number(0.25), number(None), number(3, 0)
        ('0.250', '-', '3')
    """
    return "-" if value is None else f"{value:.{digits}f}"


def baseline(table: dict, name: str) -> dict:
    """Return the constant-answer baseline `aoi eval` wrote for a held-out set (the same keys for every variant)."""
    found = (sets[name].get("constant_baseline") for sets in table.values() if name in sets)
    return next((b["baseline"] for b in found if b and "baseline" in b), {})


def table_lines(table: dict) -> list[str]:
    """Return the Markdown table: one row per variant and held-out set, then the constant answer on each set."""
    types = sorted({t for sets in table.values() for f in sets.values() for t in f["by_task_type"]})
    head = ["variant", "set", "episodes", "success", "± over seeds", "strict", *types,
            "forced-submit successes", "errors", "format-valid", "steps", "s/decision"]
    lines = ["| " + " | ".join(head) + " |", "|---|---|" + "---:|" * (len(head) - 2)]
    for variant, sets in table.items():
        for name, f in sets.items():
            lines.append(_row([variant_name(variant), name, str(f["episodes"]), number(f["success"]),
                               number(f["success_seed_std"]), number(f["strict"]),
                               *(number(f["by_task_type"].get(t)) for t in types),
                               number(f["forced_submit_successes"], 0), number(f.get("errors"), 0),
                               number(f["format_valid"]),
                               number(f["steps"], 1), number(f["seconds_per_decision"], 1)]))
    for name in dict.fromkeys(n for sets in table.values() for n in sets):
        figures = baseline(table, name)
        if figures:
            overall = figures.get("overall", {})
            lines.append(_row(["constant answer", name, f"problems: {overall.get('problems', '-')}",
                               _na(overall.get("success")), "-", _na(overall.get("strict_success")),
                               *(_na(figures.get(t, {}).get("success")) for t in types), "-", "-", "-", "-", "-"]))
    return lines


def paired_lines(data: dict) -> list[str]:
    """Return, per held-out set, what SFT gained and lost against the base and GRPO against SFT, episode by episode
    (none for a result written before the benchmark recorded it)."""
    lines = []
    for pair, sets in data.get("paired", {}).items():
        variant, _, other = pair.partition(" vs ")
        for name, found in sets.items():
            lines.append(f"- {variant_name(variant)} against {variant_name(other)} on {name}: {len(found['gained'])} "
                         f"gained, {len(found['lost'])} lost of {found['episodes']} episodes (sign test "
                         f"{_p(found['sign_test_p'])})" + _episodes("gained", found["gained"])
                         + _episodes("lost", found["lost"]))
    return lines


def _p(value: float) -> str:
    """Return a p-value as the page prints it.

    Example:
        >>> _p(1.0), _p(0.00781), _p(7.63e-06)
        ('p 1.000', 'p 0.008', 'p < 0.001')
    """
    return "p < 0.001" if value < 0.001 else f"p {value:.3f}"


def _episodes(verb: str, episodes: list[str], most: int = 4) -> str:
    """Return the first few episodes named, when there are any and only a few.

    Example:
        >>> _episodes("lost", ["a@ seed 1"]), _episodes("lost", [])
        ('; lost: a@ seed 1', '')
    """
    return f"; {verb}: {', '.join(episodes)}" if 0 < len(episodes) <= most else ""


def _na(value) -> str:
    return "n/a" if value is None else number(value)


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def run_lines(data: dict) -> list[str]:
    """Return where, how and on what the run was made."""
    machine, load = data["machine"], data["load_average"]
    settings = ", ".join(f"{k} {v}" for k, v in data["settings"].items())
    held_out = ", ".join(f"{s} {len(data['keys'][s])}" for s in ("held-out targets", "held-out families"))
    return [f"`{data['command']}` at commit `{data['commit']}`: size {data['size']}, seed {data['seed']}; keys: "
            f"{held_out}, each run with {data['settings']['seeds']} seeds.",
            "", f"Machine: {machine['cpu']}, {machine['cores']} cores, {machine['memory_gib']} GiB, Python "
            f"{machine['python']}; load average {_load(load['start'])} at the start, {_load(load['end'])} at the end.",
            "", f"Settings: {settings}."]


def _load(triple: list) -> str:
    return " / ".join(f"{x:.1f}" for x in triple)


def phase_lines(data: dict) -> list[str]:
    """Return the phase times, and the phases the run has not done."""
    seconds = data["phase_seconds"]
    lines = ["| phase | seconds |", "|---|---:|", *(f"| {n} | {s:.0f} |" for n, s in seconds.items()),
             f"| all | {sum(seconds.values()):.0f} |"]
    missing = data["phases_missing"]
    return lines + ([] if not missing else ["", f"Not done yet: {', '.join(missing)}."])


def chart_path(name: str) -> str:
    """Return where a result's learning curve is drawn, relative to docs/."""
    return f"images/{name}-curve.png"


LEGEND = ["Per variant and held-out set, from each `aoi eval`'s results.jsonl (benchmarks/learning_results.py):",
          "- success: AIOpsLab's success, the mean over every episode; ± over seeds: its standard deviation over the "
          "per-seed rates; strict: the strict verdict's mean; the task-type columns: success per task type;",
          "- forced-submit successes: successes whose submit the limits forced (the Observer's iterations or the "
          "environment's steps ran out), not the model's choice; errors: episodes that ended on an error, not an "
          "answer (a model server's timeout, for one), counted as failures;",
          "- format-valid: the share of the Observer's decisions without a format error; steps: environment steps "
          "per episode; s/decision: episode seconds per Observer decision;",
          "- constant answer: one answer given to every problem of a task type of the set, as `aoi eval` scores it "
          "(n/a: mitigation has no answer, so neither has the set overall)."]


CURVES = {"sft_success": "SFT held-out-target success by SFT step",
          "grpo_success": "SFT+GRPO held-out-target success by step (SFT's steps, then GRPO's)",
          "grpo_reward": "GRPO reward by step (SFT's steps, then GRPO's)",
          "grpo_frac_reward_zero_std": "GRPO's share of groups whose rewards were all equal, by GRPO step"}


def training_lines(data: dict) -> list[str]:
    """Return each training run's manifest figures, SFT's loss per decision position, and the curve as numbers."""
    lines = []
    for run, manifest in data["training"].items():
        metrics = manifest["metrics"]
        scalars = ", ".join(f"{k} {_figure(v)}" for k, v in metrics.items() if not isinstance(v, dict))
        lines.append(f"- {run.upper()} `{manifest['version']}`: {scalars}")
        if "position_losses" in metrics:
            start, end = metrics["position_losses"]["start"], metrics["position_losses"]["end"]
            losses = ", ".join(f"{k} {_figure(v)} → {_figure(end.get(k))}" for k, v in start.items() if k != "step")
            lines.append(f"- SFT loss per decision position, step {start['step']} → step {end['step']}: {losses}")
    curve = data["curve"]
    chosen = curve.get("grpo_states") or {}
    if chosen:
        alike = chosen["states"] - chosen["varied"] - chosen["flat_one_decision"]
        lines.append(f"- GRPO states (states.jsonl): {chosen['varied']} of {chosen['states']} kept (their first "
                     f"group's rewards differed); of the rest, {chosen['flat_one_decision']} drew one decision every "
                     f"time and {alike} different ones that ended alike")
    found = curve.get("grpo_groups") or {}
    if found.get("groups"):
        lines.append(f"- GRPO groups (samples.jsonl): {found['groups']}, of which {found['flat_success']} had the same "
                     f"success in every sample, {found['flat_one_decision']} of those being one decision drawn "
                     "every time")
    lines += [f"- {label}: " + ", ".join(f"{x}: {number(y)}" for x, y in curve[key])
              for key, label in CURVES.items() if curve[key]]
    return lines


def _figure(value) -> str:
    """Return a manifest's figure with four significant digits.

    Example:
        >>> _figure(0.09021), _figure(10.785186), _figure(4)
        ('0.09021', '10.79', '4')
    """
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def _titled(title: str, lines: list[str]) -> list[str]:
    """Return a titled block of lines after a blank one, or nothing when there are no lines."""
    return ["", title, "", *lines] if lines else []


def learning_section(name: str, data: dict) -> list[str]:
    """Return the section of one learning*.json."""
    lines = [f"## {name}.json: what SFT and GRPO teach a local Observer", "", *run_lines(data), "", *LEGEND, "",
             *table_lines(data["table"]), *_titled("Episode by episode (the same key and seed):", paired_lines(data)),
             "", "Training and the learning curve:", "", *training_lines(data),
             "", "Phase times:", "", *phase_lines(data)]
    if data["curve"]["sft_success"]:
        lines += ["", f"![Held-out-target success by training step (SFT, then GRPO) above GRPO's reward by step]"
                      f"({chart_path(name)})"]
    return lines


ECHO_COLUMNS = ("steps/s", "rollouts/s", "trainer idle", "sampler idle", "staleness", "dropped", "reward", "wall")


def echo_section(name: str, data: dict) -> list[str]:
    """Return the section of one echo*.json: each mode's rates (reward: the mean over the run's second half; wall:
    seconds of the training loop) and its reward by step, with the wall-clock second each step ended at."""
    start = f" from the adapter {data['init']}" if data.get("init") else ""
    return [f"## {name}.json: Echo's modes on one GRPO workload", "",
            f"`{data['command']}` at commit `{data['commit']}`: base {data['base']}{start}, {data['steps']} steps of "
            f"{data['groups']} group(s) x {data['generations']} samples, {data['cores']} cores, load average "
            f"{data['load_average_end']:.1f} at the end.", "",
            _row(["mode", *ECHO_COLUMNS]), _row(["---", *["---:"] * len(ECHO_COLUMNS)]),
            *(_row([mode, *(_figure(figures[c]) for c in ECHO_COLUMNS)]) for mode, figures in data["figures"].items()),
            "", "Reward by step (step, the second it ended: reward):", "",
            *(f"- {mode}: " + ", ".join(f"{p['step']} ({p['wall']:.0f} s): {p['reward']:.2f}" for p in points)
              for mode, points in data["curves"].items())]


RENDERERS = {"learning": learning_section, "echo": echo_section}


def page(results: dict[str, dict]) -> str:
    """Return docs/results.md."""
    lines = ["# Measured results", "",
             "Rendered by `benchmarks/results_docs.py` from the JSON files under `benchmarks/results/`: rerun it "
             "when one changes (`--check` fails, and the tests with it, while this page is stale).", ""]
    for name, data in results.items():
        render = next((section for prefix, section in RENDERERS.items() if name.startswith(prefix)), None)
        if render is None:
            raise SystemExit(f"error: no renderer for benchmarks/results/{name}.json; add one to "
                             "benchmarks/results_docs.py")
        lines += [*render(name, data), ""]
    if "learning" not in results:
        lines += ["## learning.json", "", NOT_YET, ""]
    return "\n".join(lines)


def headline(data: dict | None) -> str:
    """Return the README's learning block: the final variants' success per held-out set beside a constant answer,
    then the whole table and the learning curve."""
    if data is None:
        return NOT_YET
    parts = []
    for name in dict.fromkeys(n for sets in data["table"].values() for n in sets):
        rows = {v: sets[name] for v, sets in data["table"].items() if "@" not in v and name in sets}
        figures = ", ".join(f"{variant_name(v)} {number(f['success'])}" for v, f in rows.items())
        parts.append(f"on {name} ({next(iter(rows.values()))['episodes']} episodes each) {figures}"
                     f"{_constant(baseline(data['table'], name))}")
    lines = [f"AIOpsLab success of the {data['size']} run (base `{data['settings']['base']}`, commit "
             f"`{data['commit'][:12]}`): " + "; ".join(parts) + ".", "", *table_lines(data["table"]),
             *_titled("Episode by episode (the same key and seed):", paired_lines(data))]
    if data["curve"]["sft_success"]:
        lines += ["", f"![Held-out-target success by training step (SFT, then GRPO) above GRPO's reward by step]"
                      f"(docs/{chart_path('learning')})"]
    return "\n".join(lines)


def _constant(figures: dict) -> str:
    """Return what a constant answer scores on a set: overall, or per task type where a type has none."""
    overall = figures.get("overall", {}).get("success")
    if overall is not None:
        return f" (a constant answer: {number(overall)})"
    types = [f"{t} {number(f['success'])}" for t, f in sorted(figures.items())
             if t != "overall" and f["success"] is not None]
    return f" (a constant answer: {', '.join(types)})" if types else ""


def with_headline(readme: str, text: str) -> str:
    """Return the README with `text` between the learning markers."""
    if readme.count(START) != 1 or readme.count(END) != 1:
        raise SystemExit(f"error: README.md needs one {START} and one {END} line; put them back around the "
                         "Training section's headline")
    before, rest = readme.split(START)
    return f"{before}{START}\n{text}\n{END}{rest.split(END)[1]}"


def expected(root: Path) -> dict[Path, str]:
    """Return {file: the text it should hold} for docs/results.md and README.md."""
    results = load(root)
    readme = root / "README.md"
    return {root / "docs" / "results.md": page(results),
            readme: with_headline(readme.read_text(encoding="utf-8"), headline(results.get("learning")))}


def charts(root: Path) -> dict[Path, dict]:
    """Return {chart file: the curve it draws} of every result with a learning curve (as learning.py draws one)."""
    return {root / "docs" / chart_path(name): data["curve"] for name, data in load(root).items()
            if name.startswith("learning") and data["curve"]["sft_success"]}


def stale(root: Path) -> list[str]:
    """Return what differs from what the generator writes (charts: only whether they exist)."""
    found = [path for path, text in expected(root).items()
             if not path.is_file() or path.read_text(encoding="utf-8") != text]
    return [str(path.relative_to(root)) for path in found + [p for p in charts(root) if not p.is_file()]]


def main() -> None:
    """Write the pages, or with --check say which are stale."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when a page differs")
    parser.add_argument("--root", type=Path, default=ROOT, help="the repository (tests point it at a copy)")
    args = parser.parse_args()
    if args.check:
        differing = stale(args.root)
        if differing:
            sys.exit(f"error: not what benchmarks/results/ gives: {', '.join(differing)}; run "
                     "`.venv/bin/python benchmarks/results_docs.py` and commit what it writes")
        return
    for path, text in expected(args.root).items():
        path.write_text(text, encoding="utf-8")
    drawn = [learning_results.chart(curve, path) for path, curve in charts(args.root).items()]
    print("wrote docs/results.md, README.md's learning block", *(str(path) for path in drawn))


if __name__ == "__main__":
    main()
