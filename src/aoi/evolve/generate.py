"""The scenario generator: prompt a model with a seed scenario, ask for a new one, keep every candidate with provenance.

`aoi evolve scenarios --model SPEC --seeds FILE --group G --out FILE` asks any model spec (local, OpenAI-compatible,
replay; the expert writes no scenarios) for G candidates per seed. A reply is parsed tolerantly (a fenced block or
the first balanced object); one that does not parse, or breaks the format or the scope rules, is kept as an invalid
candidate with its reasons, so a run's yield is measurable. Each call sends `decoding_schema`, a bounded subset of the
scenario format (the seed's app and namespace fixed): local models decode constrained to it, so even a 135M model
writes parsable JSON; backends that cannot constrain ignore it.
"""

from __future__ import annotations

import json
import re
import string
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import typer
import yaml

from aoi.problems.scenarios import Scenario, dumps, format_errors, load_scenarios, parse_text, scope_errors
from aoi.protocols import Message, Model
from aoi.tasks import FAULT_TYPES, SYSTEM_LEVELS

ROLE = "evolver"  # the role the generator's model calls carry (with decoding_schema as their schema)
PROMPTS = Path(__file__).with_name("generate.yaml")
# kubectl verbs a decoded command may use (namespaced reads and writes; any lowercase word let SmolLM2 write
# `kubectl deploy`, `kubectl ops`, `kubectl rm`: unknown commands)
VERBS = ("get", "describe", "logs", "top", "events", "scale", "patch", "delete", "set", "rollout", "label",
         "annotate", "create", "expose", "autoscale")
MAX_TOKENS = 768  # a scenario with two commands per list takes 250-450 SmolLM2 tokens


@dataclass(frozen=True, kw_only=True)
class Candidate:
    """One generated scenario: its provenance, the raw reply, the parsed object (None when unparsable), the reasons."""

    seed: str
    generator: str
    group: int  # index of the candidate within its seed's group (0..G-1)
    text: str
    scenario: dict | None
    errors: tuple[str, ...]

    @property
    def valid(self) -> bool:
        """Tell whether the candidate parsed and passed the format and scope checks."""
        return self.scenario is not None and not self.errors

    def record(self) -> dict:
        """Return the JSON Lines record."""
        return {"id": candidate_id(self.seed, self.group), "seed": self.seed, "generator": self.generator,
                "group": self.group, "valid": self.valid, "errors": list(self.errors), "scenario": self.scenario,
                "text": self.text}


def candidate_id(seed: str, group: int) -> str:
    """Return a candidate's scenario id: the seed's id and the group index (unique in one run's file).

    Example:
        >>> candidate_id("k8s-target-port-misconfig-1", 2)
        'k8s-target-port-misconfig-1-g2'
    """
    return f"{re.sub(r'[^a-z0-9-]+', '-', seed.lower()).strip('-')}-g{group}"


@lru_cache(maxsize=1)
def prompts() -> dict:
    """Load the generator's prompt templates."""
    return yaml.safe_load(PROMPTS.read_text())


def seed_messages(seed: Scenario) -> list[Message]:
    """Return the chat that asks for a new scenario from one seed (the GRPO prompt of the scenario generator).

    Example:
        >>> from aoi.problems.seeds import seed_scenarios
        >>> messages = seed_messages(seed_scenarios()[0])
        >>> [m["role"] for m in messages], "NEW scenario" in messages[1]["content"]
        (['system', 'user'], True)
    """
    values = {"app": seed.app, "namespace": seed.namespace, "seed": dumps(seed)}
    return [{"role": "system", "content": prompts()["system"].strip()},
            {"role": "user", "content": string.Template(prompts()["user"]).substitute(values).strip()}]


def candidate(seed: Scenario, text: str, *, generator: str, group: int) -> Candidate:
    """Parse and check one reply; the scenario's id and source are set from its provenance.

    Example:
        >>> from aoi.problems.seeds import seed_scenarios
        >>> c = candidate(seed_scenarios()[0], "no idea", generator="replay:x", group=0)
        >>> c.valid, c.errors
        (False, ('the text is not one JSON object (it holds none); write one scenario as a JSON object',))
    """
    scenario, reason = parse_text(text)
    if scenario is None:
        return Candidate(seed=seed.id, generator=generator, group=group, text=text, scenario=None, errors=(reason,))
    scenario |= {"id": candidate_id(seed.id, group), "source": {"seed": seed.id, "generator": generator,
                                                                  "group": group}}
    errors = format_errors(scenario) or scope_errors(Scenario.from_dict(scenario))
    return Candidate(seed=seed.id, generator=generator, group=group, text=text, scenario=scenario,
                     errors=tuple(errors))


def generate(model: Model, seeds: Iterable[Scenario], *, group: int, generator: str,
             max_tokens: int = MAX_TOKENS) -> Iterator[Candidate]:
    """Ask the model for `group` new scenarios per seed; yield each candidate, valid or not, as it comes.

    Example:
        >>> from aoi.models.replay import ReplayModel
        >>> from aoi.problems.seeds import seed_scenarios
        >>> [c.valid for c in generate(ReplayModel(["{}"]), seed_scenarios()[:1], group=1, generator="replay")]
        [False]
    """
    for seed in seeds:
        messages, schema = seed_messages(seed), decoding_schema(seed)
        for index in range(group):
            reply = model.complete(messages, role=ROLE, max_tokens=max_tokens, schema=schema)
            yield candidate(seed, reply.text, generator=generator, group=index)


