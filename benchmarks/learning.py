"""What SFT and GRPO teach a local Observer (expert Probe/Executor/Compressor) about problems it never saw.

Phases, each writing into --work DIR and skipped once done (WORK/phases/NAME.json), so a killed run resumes at the
phase it was in (evaluations keep their finished episodes; SFT and GRPO continue from their newest checkpoint):
  teacher      the expert team on train-side keys (both by_target and by_family train) and on a few held-out-target
               keys whose decisions are only the SFT's held-out loss rows
  teacher-no-fault
               the expert team on the no-fault problems no held-out set draws, several seeds each (its "No" answers)
  export       `aoi data export` of both teachers' trajectories
  teacher-grpo, export-grpo
               the same on other train-side keys: GRPO's states (a policy SFT'd for epochs on the teacher's states
               answers those alike in every sample of a group, so their advantages are zero)
  sft          SFT by epochs from the base; loss per decision position (first apart) on train and held-out rows;
               checkpoints at the curve's shares
  grpo         GRPO from the SFT adapter (per-decision rollouts in the twin) on teacher-grpo's states, checkpoints at
               the curve's shares; default size: only the states where the SFT adapter's own first group ends with
               different rewards (`rollout: {varied_states: true}`, WORK/grpo/states.jsonl)
  eval-base, eval-sft@P, eval-sft, eval-grpo@P, eval-grpo, eval-expert
               `aoi eval` of each variant on the same keys and seeds: held-out targets (by_target test; detection
               half no-fault problems) and, for base, SFT, SFT+GRPO and the expert, held-out families (by_family
               test); @P: the checkpoint at P% of the steps, on held-out targets (the learning curve)
  report       the table, SFT against the base and GRPO against SFT episode by episode (gained, lost, sign test),
               the curve (WORK/learning_curve.png; WORK/grpo/heldout.jsonl for `aoi report WORK/grpo`) and the
               results JSON (always rewritten)
`--phase NAME` runs one phase alone (its inputs must be done). `--device cuda` trains and runs the local Observer on
a GPU in bf16 (default cpu; benchmarks/gpu/ runs it there). The Observer runs on vLLM (`local:...+engine=vllm`),
and GRPO draws its groups there (`--sampler-url vllm`, the trainer on torch), when aoi.models.vllm_server finds a vLLM
python and the base is not tiny; on transformers otherwise; the run prints which.

Sizes (learning_plan.SIZES): --tiny (tiny random model, one teacher episode and one for GRPO's states, 8
held-out-target and 2 held-out-family episodes: CI checks every phase); --quick (SmolLM2, base against SFT only:
32 teacher episodes, one epoch, no GRPO (grpo_steps 0 leaves its phases out), 16 + 4 held-out episodes per variant);
default (SmolLM2, 60 + 20 teacher episodes, 40 held-out-target (10 per task
type) and 20 held-out-family episodes per variant, two seeds per key). `--set KEY=VALUE` (repeatable) changes one of
the size's settings (learning_plan.Size) for a new --work; plan.json keeps it, and the results JSON's command and
settings show it.
    nice -n 10 .venv/bin/python benchmarks/learning.py --work runs/learning          # default: the lead's run
    nice -n 10 .venv/bin/python benchmarks/learning.py --quick --work runs/learning-quick
    .venv/bin/python benchmarks/learning.py --tiny --work /tmp/learning-tiny
(nice ranks processes only inside one session while the kernel's autogroup scheduling is on, as it is by default:
`cat /proc/sys/kernel/sched_autogroup_enabled`; a benchmark beside other sessions' jobs gets an equal share per
session unless it is 0.)
Results: benchmarks/results/learning.json (default), learning-quick.json (--quick), WORK/learning.json (--tiny);
adapters stay in WORK (not committed): the results' `rebuild` names the command that trains them again, seeded.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

import learning_phases as phases
import learning_results as results
from learning_plan import SIZES, choose_keys, engine, percent, planned_size, run_command, size_dict, with_settings

from aoi.interrupts import interruptible

ROOT = Path(__file__).resolve().parent.parent
FINAL = {"base": None, "sft": 1.0, "grpo": 1.0}


def plan(args, size_name: str) -> dict:
    """Return the run's plan (size with its --set settings, seed, keys), written once into WORK/plan.json; refuse a
    WORK of another size, or a --set its plan does not have.

    A resumed run keeps the settings it was planned with, even where the size's definition has changed since."""
    path = args.work / "plan.json"
    try:
        size = with_settings(SIZES[size_name], args.set)
    except ValueError as err:
        sys.exit(f"error: {err}")
    if path.is_file():
        saved = json.loads(path.read_text())
        if (saved["size_name"], saved["seed"]) != (size_name, args.seed):
            sys.exit(f"error: {args.work} holds a {saved['size_name']} run with seed {saved['seed']}; give another "
                     "--work, or the same size and seed to resume it")
        saved = _with_later_fields(saved, path)
        planned = planned_size(size_name, saved["size"])
        if with_settings(planned, args.set) != planned:
            sys.exit(f"error: {args.work} was planned with other settings than --set {' '.join(args.set)} "
                     f"({path}); resume it without them (or with its own), or give another --work")
        return saved
    saved = {"size_name": size_name, "size": size_dict(size), "seed": args.seed, "keys": choose_keys(size, args.seed),
             "load_average_at_start": os.getloadavg(), "started_at": time.time()}
    args.work.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(saved, indent=1) + "\n")
    return saved


