"""ReplayModel: scripted answers in order, role checks, token counts, and failures on missing or unused steps."""

from __future__ import annotations

import json

import pytest

from aoi.models import ModelError, ReplayExhausted, ReplayModel, ReplayUnused
from aoi.models.tokens import count_tokens

ASK = [{"role": "user", "content": "Is the cluster healthy?"}]


def test_answers_in_order_with_cl100k_token_counts():
    model = ReplayModel(["first answer", ("probe", "kubectl get pods")])
    first = model.complete(ASK, role="observer")
    second = model.complete(ASK, role="probe")
    assert (first.text, second.text) == ("first answer", "kubectl get pods")
    assert first.input_tokens == count_tokens("Is the cluster healthy?") > 0
    assert second.output_tokens == count_tokens("kubectl get pods") > 0
    assert [role for role, _ in model.requests] == ["observer", "probe"] and model.remaining == 0
    model.assert_done()


def test_asking_past_the_script_raises_exhausted():
    model = ReplayModel(["only"])
    model.complete(ASK, role="observer")
    with pytest.raises(ReplayExhausted, match="step 2 but the script has only 1"):
        model.complete(ASK, role="observer")
    assert issubclass(ReplayExhausted, ModelError)


def test_unused_steps_fail_assert_done_and_the_with_block():
    model = ReplayModel(["used", "never asked"])
    model.complete(ASK, role="observer")
    with pytest.raises(ReplayUnused, match="1 of 2 steps unused"):
        model.assert_done()
    with pytest.raises(ReplayUnused), ReplayModel(["left over"]):
        pass


def test_a_step_scripted_for_another_role_is_refused():
    model = ReplayModel([("executor", "kubectl delete pod x")])
    with pytest.raises(ModelError, match="scripted for 'executor' but 'probe' asked"):
        model.complete(ASK, role="probe")
    assert model.remaining == 1  # the refused step is still there for the right role


def test_from_file_reads_yaml_and_json(tmp_path):
    (tmp_path / "s.yaml").write_text("- plain\n- [probe, ls]\n- {role: observer, text: done}\n")
    (tmp_path / "s.json").write_text(json.dumps(["a", ["probe", "b"]]))
    assert ReplayModel.from_file(tmp_path / "s.yaml").steps == [(None, "plain"), ("probe", "ls"), ("observer", "done")]
    assert ReplayModel.from_file(tmp_path / "s.json").name == "replay:s.json"


@pytest.mark.parametrize("content, error", [("{a: 1}", "must hold a list"), ("- [1, 2, 3]", "step 1")])
def test_bad_scripts_say_what_is_wrong(tmp_path, content, error):
    (tmp_path / "bad.yaml").write_text(content)
    with pytest.raises(ModelError, match=error):
        ReplayModel.from_file(tmp_path / "bad.yaml")
    with pytest.raises(ModelError, match="does not exist"):
        ReplayModel.from_file(tmp_path / "missing.yaml")