def decoding_schema(seed: Scenario) -> dict:
    """Return the bounded JSON schema a local model decodes under: a subset of the format, app and namespace fixed.

    Example:
        >>> from aoi.problems.seeds import seed_scenarios
        >>> seed = seed_scenarios()[0]
        >>> decoding_schema(seed)["properties"]["namespace"]["enum"] == [seed.namespace]
        True
    """
    command = {"type": "string", "pattern": command_pattern(seed.namespace)}
    symptom = _object(command=command, pattern=_text(40), description=_text(80))
    cause = _object(system_level={"type": "string", "enum": list(SYSTEM_LEVELS)},
                    fault_type={"type": "string", "enum": list(FAULT_TYPES)}, components=_list(_text(30)))
    return _object(id=_text(30), app={"type": "string", "enum": [seed.app]},
                   namespace={"type": "string", "enum": [seed.namespace]}, description=_text(100),
                   fault=_list(_object(kubectl=command)), symptoms=_list(symptom), root_cause=cause,
                   diagnostic_commands=_list(command), solution_commands=_list(command))


def command_pattern(namespace: str) -> str:
    """Return the regex a decoded command follows: kubectl, one of VERBS, one to three plain words, `-n` the namespace.

    No quotes or backslashes (nothing to escape in JSON), so SmolLM2's commands parse and stay in scope; free text
    left it writing non-kubectl lines that scope_errors refused (0 of 12 valid in benchmarks/evolver.py).

    Example:
        >>> import re
        >>> bool(re.fullmatch(command_pattern("ns"), "kubectl scale deployment/geo --replicas=0 -n ns"))
        True
    """
    return rf"kubectl ({'|'.join(VERBS)})( [a-z0-9/._=:-]{{1,40}}){{1,3}} -n {re.escape(namespace)}"


def _object(**fields: dict) -> dict:
    return {"type": "object", "required": list(fields), "additionalProperties": False, "properties": fields}


def _text(limit: int) -> dict:
    return {"type": "string", "minLength": 1, "maxLength": limit}


def _list(items: dict) -> dict:
    return {"type": "array", "minItems": 1, "maxItems": 2, "items": items}


def write_candidates(candidates: Iterable[Candidate], out: Path, scenarios: Path | None = None) -> dict:
    """Write every candidate's record to `out` (and the valid scenarios alone to `scenarios`); return the counts."""
    counts = {"candidates": 0, "valid": 0}
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    valid_file = open(scenarios, "w") if scenarios else None  # noqa: SIM115 (closed below, written as we go)
    try:
        with open(out, "w") as handle:
            for item in candidates:
                handle.write(json.dumps(item.record()) + "\n")
                handle.flush()  # a long run's candidates are readable while it goes on
                counts["candidates"] += 1
                counts["valid"] += item.valid
                if valid_file and item.valid:
                    valid_file.write(dumps(Scenario.from_dict(item.scenario)) + "\n")
    finally:
        if valid_file:
            valid_file.close()
    return counts


def load_generator(spec: str, *, seed: int = 0, temperature: float = 1.0) -> Model:
    """Build the generator's model from a spec; the expert writes no scenarios, so it is refused.

    Example:
        >>> load_generator("expert")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ValueError: the expert model diagnoses but writes no scenarios; use local:smollm2, openai:<model> or ...
    """
    from aoi.models.registry import load_model

    if spec.split(":")[0] == "expert":
        raise ValueError("the expert model diagnoses but writes no scenarios; use local:smollm2, openai:<model> or "
                         "replay:<file>")
    # Local models take a sampling seed (each call then uses seed + n); servers sample on their own.
    extra = {"seed": seed} if spec.startswith("local:") else {}
    return load_model(spec, temperature=temperature, **extra)


def scenarios_command(
        model: str = typer.Option(..., "--model", help="Model spec: local:smollm2[+adapter=DIR], openai:<model>, "
                                  "vllm:<model>@<url>, ollama:<model>, replay:<file>."),
        seeds: Path = typer.Option(..., "--seeds", help="Seed scenarios, JSON Lines (`aoi scenarios seeds --out`)."),
        out: Path = typer.Option(..., "--out", help="Candidates to write, JSON Lines with provenance and validity."),
        group: int = typer.Option(4, "--group", min=1, help="Candidates per seed."),
        seed: int = typer.Option(0, "--seed", help="Sampling seed of local models: same seed, same candidates."),
        limit: int | None = typer.Option(None, "--limit", min=1, help="Use only the first N seeds."),
        temperature: float = typer.Option(1.0, "--temperature", min=0.0, help="Sampling temperature (0: greedy)."),
        max_tokens: int = typer.Option(MAX_TOKENS, "--max-tokens", min=16, help="Token cap per candidate."),
        valid_out: Path | None = typer.Option(None, "--valid-out", help="Also write the valid candidates "
                                              "alone: a scenario file for `aoi scenarios validate`, `aoi eval`."),
) -> None:
    """Generate new fault scenarios from seed scenarios with any model; keep valid and invalid candidates."""
    from aoi.models.base import ModelError

    try:
        chosen = load_scenarios(seeds)[:limit]
        generator = load_generator(model, seed=seed, temperature=temperature)
        made = generate(generator, chosen, group=group, generator=model, max_tokens=max_tokens)
        counts = write_candidates(made, out, valid_out)
    except (ModelError, ValueError, OSError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    typer.echo(f"{counts['candidates']} candidates from {len(chosen)} seeds, {counts['valid']} valid: {out}")