def _with_later_fields(saved: dict, path: Path) -> dict:
    """Add what a plan was written without: settings added to Size since (their current values), and key sets
    (GRPO's keys, the teacher's no-fault ones: each drawn after the others, so those stay the same)."""
    size = planned_size(saved["size_name"], saved["size"])
    keys = choose_keys(size, saved["seed"])
    if any(keys.get(name) != saved["keys"][name] for name in saved["keys"]):
        sys.exit(f"error: {path} was drawn from another catalogue or split; start the run in a fresh --work")
    completed = {**saved, "keys": keys, "size": size_dict(size)}
    if completed != saved:
        path.write_text(json.dumps(completed, indent=1) + "\n")
    return completed


def variants(size) -> dict[str, tuple[str, float | None, tuple[str, ...]]]:
    """Return {phase: (run, share, sets)}: each evaluation phase, in order."""
    both, targets = tuple(phases.SETS), ("held-out targets",)
    found = {"eval-base": ("base", None, both)}
    trained = (("sft", size.sft_curve), ("grpo", size.grpo_curve))[:2 if size.grpo_steps else 1]
    for run, curve in trained:
        found |= {f"eval-{run}@{percent(share)}": (run, share, targets) for share in curve if share < 1}
        found[f"eval-{run}"] = (run, 1.0, both)
    return found | {"eval-expert": ("expert", None, both)}


def actions(work: Path, saved: dict, size, backend: str, device: str = "cpu") -> dict:
    """Return {phase: callable} for every phase, in order."""
    seed, keys = saved["seed"], saved["keys"]
    steps = {
        "teacher": lambda: phases.teacher(work, keys["teacher"] + keys["loss"], "teacher", size),
        "teacher-no-fault": lambda: phases.teacher(work, keys["teacher no-fault"], "teacher-no-fault", size,
                                                   size.no_fault_attempts),
        "export": lambda: phases.export(work, ["teacher", "teacher-no-fault"], "data"),
        "sft": lambda: phases.sft(work, size, seed, device),
        "teacher-grpo": lambda: phases.teacher(work, keys["grpo"], "teacher-grpo", size),
        "export-grpo": lambda: phases.export(work, ["teacher-grpo"], "grpo-data"),
        "grpo": lambda: phases.grpo(work, size, seed, backend, device),
    }
    for name, (run, share, sets) in variants(size).items():
        steps[name] = lambda run=run, share=share, sets=sets, name=name: _evaluate(work, name, run, share, sets,
                                                                                   saved, size, backend, device)
    return steps


