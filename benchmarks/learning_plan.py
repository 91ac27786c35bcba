"""What benchmarks/learning.py runs: its three sizes, the problem keys (teacher, held-out sets) and the engine.

The keys come from the catalogue's splits (aoi.data.splits, seeded): teacher episodes on keys that are on the train
side of both by_target and by_family; held-out targets from the by_target test side, the same number per task type,
detection half faulted and half no-fault problems from the same side (so "Yes" is not always right); the train side's
no-fault problems are the teacher's, run with several seeds (every other teacher detection problem has a fault, and a
model that never saw "No" submitted answers "Yes" to everything); held-out families from the by_family test side;
GRPO's states from expert episodes on further train-side keys (a policy SFT'd for epochs on the teacher's own states
answers them alike in every sample of a group: no advantage).
Every variant is evaluated on the same keys with the same seeds.
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path

from aoi.tasks import TASK_TYPES, TaskType


@dataclass(frozen=True, kw_only=True)
class Size:
    """One configuration of the benchmark (every count it runs)."""

    base: str
    teacher_keys: int  # expert episodes on the train side (the SFT data)
    no_fault_attempts: int  # expert episodes (seeds) on each train-side no-fault problem (SFT data too)
    grpo_keys: int  # expert episodes on other train-side keys: GRPO's states, which SFT never trained on
    loss_keys: int  # expert episodes on held-out targets: the SFT's held-out loss rows (never trained on)
    targets_per_type: int  # held-out-target keys per task type (x seeds episodes each)
    family_keys: int  # held-out-family keys
    seeds: int  # attempts per key (attempt a runs with seed + a)
    sft_epochs: float
    sft_lr: float
    sft_max_length: int | None
    sft_curve: tuple[float, ...]  # shares of the SFT steps whose checkpoint is evaluated (1.0: the final adapter)
    grpo_steps: int  # 0: no GRPO (its phases and evaluations are left out)
    grpo_lr: float
    grpo_curve: tuple[float, ...]
    group: int  # GRPO samples per state
    varied_states: bool  # GRPO trains only on the states whose first `group` draws end with different rewards
    max_new_tokens: int  # tokens per Observer decision
    max_iterations: int  # Observer decisions per episode
    episode_steps: int  # environment actions per episode
    workers: int  # episodes at once in each evaluation


SIZES = {
    "tiny": Size(base="tiny", teacher_keys=1, no_fault_attempts=1, grpo_keys=1, loss_keys=1, targets_per_type=1,
                 family_keys=1, seeds=2, sft_epochs=1, sft_lr=5e-3, sft_max_length=None, sft_curve=(0.5, 1.0),
                 grpo_steps=1, grpo_lr=1e-4, grpo_curve=(1.0,), group=2, varied_states=False, max_new_tokens=24,
                 max_iterations=2, episode_steps=20, workers=2),
    "quick": Size(base="smollm2", teacher_keys=32, no_fault_attempts=2, grpo_keys=0, loss_keys=2, targets_per_type=2,
                  family_keys=2, seeds=2, sft_epochs=1, sft_lr=1e-3, sft_max_length=2048, sft_curve=(1.0,),
                  grpo_steps=0, grpo_lr=1e-4, grpo_curve=(), group=2, varied_states=False, max_new_tokens=256,
                  max_iterations=10, episode_steps=30, workers=2),
    "default": Size(base="smollm2", teacher_keys=60, no_fault_attempts=6, grpo_keys=20, loss_keys=6,
                    targets_per_type=5, family_keys=10, seeds=2, sft_epochs=3, sft_lr=2e-4, sft_max_length=3072,
                    sft_curve=(0.25, 0.5, 1.0), grpo_steps=30, grpo_lr=1e-4, grpo_curve=(0.5, 1.0), group=4,
                    varied_states=True, max_new_tokens=256, max_iterations=10, episode_steps=30, workers=2),
}


def size_dict(size: Size) -> dict:
    """Return a size as plain data (tuples as lists, as JSON reads them back)."""
    return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(size).items()}


def with_settings(size: Size, settings: list[str]) -> Size:
    """Return the size with `KEY=VALUE` settings applied (learning.py --set); an unknown key or a value of the wrong
    kind is a ValueError that says what is accepted.

    Example:
        >>> changed = with_settings(SIZES["default"], ["grpo_steps=60", "grpo_curve=0.5,1", "varied_states=false"])
        >>> changed.grpo_steps, changed.grpo_curve, changed.varied_states
        (60, (0.5, 1.0), False)
    """
    kinds = {field.name: str(field.type) for field in fields(Size)}
    changed = {}
    for item in settings:
        key, sep, text = item.partition("=")
        if not sep or key not in kinds:
            raise ValueError(f"--set {item!r}: give KEY=VALUE with KEY one of {', '.join(kinds)}")
        try:
            changed[key] = _setting(text.strip(), kinds[key])
        except ValueError:
            raise ValueError(f"--set {item!r}: {key} takes {kinds[key]} (a tuple as 0.5,1.0; None as none)") from None
    return replace(size, **changed)


def run_command(size_name: str, planned: dict, work: Path, seed: int, device: str = "cpu") -> str:
    """Return the command that runs a planned run's every phase (the results' `rebuild`): its size, --work, seed,
    device, and a `--set` for each setting its plan (plan.json's `size`) holds that the size does not.

    Example:
        >>> planned = size_dict(with_settings(SIZES["default"], ["group=8", "grpo_keys=40", "sft_curve=0.5,1"]))
        >>> run_command("default", planned, Path("runs/v6g"), seed=0)
        'python benchmarks/learning.py --work runs/v6g --set group=8 --set grpo_keys=40 --set sft_curve=0.5,1.0'
        >>> run_command("quick", size_dict(SIZES["quick"]), Path("runs/q"), seed=3, device="cuda")
        'python benchmarks/learning.py --quick --work runs/q --seed 3 --device cuda'
    """
    current = size_dict(SIZES[size_name])
    settings = [f"--set {key}={_as_setting(value)}" for key, value in sorted(planned.items())
                if key in current and value != current[key]]
    return " ".join(["python benchmarks/learning.py", *([f"--{size_name}"] if size_name != "default" else []),
                     f"--work {work}", *([f"--seed {seed}"] if seed else []), *settings,
                     *([f"--device {device}"] if device != "cpu" else [])])


def _as_setting(value) -> str:
    """Return a setting's value as --set reads it back (a tuple as 0.5,1.0; None as none; a bool as true/false)."""
    if isinstance(value, list | tuple):
        return ",".join(str(float(part)) for part in value)
    if isinstance(value, bool):
        return str(value).lower()
    return "none" if value is None else str(value)


def _setting(text: str, kind: str):
    """Return a setting's value read as its Size field's type."""
    if text.lower() == "none" and "None" in kind:
        return None
    if kind == "bool":
        if text.lower() not in ("true", "false"):
            raise ValueError(text)
        return text.lower() == "true"
    if kind.startswith("tuple"):
        return tuple(float(part) for part in text.split(","))
    if kind.startswith("int"):
        return int(text)
    return float(text) if kind == "float" else text


def planned_size(name: str, saved: dict) -> Size:
    """Return the size a run was planned with (plan.json's settings): a field added to Size after it was written
    takes the size's current value, one removed since is dropped."""
    current = size_dict(SIZES[name])
    fields = {**current, **{k: v for k, v in saved.items() if k in current}}
    return Size(**{k: tuple(v) if isinstance(v, list) else v for k, v in fields.items()})


def percent(share: float) -> int:
    """Return a curve share as a whole percentage (a phase name's suffix)."""
    return round(100 * share)


def _task_type(key: str) -> str:
    """Return the task type of a "problem@target" key."""
    from aoi.problems import make

    return make(key.partition("@")[0]).task_type


def choose_keys(size: Size, seed: int) -> dict[str, list[str]]:
    """Return {"teacher", "loss", "held-out targets", "held-out families", "grpo", "teacher no-fault"}: "problem@target"
    keys, seeded."""
    from aoi.data.splits import SplitRules, catalogue_keys, make_splits

    keys = catalogue_keys()
    splits, rng = make_splits(keys, SplitRules(seed=seed)), random.Random(seed)
    no_fault = sorted(k.name for k in keys if k.family == "no_op")
    no_fault_test = [k for k in no_fault if k in splits["by_target"]["test"]]
    by_type = {t: sorted(k for k in splits["by_target"]["test"] if _task_type(k) == t) for t in TASK_TYPES}
    targets = []
    for task_type, pool in by_type.items():
        count = size.targets_per_type
        if task_type == TaskType.DETECTION:  # half of them no-fault problems, unseen in training
            unseen = rng.sample(no_fault_test, min(count // 2, len(no_fault_test)))
            targets += unseen
            count -= len(unseen)
        targets += rng.sample(pool, min(count, len(pool)))
    families = rng.sample(sorted(splits["by_family"]["test"]), size.family_keys)
    train = sorted(set(splits["by_target"]["train"]) & set(splits["by_family"]["train"]) - set(targets) - set(no_fault))
    teacher = rng.sample(train, min(size.teacher_keys, len(train)))
    loss = [k for k in targets if k not in no_fault][:size.loss_keys]
    rest = sorted(set(train) - set(teacher))  # drawn last: the sets above stay what they were before GRPO had its own
    grpo = rng.sample(rest, min(size.grpo_keys, len(rest)))
    healthy = [k for k in no_fault if k in splits["by_target"]["train"]]  # drawn by nothing: the rest stay as before
    return {"teacher": teacher, "loss": loss, "held-out targets": targets, "held-out families": families,
            "grpo": grpo, "teacher no-fault": healthy}


def pairs(keys: list[str]) -> list[tuple[str, str | None]]:
    """Return (problem_id, target) pairs of keys (target None for "")."""
    return [(key.partition("@")[0], key.partition("@")[2] or None) for key in keys]


def engine(base: str) -> tuple[str, str]:
    """Return ("vllm" or "transformers", why): vLLM when a vLLM python is found and the base is not tiny."""
    from aoi.models.vllm_launch import VllmError, find_python

    if base == "tiny":
        return "transformers", "vLLM's CPU backend cannot serve tiny (heads of 16 dimensions)"
    try:
        return "vllm", f"vLLM python {find_python()}"
    except VllmError as err:
        return "transformers", str(err)
