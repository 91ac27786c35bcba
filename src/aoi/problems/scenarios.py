"""Fault scenarios as data: a JSON format (schema, loader, writer) and the four eval problems each one becomes.

A scenario is one JSON object (a file holds one per line, JSON Lines): the app, the fault as Kubernetes operations
applied with admin rights, the symptoms it shows, its root cause, and the commands that diagnose and fix it. The
format is documented in docs/scenarios.md. Problems built from a scenario have ids `scenario:<id>-<task type>`;
`register` makes a file's scenarios resolvable by `aoi.problems.make`, as eval workers do from `env.scenarios`.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

import regex

from aoi.problems.build import namespace as app_namespace
from aoi.problems.model import TWIN, Answers, Fault, Problem, frozen
from aoi.problems.scenario_schema import API_KINDS, SCHEMA
from aoi.problems.scope import scope_errors
from aoi.tasks import TASK_TYPES, task

PREFIX = "scenario:"
NOT_JSON = "the text is not one JSON object"  # how parse_text's errors start (rewards tell them from field errors)
FENCE = regex.compile(r"```(?:json)?\s*(.*?)```", regex.DOTALL)
PATTERN_SECONDS = 1.0  # longest a symptom pattern may search one output
MAX_SCAN = 200_000  # characters of an output a symptom pattern searches
MECHANISM = "scenario"  # Fault.mechanism of a scenario problem: the env applies Fault.params["operations"]
WORKLOAD_OF = {"hotel-reservation": "hotel", "social-network": "social"}  # the app's AIOpsLab wrk2 load, if any

__all__ = ["SCHEMA", "RootCause", "Scenario", "Symptom", "dumps", "format_errors", "load_scenarios", "parse_text",
           "problem_of", "register", "scope_errors"]


@dataclass(frozen=True)
class Symptom:
    """A read-only kubectl command and a regex that matches its output on the faulty system only."""

    command: str
    pattern: str
    description: str = ""

    def shows(self, output: str) -> bool:
        """Return whether the pattern matches the output (multi-line mode, the first MAX_SCAN characters).

        A search running past PATTERN_SECONDS counts as no match: a generated pattern must not stall a GRPO step.

        Example:
            >>> s = Symptom("kubectl get pods -n x", r"^geo-1 +0/1")
            >>> s.shows("NAME   READY" + chr(10) + "geo-1  0/1"), Symptom("c", r"(x+x+)+y").shows("x" * 5000)
            (True, False)
        """
        try:
            return regex.search(self.pattern, output[:MAX_SCAN], flags=regex.MULTILINE,
                                timeout=PATTERN_SECONDS) is not None
        except TimeoutError:
            return False


@dataclass(frozen=True)
class RootCause:
    """What a correct analysis and localization submit: AIOpsLab's system level and fault type, the components."""

    system_level: str
    fault_type: str
    components: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class Scenario:
    """One fault scenario (see docs/scenarios.md); `fault` operations are plain dicts as in the JSON."""

    id: str
    app: str
    namespace: str
    description: str
    fault: tuple[dict, ...]
    symptoms: tuple[Symptom, ...]
    root_cause: RootCause
    diagnostic_commands: tuple[str, ...]
    solution_commands: tuple[str, ...]
    source: dict = field(default_factory=dict)

    @classmethod
    def from_dict(cls, obj: dict) -> Scenario:
        """Return the scenario of a JSON object (ValueError listing every format error)."""
        errors = format_errors(obj)
        if errors:
            raise ValueError("invalid scenario: " + "; ".join(errors))
        root = obj["root_cause"]
        return cls(id=obj["id"], app=obj["app"], namespace=obj["namespace"], description=obj["description"],
                   fault=tuple(obj["fault"]), symptoms=tuple(Symptom(**s) for s in obj["symptoms"]),
                   root_cause=RootCause(root["system_level"], root["fault_type"], tuple(root["components"])),
                   diagnostic_commands=tuple(obj["diagnostic_commands"]),
                   solution_commands=tuple(obj["solution_commands"]), source=dict(obj.get("source") or {}))

    def to_dict(self) -> dict:
        """Return the JSON object of the scenario (tuples as lists, `source` only when set)."""
        out = json.loads(json.dumps(asdict(self)))
        if not out["source"]:
            out.pop("source")
        return out