def _evaluate(work: Path, name: str, run: str, share, sets, saved: dict, size, backend: str,
              device: str = "cpu") -> dict:
    """Evaluate one variant: the expert, the base, or a run's checkpoint at `share` of its steps."""
    step, observer = 0, "expert"
    if run != "expert":
        adapter = None
        if run != "base":
            adapter, step = phases.checkpoint_at(work / run, share)
        observer = phases.observer_spec(size, adapter, backend, device)
    record = phases.evaluate(work, name.removeprefix("eval-"), observer, saved["keys"], size, saved["seed"], sets)
    return {**record, "run": run, "step": step, "engine": backend if run != "expert" else "expert"}


def report(work: Path, saved: dict, size, args) -> dict:
    """Write the table, the curve and the results JSON; return the JSON."""
    records = {p.stem: json.loads(p.read_text()) for p in (work / "phases").glob("*.json")}
    evaluations = {name.removeprefix("eval-"): records[name] for name in variants(size) if name in records}
    table = results.table(evaluations)
    sft_points = {v: r["step"] for v, r in evaluations.items() if r["run"] in ("base", "sft")}
    grpo_points = {v: r["step"] for v, r in evaluations.items() if r["run"] == "grpo"}
    learning = results.curve(table, sft_points, grpo_points, work)
    _heldout(work, evaluations, table)
    png = results.chart(learning, work / "learning_curve.png") if learning["sft_success"] else None
    order = phases_in_order(size)
    rebuild = run_command(saved["size_name"], saved["size"], work, saved["seed"], args.device)
    data = {"command": " ".join([Path(sys.executable).name, *sys.argv]), "commit": _commit(),
            "machine": _machine(), "load_average": {"start": saved["load_average_at_start"],
                                                    "end": os.getloadavg()},
            "size": saved["size_name"], "device": args.device, "settings": saved["size"], "seed": saved["seed"],
            "keys": saved["keys"],
            "phase_seconds": {n: records[n]["seconds"] for n in order if n in records},
            "phases_missing": [n for n in phases_in_order(size) if n not in records],
            "table": table, "paired": results.comparisons(evaluations), "curve": learning,
            "training": _manifests(work), "chart": str(png) if png else None,
            "work": str(work),
            "rebuild": f"adapters are not kept in the repository: `{rebuild}` on a fresh --work runs every phase "
                       "again; SFT and GRPO are seeded, so it trains the same adapters"}
    args.results.parent.mkdir(parents=True, exist_ok=True)
    args.results.write_text(json.dumps(data, indent=1, default=str) + "\n")
    return data


def _heldout(work: Path, evaluations: dict, table: dict) -> None:
    """Write WORK/grpo/heldout.jsonl: held-out success per GRPO checkpoint, for `aoi report WORK/grpo`."""
    if not (work / "grpo").is_dir():
        return
    lines = [{"step": record["step"], "set": name, "success": table[variant][name]["success"]}
             for variant, record in evaluations.items() if record["run"] == "grpo"
             for name in record["runs"]]
    (work / "grpo" / "heldout.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))


def _manifests(work: Path) -> dict:
    """Return the SFT and GRPO manifests' metrics and versions."""
    found = {}
    for run in ("sft", "grpo"):
        path = work / run / "manifest.json"
        if path.is_file():
            manifest = json.loads(path.read_text())
            found[run] = {"version": manifest["version"], "metrics": manifest["metrics"]}
    return found


def _commit() -> str:
    """Return the commit the run used (with "+dirty" when the tree had changes)."""
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT, capture_output=True,
                           text=True).stdout.strip()
    return head + ("+dirty" if dirty else "")


