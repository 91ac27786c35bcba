"""Train/test splits of problem keys ("problem_id@target") by target, by family and by app.

A split is a function of the problem catalogue and its rules (seed, ratios), not of the data: `aoi data generate
--split by_target` runs only the train side and `aoi data export` writes the same lists, so teacher data never
touches a held-out key. Rules:
- by_target: in each family with several valid targets, a seeded share of those targets is held out; every key of
  that family aimed at one of them (any task type, any id) is test, so the model never trains on that component
  in that fault family. Keys of families with one target or none are all train.
- by_family: a seeded share of whole fault families is held out (every key of them is test).
- no-fault keys (detection on a healthy app, one per app, no target): by_target and by_family put the same seeded
  share of them on the test side and keep the rest (at least one) in train, so held-out detection has healthy
  systems ("Yes" is not always right) and a detector still trains on one (never seeing one, it learns only Yes).
  The no-fault family is never held out as a family.
- by_app: one app (given, or seeded) is held out.
Version 2 (`version` in splits.json) added the no-fault share; version 1 kept every no-fault key in train.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import NamedTuple

from aoi.data.views import problem_key

RULES = ("by_target", "by_family", "by_app")
NO_FAULT = "no_op"
VERSION = 2  # of the rules: a change that moves keys between sides gets a new one (recorded in splits.json)


class Key(NamedTuple):
    """A problem aimed at a target, with what the split rules read."""

    problem_id: str
    target: str | None
    family: str
    app: str
    family_targets: tuple[str, ...]  # every target the family accepts

    @property
    def name(self) -> str:
        """Return the key as splits.json writes it."""
        return problem_key(self.problem_id, self.target)


@dataclass(frozen=True)
class SplitRules:
    """How keys are held out (every field is recorded in the dataset card).

    Example:
        >>> SplitRules(target_ratio=1.5)
        Traceback (most recent call last):
        ...
        ValueError: target_ratio must be in (0, 1), not 1.5; pass e.g. --target-ratio 0.3
    """

    seed: int = 0
    target_ratio: float = 0.3  # share of each parametric family's targets held out (at least one, never all)
    family_ratio: float = 0.25  # share of fault families held out (at least one)
    app: str | None = None  # the app held out (None: chosen by seed)
    no_fault_ratio: float = 0.5  # share of the no-fault keys on the test side of by_target and by_family

    def __post_init__(self):
        for name in ("target_ratio", "family_ratio", "no_fault_ratio"):
            value = getattr(self, name)
            if not 0 < value < 1:
                raise ValueError(f"{name} must be in (0, 1), not {value}; pass e.g. --{name.replace('_', '-')} 0.3")


def catalogue_keys() -> list[Key]:
    """Return every twin problem aimed at every valid target (the keys `aoi eval --targets all` runs)."""
    from aoi.evaluate.select import select
    from aoi.problems import make

    keys = []
    for problem_id, target in select("all", targets="all")[0]:
        problem = make(problem_id, target)
        keys.append(Key(problem_id, problem.target, problem.family, problem.app, tuple(problem.valid_targets)))
    return keys


def _sample(items: list[str], ratio: float, seed: str) -> set[str]:
    """Return a seeded sample of round(ratio * n) items, at least one and (for two or more) never all."""
    items = sorted(set(items))
    count = min(max(1, round(ratio * len(items))), max(len(items) - 1, 1))
    return set(random.Random(seed).sample(items, count)) if items else set()


def held_out(keys: list[Key], rules: SplitRules) -> dict[str, list[str]]:
    """Return what each rule holds out: "family/target" names, family names, and the app; "no_fault": the no-fault
    key names on the test side of by_target and by_family."""
    targets = set()
    for family in sorted({k.family for k in keys if len(k.family_targets) > 1}):
        choices = next(k.family_targets for k in keys if k.family == family)
        targets |= {f"{family}/{t}" for t in _sample(list(choices), rules.target_ratio, f"{rules.seed}:{family}")}
    families = _sample([k.family for k in keys if k.family != NO_FAULT], rules.family_ratio, f"{rules.seed}:family")
    apps = sorted({k.app for k in keys})
    if rules.app is not None and rules.app not in apps:
        raise ValueError(f"unknown app {rules.app!r} to hold out; choose from {', '.join(apps)}")
    app = rules.app or random.Random(f"{rules.seed}:app").choice(apps)
    healthy = _sample([k.name for k in keys if k.family == NO_FAULT], rules.no_fault_ratio, f"{rules.seed}:no_fault")
    return {"by_target": sorted(targets), "by_family": sorted(families), "by_app": [app], "no_fault": sorted(healthy)}


def is_test(rule: str, key: Key, held: dict[str, list[str]]) -> bool:
    """Return whether a key is on the test side of a rule."""
    if rule == "by_app":
        return key.app in held[rule]
    if key.family == NO_FAULT:
        return key.name in held["no_fault"]
    return (f"{key.family}/{key.target}" if rule == "by_target" else key.family) in held[rule]


def make_splits(keys: list[Key], rules: SplitRules = SplitRules()) -> dict:
    """Return splits.json: the rules' version; per rule the sorted train and test key names, the names it holds out,
    and (by_target, by_family) the no-fault keys it puts on the test side.

    Example:
        >>> splits = make_splits(catalogue_keys())
        >>> set(splits["by_target"]["train"]) & set(splits["by_target"]["test"])
        set()
        >>> splits["version"], len(splits["by_target"]["held_out_no_fault"])
        (2, 2)
    """
    keys = sorted(set(keys))
    held = held_out(keys, rules)
    splits: dict = {"version": VERSION}
    for rule in RULES:
        test = {k.name for k in keys if is_test(rule, k, held)}
        splits[rule] = {"train": sorted({k.name for k in keys} - test), "test": sorted(test),
                        "held_out_names": held[rule]}
        splits[rule] |= {} if rule == "by_app" else {"held_out_no_fault": held["no_fault"]}
    return splits


def train_keys(rule: str, rules: SplitRules = SplitRules()) -> set[str]:
    """Return the catalogue's key names on the train side of one rule (what `aoi data generate --split` runs)."""
    if rule not in RULES:
        raise ValueError(f"unknown split rule {rule!r}; choose from {', '.join(RULES)}")
    return set(make_splits(catalogue_keys(), rules)[rule]["train"])
