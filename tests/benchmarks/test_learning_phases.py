"""benchmarks/learning_phases.py and learning_results.py without a run: a phase that did not finish its work leaves no
done marker, GRPO's state draws outlive a fresh restart, and an episode that ended on an error is counted apart."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_an_interrupted_teacher_phase_is_not_marked_done(tmp_path, monkeypatch):
    import aoi.data.generate

    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    import learning_phases
    import learning_plan

    def interrupted(pairs, out, config, k=1, workers=1):  # SIGTERM after one episode: it returns, it does not raise
        out.mkdir(parents=True, exist_ok=True)
        (out / "results.jsonl").write_text('{"episode": 1}\n')

    monkeypatch.setattr(aoi.data.generate, "generate", interrupted)
    keys = ["pod_kill_hotel_res-detection-1@user", "pod_kill_hotel_res-localization-1@user"]
    tiny = learning_plan.SIZES["tiny"]
    with pytest.raises(SystemExit, match="holds 1 of its 2 episodes"):
        learning_phases.run_phase(tmp_path, "teacher", lambda: learning_phases.teacher(tmp_path, keys, "teacher", tiny))
    assert not learning_phases.marker(tmp_path, "teacher").exists()


def test_grpo_killed_before_its_first_checkpoint_restarts_fresh_but_keeps_its_state_draws(tmp_path, monkeypatch):
    import aoi.train.grpo

    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    import learning_phases
    import learning_plan

    out = tmp_path / "grpo"
    (out / "checkpoints" / "checkpoint-5").mkdir(parents=True)  # killed while writing it: no trainer_state.json
    (out / "states.jsonl").write_text('{"row": 0}\n')
    (out / "samples.jsonl").write_text('{"step": 1}\n')
    seen = []

    def train_grpo(options):
        seen.append((options.resume, sorted(p.name for p in options.out.iterdir())))
        return {"metrics": {"steps": 1}}

    monkeypatch.setattr(aoi.train.grpo, "train_grpo", train_grpo)
    learning_phases.grpo(tmp_path, learning_plan.SIZES["tiny"], seed=0, engine="transformers")
    assert seen == [(False, ["states.jsonl"])] and (out / "states.jsonl").read_text() == '{"row": 0}\n'


def test_episodes_that_ended_on_an_error_are_failures_counted_apart(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    import learning_results

    def row(success, error=None):
        return {"seed": 0, "task_type": "detection", "success": success, "strict_success": success,
                "forced_submit": False, "error": error, "steps": 5, "seconds": 10.0,
                "replies": {"observer": {"replies": 2, "format_errors": 0}}}

    found = learning_results.figures([row(True), row(False), row(False, "ModelError: no answer within 60 s")])
    assert found["errors"] == 1 and found["success"] == round(1 / 3, 4) and found["episodes"] == 3


def test_variants_are_compared_episode_by_episode_on_the_same_key_and_seed(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    import json

    import learning_results

    def run(name: str, outcomes: dict) -> str:
        folder = tmp_path / name
        folder.mkdir()
        lines = [{"problem_id": key.partition("@")[0], "target": key.partition("@")[2] or None, "seed": seed,
                  "success": success} for (key, seed), success in outcomes.items()]
        (folder / "results.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
        return str(folder)

    sft = {("a@x", 0): True, ("a@x", 1): True, ("b", 0): True, ("c@y", 0): False, ("d@z", 0): True}
    grpo = {("a@x", 0): True, ("a@x", 1): False, ("b", 0): True, ("c@y", 0): True, ("e@w", 0): True}
    evaluations = {"sft": {"runs": {"held-out targets": run("sft", sft)}},
                   "grpo": {"runs": {"held-out targets": run("grpo", grpo)}}}
    found = learning_results.comparisons(evaluations)
    assert found == {"grpo vs sft": {"held-out targets": {  # d and e were run by one variant only: left out
        "episodes": 4, "gained": ["c@y seed 0"], "lost": ["a@x seed 1"], "sign_test_p": 1.0}}}
    assert learning_results.sign_test(10, 0) == 0.00195 and learning_results.sign_test(9, 1) == 0.0215


def test_a_size_without_grpo_steps_leaves_grpo_out_and_one_with_them_runs_it(monkeypatch):
    from dataclasses import replace

    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    import learning
    import learning_plan

    quick = learning_plan.SIZES["quick"]
    assert quick.grpo_steps == 0 and learning.phases_in_order(quick) == [
        "teacher", "teacher-no-fault", "export", "sft", "eval-base", "eval-sft", "eval-expert"]
    with_grpo = learning.phases_in_order(replace(quick, grpo_steps=2, grpo_curve=(0.5, 1.0)))
    assert with_grpo[4:] == ["teacher-grpo", "export-grpo", "grpo", "eval-base", "eval-sft", "eval-grpo@50",
                             "eval-grpo", "eval-expert"]
    assert learning_plan.choose_keys(quick, seed=0)["grpo"] == []
    import learning_phases  # SFT's checkpoints and loss measurements: every quarter, not every step, for a curve of 1.0
    assert [learning_phases.checkpoint_share(c) for c in [(1.0,), (0.25, 0.5, 1.0), (0.5, 1.0)]] == [0.25, 0.25, 0.5]


def test_the_chart_of_a_run_without_grpo_has_the_success_panel_only(tmp_path, monkeypatch):
    import struct

    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    import learning_results

    sft_only = {"sft_success": [(0, 0.125), (115, 0.5)], "grpo_success": [], "grpo_reward": [], "sft_steps": 115}
    with_grpo = {**sft_only, "grpo_success": [(125, 0.5)], "grpo_reward": [(116, 2.0), (125, 3.0)],
                 "grpo_frac_reward_zero_std": [(1, 0.5), (10, 0.25)]}
    heights = [struct.unpack(">II", learning_results.chart(curve, tmp_path / f"{name}.png").read_bytes()[16:24])[1]
               for name, curve in (("sft", sft_only), ("grpo", with_grpo))]
    assert heights[0] * 2 < heights[1]  # one panel of three


def test_the_rebuild_command_plans_the_same_run(monkeypatch):
    """The results' `rebuild` command, read back as learning.py reads its --set options, plans the run that was
    reported (settings of every kind: int, tuple, bool), and names no --phase or --results."""
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    import learning_plan

    settings = ["grpo_keys=40", "group=8", "sft_curve=0.5,1", "varied_states=false"]
    planned = learning_plan.size_dict(learning_plan.with_settings(learning_plan.SIZES["default"], settings))
    command = learning_plan.run_command("default", planned, Path("runs/v6g"), seed=2)
    words = command.split()
    assert "--phase" not in words and "--results" not in words
    assert words[words.index("--work") + 1] == "runs/v6g" and words[words.index("--seed") + 1] == "2"
    given = [words[i + 1] for i, word in enumerate(words) if word == "--set"]
    rebuilt = learning_plan.with_settings(learning_plan.SIZES["default"], given)
    assert learning_plan.size_dict(rebuilt) == planned
    assert learning_plan.run_command("default", learning_plan.size_dict(learning_plan.SIZES["default"]),
                                     Path("w"), seed=0) == "python benchmarks/learning.py --work w"
