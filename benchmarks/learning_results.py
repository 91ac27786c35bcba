"""The figures of benchmarks/learning.py: per variant and held-out set, the learning curve, and learning.json.

Per variant and set (from each evaluation's results.jsonl): AIOpsLab success and strict success overall (mean over
all episodes, and per seed for the spread) and per task type, the successes that came from a forced submit at the
iteration limit (when `aoi eval` records them), the episodes that ended on an error instead of an answer (e.g. the
model server timing out: failures too, as AIOpsLab counts them, but not the model's), the Observer's format-valid
rate, environment steps, and episode seconds per Observer decision. Episode by episode (the same key and seed), what
SFT gained and lost against the base and GRPO against SFT, with the exact sign test over those episodes (McNemar's
exact test: how likely a split at least that uneven is when neither variant is better; the seeds of one key often
end alike, so the episodes are not independent and p reads optimistic). The curve: held-out-target success of the SFT
adapter at its checkpoints (step 0 is the base) and of GRPO at its checkpoints (x continues after the SFT's last
step), with GRPO's reward by step.
"""

from __future__ import annotations

import json
import math
import statistics
from collections import defaultdict
from pathlib import Path

FORCED = ("forced_submit", "forced")  # the row field `aoi eval` marks a forced submit with (the first one present)
STATE = ("problem_id", "target", "seed", "decision_index")  # what names a GRPO sample's state in samples.jsonl
COMPARED = (("sft", "base"), ("grpo", "sft"))  # (variant, the variant it is compared with episode by episode)


def rows(run: str | Path) -> list[dict]:
    """Return an evaluation's result rows."""
    path = Path(run) / "results.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.is_file() else []


def _mean(values: list) -> float | None:
    values = [float(v) for v in values if v is not None]
    return round(statistics.fmean(values), 4) if values else None


def _forced(row: dict) -> bool | None:
    """Return whether a row's answer came from a forced submit (None when the run does not record it)."""
    return next((bool(row[name]) for name in FORCED if name in row), None)


def figures(results: list[dict]) -> dict:
    """Return one variant's figures on one set (see the module docstring)."""
    observer = [r.get("replies", {}).get("observer", {}) for r in results]
    decisions = sum(o.get("replies", 0) for o in observer)
    by_seed, by_type = defaultdict(list), defaultdict(list)
    for row in results:
        by_seed[row["seed"]].append(row["success"])
        by_type[row["task_type"]].append(row["success"])
    seed_rates = [statistics.fmean(v) for _, v in sorted(by_seed.items())]
    forced = [_forced(r) for r in results if r["success"]]
    return {"episodes": len(results), "success": _mean([r["success"] for r in results]),
            "success_seed_std": round(statistics.pstdev(seed_rates), 4) if seed_rates else None,
            "success_by_seed": [round(rate, 4) for rate in seed_rates],
            "strict": _mean([r["strict_success"] for r in results]),
            "by_task_type": {t: _mean(v) for t, v in sorted(by_type.items())},
            "forced_submit_successes": None if None in forced else sum(forced),
            "errors": sum(1 for r in results if r.get("error")),
            "format_valid": round(1 - sum(o.get("format_errors", 0) for o in observer) / decisions, 4)
            if decisions else None,
            "steps": _mean([r.get("steps") for r in results]),
            "seconds_per_decision": round(sum(r.get("seconds", 0) for r in results) / decisions, 2)
            if decisions else None}


def baselines(run: str | Path) -> dict | None:
    """Return the constant-answer baselines an evaluation's summary.json holds, when `aoi eval` writes them."""
    path = Path(run) / "summary.json"
    summary = json.loads(path.read_text()) if path.is_file() else {}
    found = {k: v for k, v in summary.items() if "baseline" in k}
    return found or None


def table(evaluations: dict[str, dict]) -> dict:
    """Return {variant: {set: figures}} from the evaluation phases' records ({variant: {"runs": {set: dir}}})."""
    return {variant: {name: {**figures(rows(run)), "constant_baseline": baselines(run)}
                      for name, run in record["runs"].items()}
            for variant, record in evaluations.items()}


