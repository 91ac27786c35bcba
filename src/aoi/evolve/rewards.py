"""The scenario generator's reward, measured in the twin: one function per dimension, a weighted total per candidate.

Each dimension reads an `aoi.evolve.execute.Record` (what running the scenario showed) and returns a `Score`: a value
in [0, 1] and the evidence behind it. `score_group` scores a GRPO group: diversity needs the group (distance from the
seeds and from the other candidates). A scenario that reaches outside its app's namespace or needs host access
scores zero overall and says why; nothing of it was run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from aoi.evolve.diversity import Nearest, Novelty
from aoi.evolve.execute import Record, Run, execute, kubectl_argv
from aoi.evolve.judge import ask_judge
from aoi.problems.scenarios import NOT_JSON, Symptom

DEFAULT_WEIGHTS = {"solution_effectiveness": 0.30, "commands_completeness": 0.20, "diversity": 0.20,
                   "problem_validity": 0.10, "commands_correctness": 0.10, "format": 0.10}
JUDGE, JUDGE_WEIGHT = "judge", 0.10  # the optional LLM-judge dimension and its weight when none is configured
DIMENSIONS = (*DEFAULT_WEIGHTS, JUDGE)
FULL_DISTANCE = 0.5  # a nearest neighbour this far (or farther) gives full diversity


@dataclass(frozen=True)
class Score:
    """One dimension's value in [0, 1] and the evidence it rests on."""

    value: float
    evidence: str


@dataclass(frozen=True, kw_only=True)
class Rewarded:
    """One candidate's reward: the weighted `total`, every dimension's Score, and the evidence record."""

    total: float
    scores: dict[str, Score]
    record: Record
    zero_reason: str = ""  # why the total is zero whatever the dimensions say (out of scope)
    problems: tuple[str, ...] = field(default=())  # why the scenario is not valid (empty: valid)

    @property
    def valid(self) -> bool:
        """Return whether the scenario can become problems: well-formed, in scope, injects a fault, is fixed."""
        return not self.problems

    def values(self) -> dict[str, float]:
        """Return each dimension's value by name."""
        return {name: score.value for name, score in self.scores.items()}


def load_weights(source: Mapping | str | Path | None = None) -> dict[str, float]:
    """Return the dimension weights: the defaults updated by a mapping or a YAML file of `dimension: weight`.

    Example:
        >>> load_weights({"diversity": 0.5})["diversity"], load_weights()["format"]
        (0.5, 0.1)
    """
    if isinstance(source, str | Path):
        path = Path(source)
        if not path.is_file():
            raise ValueError(f"weights file {path} does not exist; write a YAML mapping such as 'diversity: 0.3'")
        try:
            source = yaml.safe_load(path.read_text()) or {}
        except yaml.YAMLError as exc:
            raise ValueError(f"weights file {path} is not valid YAML ({' '.join(str(exc).split())[:160]}); write "
                             "a mapping such as 'diversity: 0.3'") from None
    if source is not None and not isinstance(source, Mapping):
        raise ValueError(f"weights must be a mapping of dimension: weight, not {type(source).__name__}")
    given = dict(source or {})
    unknown = sorted(map(str, set(given) - set(DIMENSIONS)))
    if unknown:
        raise ValueError(f"unknown reward dimension(s) {', '.join(unknown)}; use {', '.join(DIMENSIONS)}")
    bad = [k for k, v in given.items() if not isinstance(v, int | float) or isinstance(v, bool) or v < 0]
    if bad:
        raise ValueError(f"weight of {bad[0]} must be a number >= 0, got {given[bad[0]]!r}")
    return {**DEFAULT_WEIGHTS, **{k: float(v) for k, v in given.items()}}


# --- matching ---
def matches(symptom: Symptom, run: Run) -> bool:
    """Return whether a symptom's pattern matches what a command showed.

    Example:
        >>> run = Run(command="kubectl get pods", role="probe", stdout="geo-1  CrashLoopBackOff")
        >>> matches(Symptom("kubectl get pods", "CrashLoop"), run)
        True
    """
    return symptom.shows(run.text)


def discriminating(record: Record) -> list[bool]:
    """Return per symptom whether it matches on the faulty system and not on the healthy one."""
    pairs = zip(record.scenario.symptoms, record.healthy, record.faulty, strict=True)
    return [matches(s, faulty) and not matches(s, healthy) for s, healthy, faulty in pairs]


def is_faulty(record: Record) -> bool:
    """Return whether injection broke something: the strict health check fails or a symptom appears."""
    return bool(record.faulty_health) or any(discriminating(record))


