"""`aoi train` answers bad input with one line and exit status 2, before any model is loaded."""

from __future__ import annotations

from typer.testing import CliRunner

from aoi.cli import app


def test_train_sft_without_a_dataset_says_how_to_make_one(tmp_path):
    result = CliRunner().invoke(app, ["train", "sft", "--data", str(tmp_path), "--out", str(tmp_path / "out"),
                                      "--base", "tiny"])
    assert result.exit_code == 2
    assert "no sft/observer/ dataset" in result.output and "aoi data export" in result.output


def test_train_grpo_names_a_misspelt_trl_option(tmp_path):
    config = tmp_path / "grpo.yaml"
    config.write_text("grpo: {num_generation: 4}\n")
    result = CliRunner().invoke(app, ["train", "grpo", "--data", str(tmp_path), "--out", str(tmp_path / "out"),
                                      "--config", str(config)])
    assert result.exit_code == 2 and "grpo.num_generation is not a GRPOConfig field" in result.output


def test_train_grpo_refuses_other_roles_and_a_resume_without_checkpoints(tmp_path):
    base = ["train", "grpo", "--data", str(tmp_path), "--out", str(tmp_path / "out")]
    assert "trains the observer" in CliRunner().invoke(app, [*base, "--role", "probe"]).output
    result = CliRunner().invoke(app, [*base, "--resume"])
    assert result.exit_code == 2 and "found no checkpoint" in result.output
