"""card.md: how a dataset was made (sources, models, env versions, counts, split rules and seed), in Markdown."""

from __future__ import annotations

import importlib.metadata
from collections import Counter
from pathlib import Path

from aoi.data import splits as split_rules
from aoi.data.views import problem_key
from aoi.store.signals import episode_signals
from aoi.trajectory import Trajectory


def _version() -> str:
    """Return the installed aoi version ("unknown" when it is not installed as a package)."""
    try:
        return importlib.metadata.version("aoi")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def _roles_models(config: dict) -> str:
    """Return each role's model spec as the run's config.json recorded it."""
    roles = config.get("models") or {}
    specs = {role: m.get("spec") for role, m in roles.items() if isinstance(m, dict)}
    if not specs:
        return (config.get("model") or {}).get("spec", "-")
    if len(set(specs.values())) == 1:
        return next(iter(specs.values()))
    return ", ".join(f"{role}={spec}" for role, spec in specs.items())


def _share(trajs: list[Trajectory], key: str) -> str:
    """Return how many episodes have a true signal, as 'n/N (p%)'."""
    hits = sum(bool(episode_signals(t)[key]) for t in trajs)
    return f"{hits}/{len(trajs)} ({100 * hits / max(len(trajs), 1):.0f}%)"


def _sources(sources, trajs: list[Trajectory]) -> list[str]:
    """Return the table of source runs."""
    lines = ["| run | models (per role) | episodes | env_version | seeds | generated on |", "|---|---|---|---|---|---|"]
    for source in sources:
        ids = {t.id for t in source.trajectories}
        kept = [t for t in trajs if t.id in ids]
        versions = sorted({t.env_version or "(not recorded)" for t in kept})
        seeds = sorted({t.seed for t in kept})
        lines.append(f"| `{source.path}` | {_roles_models(source.config)} | {len(kept)} | {', '.join(versions)} | "
                     f"{', '.join(map(str, seeds))} | {_generated(source.selection)} |")
    return lines


def _generated(selection: dict) -> str:
    """Return what `aoi data generate` selected for a run ("-" for a run it did not make)."""
    if not selection:
        return "-"
    split = selection.get("split")
    side = f"train side of {split} (rules {selection.get('rules')})" if split else "no split"
    return f"problems {selection.get('problems')}, targets {selection.get('targets') or 'default'}, {side}"


def _mismatches(sources, rules) -> list[str]:
    """Return a warning for each run generated on a split side under other split rules than this export's."""
    warnings = [f"Warning: `{s.path}` was generated on the train side of {s.selection['split']} under other split "
                f"rules ({s.selection.get('rules')}) than these; its episodes may fall on the test side here."
                for s in sources if s.selection.get("split") and s.selection.get("rules") != vars(rules)]
    return [*warnings, ""] if warnings else []


def _versions(trajs: list[Trajectory]) -> list[str]:
    """Return a warning when the episodes come from several environment versions (their prefixes replay apart)."""
    versions = sorted({t.env_version or "(not recorded)" for t in trajs})
    if len(versions) < 2:
        return []
    return [f"Warning: the episodes come from environment versions {', '.join(versions)}; an RL row's prefix "
            "replays its state only under its own `env_version` (a column of every row).", ""]


def _splits(splits: dict, rules, trajs: list[Trajectory]) -> list[str]:
    """Return the split section: the rules, their parameters and the counts on each side."""
    doc = split_rules.__doc__.split("Rules:\n", 1)[1].strip()
    lines = [doc, "", f"Rules version {splits.get('version', 1)}. Parameters: seed {rules.seed}, target_ratio "
             f"{rules.target_ratio}, family_ratio {rules.family_ratio}, app {rules.app or '(chosen by seed)'}, "
             f"no_fault_ratio {rules.no_fault_ratio} (no-fault keys on the test side of by_target and by_family: "
             f"{', '.join(splits['by_target'].get('held_out_no_fault', [])) or 'none'}).", "",
             "| rule | train keys | test keys | episodes in train | episodes in test | held out |",
             "|---|---|---|---|---|---|"]
    names = Counter(problem_key(t.problem_id, t.target) for t in trajs)
    for rule in split_rules.RULES:
        side = {s: sum(names[k] for k in splits[rule][s]) for s in ("train", "test")}
        held = splits[rule]["held_out_names"]
        shown = ", ".join(held[:8]) + (f", ... ({len(held)} in all, see splits.json)" if len(held) > 8 else "")
        lines.append(f"| {rule} | {len(splits[rule]['train'])} | {len(splits[rule]['test'])} | {side['train']} | "
                     f"{side['test']} | {shown} |")
    return lines


def write_card(path: Path, sources, trajs: list[Trajectory], counts: dict, splits: dict, rules,
               command: str = "") -> None:
    """Write card.md for an exported dataset."""
    policies = Counter(f"{t.policy.model}" + (f" + adapter {t.policy.adapter}" if t.policy.adapter else "")
                       + (f" (version {t.policy.version})" if t.policy.version else "") for t in trajs)
    sft = ", ".join(f"{role} {n}" for role, n in counts["sft"].items())
    lines = ["# AOI trajectories dataset", "",
             f"Made by `{command or 'aoi.data.export'}` with aoi {_version()} from {counts['episodes']} episodes "
             "(every recorded episode of each run; the twin's own verdicts, no LLM judge).", "",
             "## Sources", "", *_sources(sources, trajs), "", *_mismatches(sources, rules), *_versions(trajs),
             "Observer policies: " + "; ".join(f"{p} ({n} episodes)" for p, n in policies.most_common()) + ".",
             f"Verdicts: AIOpsLab success {_share(trajs, 'success')}, strict success "
             f"{_share(trajs, 'strict_success')}.",
             "", "## Views", "",
             f"- `sft/<role>/` and `sft/<role>.parquet`: one row per model call of the role whose status is ok (or a "
             f"tool error after a well-formed call) and whose text is not empty: `prompt` (the messages sent) -> "
             f"`completion` (the decision). Rows: {sft}.",
             f"- `rl/` and `rl.parquet`: {counts['rl']} rows, one per replayable Observer decision: `prompt`, "
             f"`prefix` (the Observer's earlier decision texts: replaying them with the same problem, target, seed "
             f"and fixed Probe/Executor restores the state), `decision_index`, the decision taken (`completion`). The "
             f"{counts['rl_starts']} rows with decision_index 0 are the episode starts, one per (problem_id, target, "
             f"seed).",
             "- Every row: problem_id, task_type, family, app, target (\"\" for none), seed, success, strict_success "
             "(of the episode it came from), trajectory_id, env_version.", "",
             "## Splits (`splits.json`: keys are problem_id@target)", "", *_splits(splits, rules, trajs), "",
             "## Loading", "", "```python", "from datasets import load_from_disk",
             "observer = load_from_disk(\"DIR/sft/observer\")  # or Dataset.from_parquet(\"DIR/sft/observer.parquet\")",
             "```", ""]
    path.write_text("\n".join(lines))