def _unrun(record: Record) -> Score | None:
    """Return a zero Score saying why, when the record holds no execution."""
    if record.scenario is None:
        return Score(0.0, "not executed: the candidate is not a valid scenario")
    if record.scope_errors:
        return Score(0.0, f"not executed: out of scope ({len(record.scope_errors)} reason(s): see the zero reason)")
    if record.error:
        return Score(0.0, f"not executed: {record.error}")
    scenario = record.scenario
    runs = (record.healthy, record.faulty, record.after, record.fault, record.diagnostics, record.solution)
    wanted = (*[scenario.symptoms] * 3, scenario.fault, scenario.diagnostic_commands, scenario.solution_commands)
    if any(len(done) != len(want) for done, want in zip(runs, wanted, strict=True)):
        return Score(0.0, "not executed: the record holds no complete run of the scenario")
    return None


# --- the dimensions ---
def format_score(record: Record) -> Score:
    """Score the schema: 1 when valid, 0 when not even a JSON object, between for a few field errors.

    Example:
        >>> format_score(Record(scenario=None, format_errors=("id: 3 is not of type 'string'",))).value
        0.5
    """
    errors = record.format_errors
    if not errors:
        return Score(1.0, "schema valid")
    if any(e.startswith((NOT_JSON, "a scenario is a JSON object")) for e in errors):
        return Score(0.0, errors[0])
    return Score(round(max(0.0, 0.5 - 0.1 * (len(errors) - 1)), 4), f"{len(errors)} format error(s): "
                 + "; ".join(errors[:5]))


def solution_effectiveness(record: Record) -> Score:
    """Score the fix: the system is faulty after injection; after the solution it is healthy and no symptom shows."""
    unrun = _unrun(record)
    if unrun:
        return unrun
    if not is_faulty(record):
        return Score(0.0, "after injection the strict health check passes and no symptom appears: nothing to fix")
    healthy = not record.fixed_health
    gone = [s.pattern for s, run in zip(record.scenario.symptoms, record.after, strict=True) if matches(s, run)]
    health = "passes" if healthy else "fails (" + "; ".join(record.fixed_health[:3]) + ")"
    left = "no symptom matches" if not gone else f"symptom(s) still match: {', '.join(map(repr, gone))}"
    return Score(0.5 * healthy + 0.5 * (not gone), f"after the solution the strict health check {health}; {left}")


def commands_completeness(record: Record) -> Score:
    """Score the diagnosis: the diagnostic outputs name the faulty components and show a symptom."""
    unrun = _unrun(record)
    if unrun:
        return unrun
    outputs = [run.text for run in record.diagnostics]
    components = record.scenario.root_cause.components
    named = [c for c in components if any(c in text for text in outputs)]
    shown = [s.pattern for s in record.scenario.symptoms if any(matches(s, run) for run in record.diagnostics)]
    value = 0.5 * len(named) / len(components) + 0.5 * bool(shown)
    return Score(round(value, 4), f"diagnostics name {len(named)}/{len(components)} faulty component(s)"
                 f"{' (' + ', '.join(named) + ')' if named else ''}; "
                 f"{'they show symptom ' + repr(shown[0]) if shown else 'no symptom pattern matches their output'}")


def problem_validity(record: Record) -> Score:
    """Score the fault: every operation applies cleanly, and each symptom shows on the faulty system only."""
    unrun = _unrun(record)
    if unrun:
        return unrun
    failed = [f"{run.command}: {(run.stderr or run.refused).strip()[:200]}" for run in record.fault if not run.ok]
    telling = discriminating(record)
    value = 0.5 * (1 - len(failed) / len(record.fault)) + 0.5 * sum(telling) / len(telling)
    ops = "every fault operation applied" if not failed else "fault operation(s) failed: " + "; ".join(failed)
    return Score(round(value, 4), f"{ops}; {sum(telling)}/{len(telling)} symptom(s) match the faulty system and "
                 "not the healthy one")


def commands_correctness(record: Record) -> Score:
    """Score the commands: each parses as kubectl and runs without error as its role (symptoms: in either state)."""
    unrun = _unrun(record)
    if unrun:
        return unrun
    pairs = zip(record.healthy, record.faulty, strict=True)
    symptoms = [(faulty, faulty.ok or healthy.ok) for healthy, faulty in pairs]
    others = [(run, run.ok) for run in (*record.fault, *record.diagnostics, *record.solution)]
    wrong = [_why(run) for run, ok in symptoms + others if not ok or not _parses(run)]
    total = len(symptoms) + len(others)
    return Score(round(1 - len(wrong) / total, 4), f"{total - len(wrong)}/{total} commands parse and run as their "
                 f"role{': ' + '; '.join(wrong[:5]) if wrong else ''}")


def _parses(run: Run) -> bool:
    """Return whether a command is a kubectl command line (API operations have no command line to parse)."""
    return run.command.startswith("api ") or kubectl_argv(run.command.split("\n", 1)[0]) is not None


