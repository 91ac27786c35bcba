"""Splits: disjoint, covering every key, seeded, and what they hold out never reaches the train side."""

from __future__ import annotations

import functools

import pytest

from aoi.data.splits import (
    NO_FAULT,
    RULES,
    VERSION,
    Key,
    SplitRules,
    catalogue_keys,
    held_out,
    make_splits,
    train_keys,
)


@functools.cache
def keys() -> tuple[Key, ...]:
    return tuple(catalogue_keys())


@functools.cache
def splits(seed: int = 0) -> dict:
    return make_splits(list(keys()), SplitRules(seed=seed))


def by_name() -> dict[str, Key]:
    return {k.name: k for k in keys()}


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("seed", [0, 1])
def test_each_rule_splits_every_key_once(rule, seed):
    train, test = set(splits(seed)[rule]["train"]), set(splits(seed)[rule]["test"])
    assert not train & test and train | test == set(by_name())
    assert train and test


def test_held_out_targets_never_appear_in_train_for_their_family():
    split, names = splits()["by_target"], by_name()
    held = {tuple(h.split("/", 1)) for h in split["held_out_names"]}
    seen = {(names[n].family, names[n].target) for n in split["train"]}
    assert held and not held & seen
    assert all((names[n].family, names[n].target) in held for n in split["test"] if names[n].family != NO_FAULT)


def test_every_parametric_family_keeps_some_targets_for_training():
    split, names = splits()["by_target"], by_name()
    parametric = {k.family for k in keys() if len(k.family_targets) > 1}
    assert parametric == {names[n].family for n in split["train"] if len(names[n].family_targets) > 1}


def test_held_out_families_never_appear_in_train_and_the_no_fault_family_stays():
    split, names = splits()["by_family"], by_name()
    train_families = {names[n].family for n in split["train"]}
    assert split["held_out_names"] and not set(split["held_out_names"]) & train_families
    assert NO_FAULT in train_families and NO_FAULT not in split["held_out_names"]


def test_by_app_holds_out_one_whole_app():
    split, names = splits()["by_app"], by_name()
    assert {names[n].app for n in split["test"]} == set(split["held_out_names"]) and len(split["held_out_names"]) == 1
    assert not {names[n].app for n in split["train"]} & set(split["held_out_names"])


def test_the_same_seed_gives_the_same_split_and_another_seed_another():
    again = make_splits(list(reversed(keys())), SplitRules(seed=0))
    assert again == splits(0)
    assert splits(1)["by_target"]["held_out_names"] != splits(0)["by_target"]["held_out_names"]


def test_the_held_out_app_can_be_named_and_is_checked():
    assert held_out(list(keys()), SplitRules(app="astronomy-shop"))["by_app"] == ["astronomy-shop"]
    with pytest.raises(ValueError, match="unknown app 'petstore'"):
        held_out(list(keys()), SplitRules(app="petstore"))


def test_train_keys_are_the_train_side_and_bad_rules_say_what_to_pass():
    assert train_keys("by_family") == set(splits()["by_family"]["train"])
    with pytest.raises(ValueError, match="choose from by_target, by_family, by_app"):
        train_keys("by_colour")
    with pytest.raises(ValueError, match="--family-ratio"):
        SplitRules(family_ratio=0)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("rule", ["by_target", "by_family"])
def test_held_out_detection_has_no_fault_keys_and_training_keeps_one(rule, seed):
    split, names = splits(seed)[rule], by_name()
    healthy = {n for n, k in names.items() if k.family == NO_FAULT}
    assert len(healthy) == 3 and all(n.startswith("noop_detection_") for n in healthy)
    test, train = healthy & set(split["test"]), healthy & set(split["train"])
    assert len(test) == 2 and len(train) == 1  # round(0.5 * 3), and never all of them
    assert sorted(test) == split["held_out_no_fault"] == splits(seed)["by_target"]["held_out_no_fault"]
    faulted = [n for n in split["test"] if "detection" in n and n not in healthy]
    assert faulted, "the test side keeps its faulted detection keys too"


def test_the_no_fault_share_is_seeded_recorded_and_checked():
    assert make_splits(list(reversed(keys())), SplitRules(seed=3)) == splits(3)
    chosen = {tuple(splits(seed)["by_target"]["held_out_no_fault"]) for seed in range(6)}
    assert len(chosen) > 1, "the seed picks which no-fault keys are held out"
    assert splits()["version"] == VERSION == 2 and "held_out_no_fault" not in splits()["by_app"]
    fewer = make_splits(list(keys()), SplitRules(no_fault_ratio=0.1))["by_target"]["held_out_no_fault"]
    assert len(fewer) == 1
    with pytest.raises(ValueError, match="--no-fault-ratio"):
        SplitRules(no_fault_ratio=1.0)