def _machine() -> dict:
    """Return what the figures depend on: platform, CPU, cores, memory."""
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2 ** 30
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor()) if Path("/proc/cpuinfo").is_file() else ""
    return {"platform": platform.platform(), "cpu": cpu, "cores": os.cpu_count(), "memory_gib": round(memory, 1),
            "python": platform.python_version()}


def phases_in_order(size) -> list[str]:
    """Return every phase but the report, in the order they run (GRPO's only when the size has GRPO steps)."""
    grpo = ["teacher-grpo", "export-grpo", "grpo"] if size.grpo_steps else []
    return ["teacher", "teacher-no-fault", "export", "sft", *grpo, *variants(size)]


def _check_inputs(work: Path, name: str, order: list[str]) -> None:
    """Refuse to run a phase alone before the phases it reads (the evaluations read only the training phases)."""
    needs = {"export": ["teacher", "teacher-no-fault"], "sft": ["export"], "export-grpo": ["teacher-grpo"],
             "grpo": ["sft", "export-grpo"]}.get(name, [])
    if name.startswith("eval-"):
        needs = [run for run in ("sft", "grpo") if name.startswith(f"eval-{run}")]
    missing = [n for n in needs if not phases.marker(work, n).is_file()]
    if missing:
        sys.exit(f"error: phase {name} reads the output of {', '.join(missing)}; run `--phase {missing[0]}` first")


def parse() -> argparse.Namespace:
    """Return the command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--tiny", action="store_true", help="tiny model, one teacher episode (CI)")
    size.add_argument("--quick", action="store_true", help="SmolLM2, small sets (about 20 min on 2 cores)")
    parser.add_argument("--work", type=Path, required=True, help="folder for every phase's output (resumes there)")
    parser.add_argument("--phase", help="run this phase alone (e.g. sft, eval-base, report)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="change one of the size's settings for a new --work (learning_plan.Size, e.g. "
                             "grpo_steps=60, group=8, grpo_curve=0.5,1); written into plan.json, kept on resume")
    parser.add_argument("--results", type=Path, help="results JSON (default by size; see the docstring)")
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"),
                        help="SFT, GRPO and the transformers Observer's device (cuda: bf16)")
    return parser.parse_args()


def main() -> None:
    """Run the phases not done yet (or the one --phase names), then the report."""
    args = parse()
    name = "tiny" if args.tiny else "quick" if args.quick else "default"
    suffix = "" if name == "default" else f"-{name}"
    args.results = args.results or (args.work / "learning.json" if args.tiny else
                                    ROOT / "benchmarks" / "results" / f"learning{suffix}.json")
    saved = plan(args, name)
    size = planned_size(name, saved["size"])
    backend, why = engine(size.base)
    print(f"learning benchmark: {name}, base {size.base}, seed {args.seed}, work {args.work}, device {args.device}; "
          f"Observer on {backend} ({why})", flush=True)
    steps, order = actions(args.work, saved, size, backend, args.device), phases_in_order(size)
    if args.phase and args.phase not in [*order, "report"]:
        sys.exit(f"error: unknown phase {args.phase!r}; use one of {', '.join([*order, 'report'])}")
    try:
        with interruptible():  # SIGTERM too: an evaluation's `aoi eval` is stopped, not left running
            for phase in [args.phase] if args.phase else order:
                if phase != "report":
                    _check_inputs(args.work, phase, order)
                    phases.run_phase(args.work, phase, steps[phase])
    except KeyboardInterrupt:
        sys.exit("interrupted: the finished phases and episodes are kept; run the same command to resume")
    if not args.phase or args.phase == "report":
        data = report(args.work, saved, size, args)
        results.print_table(data["table"])
        print(f"phase seconds: {data['phase_seconds']}\nresults {args.results}; chart {data['chart']}")


if __name__ == "__main__":
    if shutil.which("git") is None:
        sys.exit("error: git is needed to record the commit")
    main()