def _why(run: Run) -> str:
    """Return one line saying how a command failed."""
    if not _parses(run):
        return f"{run.command!r} does not parse as a kubectl command line"
    reason = (run.refused or run.stderr or f"exit status {run.exit_code}").strip().splitlines() or ["failed"]
    return f"{run.command.splitlines()[0]!r} as {run.role}: {reason[0][:160]}"


def diversity(records: Sequence[Record], novelty: Novelty) -> list[Score]:
    """Score each record's distance from the seeds and from the rest of its group (invalid or out of scope: 0)."""
    scored = [r for r in records if r.scenario is not None and not r.scope_errors]  # a text needs no twin
    nearest = dict(zip(map(id, scored), novelty.nearest([r.scenario for r in scored]), strict=True))
    return [_novel(nearest[id(r)]) if id(r) in nearest else _unrun(r) for r in records]


def _novel(near: Nearest | None) -> Score:
    """Return the diversity Score of a nearest neighbour's distance."""
    if near is None:
        return Score(1.0, "no seed and no other candidate to compare with")
    return Score(round(min(1.0, max(0.0, near.distance) / FULL_DISTANCE), 4), near.evidence())


# --- totals ---
def score_records(records: Sequence[Record], *, novelty: Novelty, weights: Mapping[str, float] | None = None,
                  judge=None) -> list[Rewarded]:
    """Score executed records as one group; `judge` is an optional aoi.models Model for the LLM-judge dimension."""
    weights = {JUDGE: JUDGE_WEIGHT} | load_weights(weights)  # the judge's weight counts only when there is a judge
    spread = diversity(records, novelty)
    return [_reward(r, d, weights, judge) for r, d in zip(records, spread, strict=True)]


def _reward(record: Record, spread: Score, weights: Mapping[str, float], judge) -> Rewarded:
    """Return one record's Rewarded from its dimensions and weights."""
    scores = {"solution_effectiveness": solution_effectiveness(record),
              "commands_completeness": commands_completeness(record), "diversity": spread,
              "problem_validity": problem_validity(record), "commands_correctness": commands_correctness(record),
              "format": format_score(record)}
    if judge is not None:
        scores[JUDGE] = _unrun(record) or Score(*ask_judge(record, judge, _summary(scores)))
    if record.scope_errors:
        reason = "out of scope: " + "; ".join(record.scope_errors)
        return Rewarded(total=0.0, scores=scores, record=record, zero_reason=reason, problems=(reason,))
    mass = sum(weights[name] for name in scores) or 1.0
    total = sum(weights[name] * score.value for name, score in scores.items()) / mass
    return Rewarded(total=round(total, 4), scores=scores, record=record, problems=tuple(_problems(record, scores)))


def _summary(scores: Mapping[str, Score]) -> str:
    """Return the measured dimensions as lines for the judge."""
    return "\n".join(f"{name}: {score.value:.2f} ({score.evidence})" for name, score in scores.items())


def _problems(record: Record, scores: Mapping[str, Score]) -> list[str]:
    """Return why a scored scenario is not valid: format, execution, fault, fix (empty: valid)."""
    if record.scenario is None:
        return ["format: " + "; ".join(record.format_errors)]
    if record.error:
        return [f"not executed: {record.error}"]
    need = ("problem_validity", "solution_effectiveness")
    return [f"{name}: {scores[name].evidence}" for name in need if scores[name].value < 1.0]


def score_group(candidates: Sequence, *, seeds: Sequence = (), novelty: Novelty | None = None,
                weights: Mapping[str, float] | None = None, judge=None, seed: int = 0) -> list[Rewarded]:
    """Execute each candidate in a fresh twin and score them as one group (GRPO's group of completions).

    Args:
        candidates: JSON text (a fenced block is fine), dicts or `aoi.problems.scenarios.Scenario`s.
        seeds: The seed scenarios diversity is measured from (ignored when `novelty` is given).
        novelty: A prepared `aoi.evolve.diversity.Novelty` (embeds the seeds once; reuse it across steps).
        weights: Dimension weights (see DEFAULT_WEIGHTS); missing ones keep their defaults.
        judge: An optional aoi.models Model scoring each scenario as an LLM judge (dimension "judge").
        seed: The twin's seed.

    Example:
        >>> from aoi.models.embedder import Embedder
        >>> [result] = score_group(["{nope"], novelty=Novelty(embedder=Embedder.hashed()))
        >>> result.total, result.valid, result.scores["format"].evidence[:31]
        (0.0, False, 'the text is not one JSON object')
    """
    novelty = novelty if novelty is not None else Novelty(seeds)
    records = [execute(candidate, seed=seed) for candidate in candidates]
    return score_records(records, novelty=novelty, weights=weights, judge=judge)