def format_errors(obj) -> list[str]:
    """Return what is wrong with a scenario object's format, one sentence each (empty: valid).

    Example:
        >>> format_errors({"id": "x"})[0][:42]
        "missing fields 'app', 'namespace', 'descri"
    """
    import jsonschema

    if not isinstance(obj, dict):
        return [f"a scenario is a JSON object, not {type(obj).__name__}"]
    validator = jsonschema.Draft202012Validator(SCHEMA)
    found = sorted(validator.iter_errors(obj), key=lambda e: [str(p) for p in e.absolute_path])
    missing: dict[str, list[str]] = {}  # where -> the required fields it lacks, said in one sentence
    for error in (e for e in found if e.validator == "required"):
        missing.setdefault("/".join(str(p) for p in error.absolute_path), []).append(error.message.split("'")[1])
    errors = [f"{where + ': ' if where else ''}missing field{'s' if len(names) > 1 else ''} "
              f"{', '.join(map(repr, names))}: add {'them' if len(names) > 1 else 'it'} (see docs/scenarios.md)"
              for where, names in missing.items()]
    errors += [_schema_message(e) for e in found if e.validator != "required"]
    return errors or _value_errors(obj)


def _schema_message(error) -> str:
    """Return one schema error as a sentence naming the field and the fix."""
    where = "/".join(str(p) for p in error.absolute_path) or "the scenario"
    if error.validator == "additionalProperties":
        return f"{where}: {error.message}; remove it or check its spelling (see docs/scenarios.md)"
    return f"{where}: {error.message}"


def _value_errors(obj: dict) -> list[str]:
    """Return the errors a schema cannot see: the app's namespace, regexes that do not compile, unknown kinds."""
    errors = []
    want = app_namespace(obj["app"])
    if obj["namespace"] != want:
        errors.append(f"namespace: {obj['namespace']!r} is not the namespace of {obj['app']}; use {want!r}")
    for i, symptom in enumerate(obj["symptoms"]):
        try:
            regex.compile(symptom["pattern"])
        except regex.error as exc:
            errors.append(f"symptoms/{i}/pattern: not a valid regex ({exc}); fix it (Python re syntax)")
    for i, op in enumerate(obj["fault"]):
        kind = (op.get("api") or {}).get("kind")
        if kind is not None and kind not in API_KINDS:
            errors.append(f"fault/{i}/api/kind: unknown kind {kind!r}; use one of {', '.join(API_KINDS)}")
    return errors


def dumps(scenario: Scenario) -> str:
    """Return the scenario as one JSON line (no newline at the end).

    Example:
        >>> from aoi.problems.seeds import seed_scenarios
        >>> Scenario.from_dict(json.loads(dumps(seed_scenarios()[0]))) == seed_scenarios()[0]
        True
    """
    return json.dumps(scenario.to_dict(), ensure_ascii=False, separators=(",", ":"))