def comparisons(evaluations: dict[str, dict]) -> dict:
    """Return {"VARIANT vs OTHER": {set: paired figures}} for each pair of COMPARED that was evaluated on a set."""
    found = {}
    for variant, other in COMPARED:
        if variant in evaluations and other in evaluations:
            runs, others = evaluations[variant]["runs"], evaluations[other]["runs"]
            found[f"{variant} vs {other}"] = {name: paired(rows(runs[name]), rows(others[name]))
                                              for name in runs if name in others}
    return found


def paired(results: list[dict], others: list[dict]) -> dict:
    """Return the episodes both runs hold (the same key and seed), those the first solved and the second did not
    (gained), the reverse (lost), and the sign test's p over gained and lost."""
    def episode(row: dict) -> str:
        return f"{row['problem_id']}{'@' + row['target'] if row.get('target') else ''} seed {row['seed']}"

    mine, theirs = ({episode(r): bool(r["success"]) for r in found} for found in (results, others))
    both = sorted(mine.keys() & theirs.keys())
    gained = [e for e in both if mine[e] and not theirs[e]]
    lost = [e for e in both if theirs[e] and not mine[e]]
    return {"episodes": len(both), "gained": gained, "lost": lost, "sign_test_p": sign_test(len(gained), len(lost))}


def sign_test(gained: int, lost: int) -> float:
    """Return the exact two-sided sign test's p: the chance of a split of gained + lost episodes at least this uneven
    when each goes either way with probability 1/2 (1.0 when there is none).

    Example:
        >>> sign_test(0, 1), sign_test(8, 0), sign_test(3, 3), sign_test(0, 0)
        (1.0, 0.00781, 1.0, 1.0)
    """
    total = gained + lost
    tail = sum(math.comb(total, k) for k in range(min(gained, lost) + 1)) / 2 ** total
    return float(f"{min(1.0, 2 * tail):.3g}")


def print_table(results: dict) -> None:
    """Print the table: one line per variant and set."""
    print(f"{'variant':14} {'set':18} {'n':>3} {'success':>8} {'±seeds':>7} {'strict':>7} {'forced':>6} "
          f"{'errors':>6} {'format':>7} {'steps':>6} {'s/dec':>6}  per task type")
    for variant, sets in results.items():
        for name, f in sets.items():
            types = " ".join(f"{t[:4]} {v:.2f}" for t, v in f["by_task_type"].items())
            print(f"{variant:14} {name:18} {f['episodes']:3d} {_n(f['success'], 3):>8} "
                  f"{_n(f['success_seed_std'], 3):>7} {_n(f['strict'], 3):>7} "
                  f"{_n(f['forced_submit_successes'], 0):>6} {_n(f.get('errors'), 0):>6} {_n(f['format_valid'], 3):>7} "
                  f"{_n(f['steps'], 1):>6} {_n(f['seconds_per_decision'], 1):>6}  {types}")


def _n(value, digits: int) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def curve(results: dict, sft_points: dict[str, int], grpo_points: dict[str, int], work: Path) -> dict:
    """Return the learning curve: SFT and GRPO held-out-target success by step, and GRPO's reward by step."""
    target = "held-out targets"
    sft = [(step, results[v][target]["success"]) for v, step in sft_points.items() if v in results]
    last = max(sft_points.values(), default=0)
    grpo = [(last + step, results[v][target]["success"]) for v, step in grpo_points.items() if v in results]
    grpo_lines = _latest_per_step(_jsonl(work / "grpo" / "metrics.jsonl"), "reward")
    rewards = [(last + line["step"], line["reward"]) for line in grpo_lines]
    zero_std = [(line["step"], line["frac_reward_zero_std"]) for line in grpo_lines if "frac_reward_zero_std" in line]
    losses = _latest_per_step(_jsonl(work / "sft" / "metrics.jsonl"), "train/loss_first")
    return {"sft_success": sorted(sft), "grpo_success": sorted(grpo), "grpo_reward": rewards,
            "grpo_frac_reward_zero_std": zero_std, "grpo_groups": groups(_jsonl(work / "grpo" / "samples.jsonl")),
            "grpo_states": states(_jsonl(work / "grpo" / "states.jsonl")),
            "sft_steps": last,
            "sft_position_losses": [{k: v for k, v in line.items() if k == "step" or "/loss_" in k}
                                    for line in losses]}


