"""Choose what an eval runs: problem ids (all, a list, or a scenario file), filtered by task type and app, optionally
every target; or problem keys ("problem_id@target", as splits.json writes them) given as a list, a file or a split."""

from __future__ import annotations

from pathlib import Path

from aoi.config import RunConfig
from aoi.problems import Problem, list_problems
from aoi.problems import make as make_problem
from aoi.problems.families import FAMILIES
from aoi.problems.scenarios import load_valid, problem_id
from aoi.tasks import TASK_TYPES, task

SCENARIOS = "scenarios:"  # --problems scenarios:FILE: the four task types of each valid scenario in FILE
KEY_HINT = "keys are problem_id@target: `aoi problems list` lists the ids, `aoi problems show ID` an id's targets"


def scenario_file(ids: str) -> Path | None:
    """Return the scenario file a --problems value names (absolute, so workers anywhere find it), else None.

    Example:
        >>> scenario_file("scenarios:/data/gen.jsonl").as_posix(), scenario_file("all")
        ('/data/gen.jsonl', None)
    """
    ids = ids.strip()
    return Path(ids.removeprefix(SCENARIOS)).expanduser().resolve() if ids.startswith(SCENARIOS) else None


def with_scenarios(config: RunConfig, ids: str) -> RunConfig:
    """Return the config with env.scenarios naming --problems' scenario file (workers and resumes rebuild from it)."""
    path = scenario_file(ids)
    if path is None:
        return config
    config = config.model_copy(deep=True)
    config.env.scenarios = [path]
    return config


def _scenario_pairs(path: Path, task_type: str | None, app: str | None) -> tuple[list[tuple[str, None]], list[str]]:
    """Return the four task types of each valid scenario in a file (registered here), and a note per one skipped."""
    scenarios, notes = load_valid(path)
    tasks = [t for t in TASK_TYPES if task_type in (None, t)]
    return [(problem_id(s.id, t), None) for s in scenarios if app in (None, s.app) for t in tasks], notes


def _check_filters(task_type: str | None, app: str | None) -> None:
    """Raise ValueError naming the choices when the task type or the app is unknown."""
    if task_type is not None:
        task(task_type)  # ValueError naming the four for any other
    apps = sorted({f.app for f in FAMILIES})
    if app is not None and app not in apps:
        raise ValueError(f"unknown app {app!r}; choose from {', '.join(apps)}")


def _problems(ids: str, task_type: str | None, app: str | None) -> list[Problem]:
    """Resolve `all` or a comma-separated id list, then apply the filters."""
    _check_filters(task_type, app)
    if ids.strip() == "all":
        return list_problems(task_type, app)
    chosen = [make_problem(pid.strip()) for pid in ids.split(",") if pid.strip()]
    if not chosen:
        raise ValueError("--problems is empty; pass all or a comma-separated list of ids (see `aoi problems list`)")
    return [p for p in chosen if (task_type in (None, p.task_type)) and (app in (None, p.app))]


def select(ids: str = "all", task_type: str | None = None, app: str | None = None,
           targets: str | None = None) -> tuple[list[tuple[str, str | None]], list[str]]:
    """Return ((problem_id, target) pairs to run, notes on what was skipped).

    `targets="all"` expands each problem to every valid target of its family; problems that need another backend
    than the twin (the Flower ids) are skipped with a note.

    Example:
        >>> pairs, notes = select("all", task_type="detection")
        >>> len(pairs), "flower_node_stop-detection" in notes[0]
        (32, True)
        >>> len(select("k8s_target_port-misconfig-mitigation-1", targets="all")[0]) > 1
        True
    """
    _check_filters(task_type, app)
    if targets not in (None, "default", "all"):
        raise ValueError(f"--targets takes 'all' (every valid target) or nothing (each problem's default), "
                         f"not {targets!r}")
    if scenario_file(ids) is not None:
        return _scenario_pairs(scenario_file(ids), task_type, app)
    problems = _problems(ids, task_type, app)
    skipped = [p.id for p in problems if p.backend != "twin"]
    note = (f"skipped {len(skipped)} problem(s) that need the aiopslab backend (Docker Compose apps the twin does "
            f"not simulate): {', '.join(skipped)}")
    notes = [note] if skipped else []
    pairs: list[tuple[str, str | None]] = []
    for p in (p for p in problems if p.backend == "twin"):
        every = targets == "all" and p.valid_targets
        pairs += [(p.id, t) for t in p.valid_targets] if every else [(p.id, None)]
    return pairs, notes


def parse_key(key: str) -> tuple[str, str | None]:
    """Return the (problem_id, target) a key names; an empty target (`ID@` or `ID`) is the id's own.

    Example:
        >>> parse_key("revoke_auth_mongodb-detection-1@mongodb-rate"), parse_key(" noop_detection_x-1@ ")
        (('revoke_auth_mongodb-detection-1', 'mongodb-rate'), ('noop_detection_x-1', None))
    """
    problem_id, _, target = key.strip().partition("@")
    return problem_id.strip(), target.strip() or None


def _key_problem(key: str) -> Problem:
    """Return the problem a key names, runnable on the twin; ValueError naming the key and how to find valid ones."""
    try:
        problem_id, target = parse_key(key)
        if not problem_id:
            raise ValueError("it names no problem id")
        problem = make_problem(problem_id, target)
        problem.require_backend("twin")
    except ValueError as exc:
        raise ValueError(f"bad key {key.strip()!r}: {exc}; {KEY_HINT}") from None
    return problem


def select_keys(keys: list[str], task_type: str | None = None,
                app: str | None = None) -> list[tuple[str, str | None]]:
    """Return the (problem_id, target) pairs of problem keys, each checked, filtered by task type and app, in order
    and once each (a key naming an id's own target and the bare id are the same problem).

    Example:
        >>> select_keys(["revoke_auth_mongodb-detection-1@mongodb-rate", "noop_detection_hotel_reservation-1@",
        ...              "revoke_auth_mongodb-localization-1"], task_type="detection")
        [('revoke_auth_mongodb-detection-1', 'mongodb-rate'), ('noop_detection_hotel_reservation-1', None)]
        >>> select_keys(["nope@x"])  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: bad key 'nope@x': unknown problem id 'nope'...
    """
    _check_filters(task_type, app)
    pairs: dict[tuple, tuple[str, str | None]] = {}
    for key in (k for k in keys if k.strip()):
        problem = _key_problem(key)
        if task_type in (None, problem.task_type) and app in (None, problem.app):
            pairs.setdefault((problem.id, problem.target), parse_key(key))
    return list(pairs.values())


def read_keys(path: Path) -> list[str]:
    """Return the keys of a file, one per line (blank lines and lines starting with # skipped).

    Example:
        >>> import tempfile; path = Path(tempfile.mkdtemp()) / "keys.txt"
        >>> _ = path.write_text("# held out\\np@geo\\n\\nq@\\n")
        >>> read_keys(path)
        ['p@geo', 'q@']
    """
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ValueError(f"cannot read --keys-file {path} ({exc.strerror or exc}); write one problem_id@target key "
                         "per line") from None
    keys = [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]
    if not keys:
        raise ValueError(f"--keys-file {path} holds no keys; write one problem_id@target key per line")
    return keys
