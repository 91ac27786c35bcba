"""benchmarks/learning_phases.py without a run: a phase that did not finish its work leaves no done marker."""

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