def groups(batches: list[dict]) -> dict:
    """Return GRPO's groups counted from its samples.jsonl: all, those whose samples all succeeded or all failed
    (flat: no gradient from the success terms), and the flat ones whose samples were one decision drawn G times.

    Example:
        >>> a, b = {"decision": "a", "success": True}, {"decision": "b", "success": True}
        >>> groups([{"step": 0, "samples": [a, a]}, {"step": 1, "samples": [a, b]}])
        {'groups': 2, 'flat_success': 2, 'flat_one_decision': 1}
    """
    latest = {line["step"]: line["samples"] for line in batches}  # a resumed run draws its steps again
    found = defaultdict(list)
    for step, samples in latest.items():
        for sample in samples:
            found[(step, *(sample.get(k) for k in STATE))].append(sample)
    flat = [g for g in found.values() if len({s["success"] for s in g}) == 1]
    return {"groups": len(found), "flat_success": len(flat),
            "flat_one_decision": sum(len({s["decision"] for s in g}) == 1 for g in flat)}


def states(lines: list[dict]) -> dict:
    """Return GRPO's state choice counted from its states.jsonl (`rollout.varied_states`; {} without it): the states
    drawn, those kept (their first group's rewards differed), and of the rest, those drawn as one decision G times.

    Example:
        >>> states([{"varied": True, "decisions": ["a", "b"]}, {"varied": False, "decisions": ["a", "a"]}])
        {'states': 2, 'varied': 1, 'flat_one_decision': 1}
    """
    if not lines:
        return {}
    flat = [line for line in lines if not line["varied"]]
    return {"states": len(lines), "varied": len(lines) - len(flat),
            "flat_one_decision": sum(len(set(line["decisions"])) == 1 for line in flat)}


def _latest_per_step(lines: list[dict], key: str) -> list[dict]:
    """Return the lines holding `key`, one per step in step order: a resumed run logs again the steps after its
    checkpoint, and the later line is the one that counts.

    Example:
        >>> [x["r"] for x in _latest_per_step([{"step": 1, "r": 0}, {"step": 2, "r": 1}, {"step": 2, "r": 2}], "r")]
        [0, 2]
    """
    return [line for _, line in sorted({line["step"]: line for line in lines if key in line}.items())]


def _jsonl(path: Path) -> list[dict]:
    """Return a JSONL file's records (none when it is missing; a torn last line skipped)."""
    if not path.is_file():
        return []
    records = []
    for line in path.read_text().splitlines():
        try:
            records.append(json.loads(line))
        except ValueError:
            continue
    return records


def chart(learning: dict, path: Path) -> Path:
    """Write the curve as a PNG: held-out-target success by step (SFT, then GRPO), then GRPO's reward and its share
    of groups whose rewards were all equal, by GRPO step (on their own axis: GRPO takes far fewer steps than SFT);
    a run without GRPO (--quick) has the first panel only."""
    from aoi.evaluate.linecharts import Lines, png

    grpo = [(float(x), y) for x, y in learning["grpo_success"] if y is not None]
    trained = bool(grpo or learning["grpo_reward"])  # a run with GRPO
    success = Lines(title="Held-out-target success", x_label="training step (SFT, then GRPO)" if trained else
                    "SFT step", x_min=0.0, series={
                        "SFT": [(float(x), y) for x, y in learning["sft_success"] if y is not None],
                        **({"SFT+GRPO": grpo} if trained else {})})
    if not trained:
        return png([success], path)
    offset = learning.get("sft_steps", 0)
    reward = Lines(title="GRPO reward (mean of the group)", x_label="GRPO step", x_min=0.0,
                   series={"reward": [(float(x - offset), y) for x, y in learning["grpo_reward"]]})
    flat = Lines(title="GRPO: share of groups whose rewards were all equal (no gradient)", x_label="GRPO step",
                 x_min=0.0, series={"share": [(float(x), y) for x, y in learning.get("grpo_frac_reward_zero_std", [])]})
    return png([success, reward, flat], path)