def load_scenarios(path: str | Path) -> list[Scenario]:
    """Read a JSON Lines file of scenarios; ValueError naming each bad line, its field and the fix.

    Blank lines are skipped; ids must be unique in the file.

    Example:
        >>> load_scenarios("seeds.jsonl")[0].app  # doctest: +SKIP
        'social-network'
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"scenario file {path} does not exist; write one (`aoi scenarios seeds --out {path}`)")
    scenarios, errors, seen = [], [], {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            scenario, problems = _parse_line(line)
            errors += [f"{path}:{number}: {p}" for p in problems]
            if scenario is not None and scenario.id in seen:
                errors.append(f"{path}:{number}: id {scenario.id!r} repeats line {seen[scenario.id]}; ids must be "
                              "unique in a file, rename one")
            elif scenario is not None:
                seen[scenario.id] = number
                scenarios.append(scenario)
    if errors:
        raise ValueError("\n".join(errors))
    return scenarios


def parse_text(text: str) -> tuple[dict | None, str | None]:
    """Return (the JSON object a model wrote, None), or (None, why not): a fenced block, else the first object.

    Text after the object is ignored, as models often explain their answer after it.

    Example:
        >>> parse_text('Here:\\n```json\\n{"id": "x"}\\n```')
        ({'id': 'x'}, None)
        >>> parse_text('{"id": ')[1]
        'the text is not one JSON object (Expecting value at line 1 column 7); write one scenario as a JSON object'
    """
    fenced = FENCE.search(text)
    body = (fenced.group(1) if fenced else text[text.find("{"):] if "{" in text else "").strip()
    try:
        value = json.JSONDecoder().raw_decode(body)[0]
    except json.JSONDecodeError as err:
        why = "it holds none" if not body else f"{err.msg} at line {err.lineno} column {err.colno}"
    else:
        if isinstance(value, dict):
            return value, None
        why = f"it is a JSON {type(value).__name__}"
    return None, f"{NOT_JSON} ({why}); write one scenario as a JSON object"


def _parse_line(line: str) -> tuple[Scenario | None, list[str]]:
    """Return (scenario, []) for a valid line, else (None, the errors)."""
    try:
        obj = json.loads(line)
    except ValueError as exc:
        return None, [f"not valid JSON ({exc}); write one JSON object per line"]
    errors = format_errors(obj)
    return (None, errors) if errors else (Scenario.from_dict(obj), [])


def problem_id(scenario_id: str, task_type: str) -> str:
    """Return the problem id of one task type of a scenario.

    Example:
        >>> problem_id("geo-image", "mitigation")
        'scenario:geo-image-mitigation'
    """
    return f"{PREFIX}{scenario_id}-{task_type}"


def problem_of(scenario: Scenario, task_type: str) -> Problem:
    """Return the eval problem of one task type: answers from the root cause, the fault ops and symptoms in `fault`.

    Example:
        >>> from aoi.problems.seeds import seed_scenarios
        >>> problem_of(seed_scenarios()[0], "localization").answers.localization
        ('user-service',)
    """
    task_type = task(task_type).type  # ValueError naming the four for any other
    from aoi.problems.families import WORKLOADS

    root, workload = scenario.root_cause, WORKLOAD_OF.get(scenario.app)
    fault = Fault(mechanism=MECHANISM, namespace=scenario.namespace, target=None,
                  params=frozen({"operations": scenario.fault}),
                  expect=frozen({"symptoms": scenario.symptoms, "solution": scenario.solution_commands,
                                 "scenario": scenario.id}))
    return Problem(id=problem_id(scenario.id, task_type), task_type=task_type, app=scenario.app,
                   namespace=scenario.namespace, family=f"{PREFIX}{scenario.id}", target=None, backend=TWIN,
                   fault=fault, answers=Answers("Yes", root.components, root.system_level, root.fault_type),
                   parity="pods_normal_guarded", workload=WORKLOADS[workload] if workload else None,
                   valid_targets=())


_REGISTERED: dict[str, Scenario] = {}  # scenario id -> scenario, for make("scenario:...") in this process


def register(path: str | Path) -> list[Scenario]:
    """Make a file's valid scenarios resolvable by `aoi.problems.make`; return them (invalid ones are skipped)."""
    return load_valid(path)[0]


def load_valid(path: str | Path) -> tuple[list[Scenario], list[str]]:
    """Return a file's valid scenarios and a note per line skipped (bad format, out of scope, a repeated id), and
    register them.

    Example:
        >>> scenarios, notes = load_valid("generated.jsonl")  # doctest: +SKIP
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"scenario file {path} does not exist; pass an existing JSON Lines file")
    valid, notes, seen = [], [], set()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            scenario, errors = _parse_line(line)
            errors = errors or scope_errors(scenario) or (
                [f"id {scenario.id!r} repeats an earlier line; rename it"] if scenario.id in seen else [])
            if errors:
                notes.append(f"skipped {path}:{number}: {'; '.join(errors)}")
            else:
                seen.add(scenario.id)
                valid.append(scenario)
    _REGISTERED.update({s.id: s for s in valid})
    return valid, notes


def make_problem(pid: str) -> Problem:
    """Return the problem of a `scenario:<id>-<task>` id whose scenario was registered (ValueError otherwise)."""
    stem, _, task_type = pid.removeprefix(PREFIX).rpartition("-")
    if task_type not in TASK_TYPES or not stem:
        raise ValueError(f"{pid!r} is not a scenario problem id; write scenario:<id>-<task type> "
                         f"({', '.join(TASK_TYPES)})")
    if stem not in _REGISTERED:
        raise ValueError(f"scenario {stem!r} is not loaded; name the file that holds it: `aoi eval --problems "
                         f"scenarios:FILE`, env.scenarios: [FILE] in the config, or aoi.problems.scenarios.register")
    return problem_of(_REGISTERED[stem], task_type)
