"""The SFT and RL views of a trajectory: what each row pairs, what it leaves out, and the prefix that replays it."""

from __future__ import annotations

from aoi.data.views import chat, problem_key, replayable, rl_rows, sft_rows
from aoi.trajectory import Policy, Step, Trajectory

SYSTEM = {"role": "system", "content": "You are the Observer."}


def decision(text: str, iteration: int, status: str = "ok") -> Step:
    user = {"role": "user", "content": f"iteration {iteration}"}
    return Step("observer", text, status=status, messages=[SYSTEM, user])


def episode(*observer: Step, **extra) -> Trajectory:
    """Return a localization episode: the given Observer decisions, each followed by one probe call."""
    steps = []
    for n, step in enumerate(observer):
        steps.append(step)
        steps.append(Step("probe", f"probe call {n}", action="exec_shell(...)", observation="pods",
                          messages=[{"role": "system", "content": "You are the Probe."},
                                    {"role": "user", "content": f"instruction {n}"}]))
    steps.append(Step("observer", "", action='submit(["geo"])', observation="1", messages=[]))  # not a model call
    defaults = {"family": "revoke_auth", "target": "mongodb-geo", "seed": 3, "policy": Policy("expert"),
                "results": {"Localization Accuracy": 100.0, "success": True, "TTL": 60.0, "steps": 4},
                "strict_success": True}
    return Trajectory("revoke_auth_mongodb-localization-1", "localization", steps=steps, **{**defaults, **extra})


def test_sft_rows_pair_the_messages_sent_with_the_decision():
    rows = sft_rows(episode(decision("d0", 1), decision("d1", 2)))
    observer = [r for r in rows if r["role"] == "observer"]
    assert [r["decision_index"] for r in observer] == [0, 1]
    assert observer[1]["prompt"] == [SYSTEM, {"role": "user", "content": "iteration 2"}]
    assert observer[1]["completion"] == [{"role": "assistant", "content": "d1"}]
    assert {r["role"] for r in rows} == {"observer", "probe"} and len(rows) == 4
    row = observer[0]
    assert (row["problem_id"], row["target"], row["seed"], row["app"]) == (
        "revoke_auth_mongodb-localization-1", "mongodb-geo", 3, "hotel-reservation")
    assert row["success"] is True and row["strict_success"] is True and row["task_type"] == "localization"


def test_sft_targets_are_json_replies_without_whitespace_as_a_local_model_writes_them():
    teacher = '{"next": "submit", "answer": {"system_level": "Application", "fault_type": "Code Defect"}}'
    traj = episode(decision(teacher, 1))
    observer, probe = ([r["completion"][0]["content"] for r in sft_rows(traj) if r["role"] == role]
                       for role in ("observer", "probe"))
    assert observer == ['{"next":"submit","answer":{"system_level":"Application","fault_type":"Code Defect"}}']
    assert probe == ["probe call 0"]  # not JSON: as written
    assert rl_rows(traj)[0]["completion"][0]["content"] == teacher  # a reference, not a target: as played


def test_sft_leaves_out_malformed_and_failed_calls_but_keeps_their_index():
    traj = episode(decision("not json", 1, "format_error"), decision("", 2, "error"), decision("d2", 3))
    observer = [r for r in sft_rows(traj) if r["role"] == "observer"]
    assert [(r["decision_index"], r["completion"][0]["content"]) for r in observer] == [(2, "d2")]


def test_rl_rows_carry_the_prefix_that_replays_each_decision():
    rows = rl_rows(episode(decision("d0", 1), decision("bad", 2, "format_error"), decision("d2", 3)))
    assert [r["prefix"] for r in rows] == [[], ["d0"], ["d0", "bad"]]  # a malformed decision is replayed too
    assert [r["decision_index"] for r in rows] == [0, 1, 2]
    assert rows[2]["prompt"][1]["content"] == "iteration 3" and rows[2]["completion"][0]["content"] == "d2"


def test_rl_rows_stop_at_a_failed_model_call_it_cannot_replay():
    traj = episode(decision("d0", 1), decision("", 2, "error"), decision("d2", 3))
    assert [s.text for s in replayable(traj)] == ["d0"]
    assert len(rl_rows(traj)) == 1


def test_rows_name_a_problem_without_target_with_an_empty_target():
    traj = episode(decision("d0", 1), target=None)
    assert {r["target"] for r in sft_rows(traj)} == {""}
    assert problem_key(traj.problem_id, traj.target) == "revoke_auth_mongodb-localization-1@"


def test_chat_keeps_role_and_content_as_text():
    class Role(str):
        value = "user"

    assert chat([{"role": Role("x"), "content": None}, {"role": "tool", "content": {"a": 1}}]) == [
        {"role": "user", "content": ""}, {"role": "tool", "content": '{"a": 1}'}]

