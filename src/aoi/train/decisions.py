"""Per-decision rollouts for GRPO: TRL's rollout_func draws a batch's decisions, plays each in the twin, and hands
the outcomes to the reward functions.

TRL calls the rollout with the batch's prompts (each row's repeated G times) and the trainer. A sampler draws one
decision per prompt: schema-constrained with the model being trained (aoi.train.sampling.local_draws), on a vLLM
server (aoi.train.served_rollout), or by TRL's own free generation (`trl_generation`, `rollout: {constrained:
false}`). Each decision, decoded as TRL decodes it, is played at its row's recorded state (aoi.train.rollouts: replay
the prefix, play it, the Finisher ends the episode); its `Outcome` rides along in the `outcome` column, which is all
the reward terms of aoi.train.rewards read. TRL hands the rollout only the prompts, and a prompt does not name its
state (a detection task's first prompt is the same for every target of a problem), so the trainer `rows_trainer`
builds keeps each batch's dataset rows where the rollout reads them (`batch_rows`).
With a `log` path each batch appends a line there: the optimizer step and, per sample, its state, decision text and
outcome (why a group's rewards were all equal: the same decision drawn G times, or different ones that ended alike).

A group whose rewards are all equal has no advantage: TRL trains on it and nothing changes (`frac_reward_zero_std`).
After SFT most states are such: the policy draws one decision G times, or any decision ends alike (the evidence
already in the prompt decides the answer). `varied_rows` keeps the states where the starting policy's own G draws
end with different rewards (DAPO's dynamic sampling, done once before training instead of at every step).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from aoi.train.common import append_jsonl, read_jsonl
from aoi.train.rewards import term_values, weighted
from aoi.train.rollouts import OutcomeCache


def rows_trainer() -> type:
    """Return TRL's GRPOTrainer, made to keep each generation batch's dataset rows (`batch_rows`) for its rollout."""
    from trl import GRPOTrainer

    class RowsTrainer(GRPOTrainer):
        """GRPOTrainer whose rollout_func can read the rows of the prompts it is handed."""

        batch_rows: list[dict] | None = None

        def _generate_and_score_completions(self, inputs: list[dict]) -> dict:
            """Keep the batch's rows (TRL 1.16 builds the rollout's prompts from them, in order), then go on."""
            self.batch_rows = inputs
            return super()._generate_and_score_completions(inputs)

    return RowsTrainer


def batch_rows(trainer: Any, prompts: list) -> list[dict]:
    """Return the dataset rows of the prompts TRL handed the rollout_func, in their order.

    Example:
        >>> class Trainer: batch_rows = [{"prompt": [{"role": "user", "content": "hi"}], "seed": 3}]
        >>> batch_rows(Trainer(), [[{"role": "user", "content": "hi"}]])[0]["seed"]
        3
    """
    rows = getattr(trainer, "batch_rows", None)
    if rows is None or [row["prompt"] for row in rows] != prompts:
        raise RuntimeError("the rollout_func's prompts are not the rows the trainer kept; build the trainer with "
                           "aoi.train.decisions.rows_trainer() (it needs TRL 1.16's _generate_and_score_completions)")
    return rows


def decision_rollout(draw: Callable, cache: OutcomeCache, log: Path | None = None) -> Callable:
    """Return TRL's rollout_func: `draw` samples one decision per prompt, each is played at its row's state.

    Its answer is `draw`'s (prompt ids, completion ids, log-probs) plus `outcome`, one Outcome per sample; with
    `log`, each batch's samples are appended there (`log_samples`).

    Example:
        >>> from aoi.train.sampling import local_draws
        >>> rollout = decision_rollout(local_draws(seed=0), OutcomeCache())
        >>> rollout(prompts, trainer)["outcome"][0].success  # doctest: +SKIP
        False
    """

    def rollout(prompts: list, trainer: Any) -> dict:
        rows = batch_rows(trainer, prompts)
        drawn = draw(prompts, trainer)
        texts = trainer.processing_class.batch_decode(drawn["completion_ids"], skip_special_tokens=True)
        outcomes = [cache.decision(row, text, expect=prompt) for row, text, prompt in zip(rows, texts, prompts)]
        if log is not None:
            log_samples(log, trainer.state.global_step, rows, texts, outcomes)
        return {**drawn, "outcome": outcomes}

    return rollout


def log_samples(log: Path, step: int, rows: list[dict], texts: list[str], outcomes: list) -> None:
    """Append one batch's line to `log`: the step and, per sample, its state, decision and outcome."""
    samples = [{"problem_id": row["problem_id"], "target": row.get("target") or "", "seed": row.get("seed"),
                "decision_index": row.get("decision_index"), "decision": text, "success": outcome.success,
                "evidence": outcome.evidence, "error": outcome.error}
               for row, text, outcome in zip(rows, texts, outcomes)]
    append_jsonl(log, {"step": step, "samples": samples})


def varied_rows(rows: Any, texts: Callable, trainer: Any, cache: OutcomeCache, *, group: int, weights: dict,
                log: Path, policy: str) -> Any:
    """Return the rows at which `group` decisions drawn by `texts(prompts, trainer)` (the starting `policy`, e.g. the
    init adapter's version) end with different rewards.

    Each row's draws, rewards and verdict are appended to `log` as they are made; a row already there is not drawn
    again (a killed run resumes, a resumed training finds the same rows). An error says so when no row is varied.

    Example:
        >>> kept = varied_rows(rows, texts, trainer, OutcomeCache(), group=4, weights=DEFAULT_WEIGHTS,
        ...                    log=Path("runs/grpo/states.jsonl"), policy="sft-d4784f85cd81")  # doctest: +SKIP
    """
    done = {line["row"]: line for line in (read_jsonl(log) if log.is_file() else [])}
    for index, row in enumerate(rows):
        state = {"problem_id": row["problem_id"], "target": row.get("target") or "", "seed": row.get("seed"),
                 "decision_index": row.get("decision_index"), "policy": policy}
        if index in done and {key: done[index].get(key) for key in state} != state:
            raise RuntimeError(f"{log} was written for other states or another policy (its row {index} is not "
                               f"{state}); delete it to draw them afresh")
        if index in done:
            continue
        decisions = texts([row["prompt"]] * group, trainer)
        rewards = [round(weighted(term_values(cache.decision(row, text, expect=row["prompt"])), weights), 6)
                   for text in decisions]
        done[index] = {"row": index, **state, "decisions": decisions, "rewards": rewards,
                       "varied": len(set(rewards)) > 1}
        append_jsonl(log, done[index])
    kept = [index for index in range(len(rows)) if done[index]["varied"]]
    if not kept:
        raise RuntimeError(f"none of the {len(rows)} states gave {group} draws with different rewards ({log} has "
                           "them): GRPO would learn nothing; raise grpo.temperature or num_generations, or use "
                           "states the policy gets wrong sometimes")
    return rows.select(kept)


def trl_generation(prompts: list, trainer: Any) -> dict:
    """Draw one free decision per prompt by TRL's own generation (`rollout: {constrained: false}`).

    These are the calls TRL 1.16 makes when it has no rollout_func: the same tokenisation and `generate`, each sample
    running to EOS or `max_completion_length`, so the samples are the ones TRL draws itself.
    """
    prompt_ids, images, fields = trainer._tokenize_prompts(prompts)
    completion_ids, logprobs = trainer._generate_single_turn(prompt_ids, images, fields, trainer.num_generations)
    return {"prompt_ids": prompt_ids, "completion_ids": completion_ids, "logprobs": logprobs}
