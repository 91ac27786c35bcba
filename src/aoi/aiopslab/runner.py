"""Run AOI inside real AIOpsLab: its Orchestrator performs the actions, AOI's team decides them.

Each episode is saved as one JSON file, `<out>/<problem_id>__a<attempt>.json`, holding AIOpsLab's outcome (results,
history, final state) and AOI's trajectory side by side; the trajectory also goes to AOI's store.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import sys
import traceback
from collections.abc import Callable
from pathlib import Path

from aoi.aiopslab.agent import AOIAgent
from aoi.config import RunConfig
from aoi.models.base import Model
from aoi.store.sqlite import TrajectoryStore
from aoi.tasks import succeeded

INSTALL = ("AIOpsLab is not installed in this Python environment. To run AOI inside it: "
           "git clone --recurse-submodules https://github.com/microsoft/AIOpsLab && cd AIOpsLab && "
           "pip install -e . (or `poetry install` in this venv); create a kind cluster as its README says "
           "(kind create cluster --config kind/kind-config-x86.yaml); cp aiopslab/config.yml.example "
           "aiopslab/config.yml and set k8s_host: kind. Offline, also pre-seed TIKTOKEN_CACHE_DIR with tiktoken's "
           "cl100k_base file: AIOpsLab downloads it when aiopslab.orchestrator is imported.")
TIKTOKEN = ("importing aiopslab.orchestrator failed ({error}). AIOpsLab fetches tiktoken's cl100k_base at import "
            "time: without internet, set TIKTOKEN_CACHE_DIR to a folder holding that file (see reference/aiopslab.md "
            "2.1), then retry.")
MISSING_MODULE = ("importing aiopslab.orchestrator failed: the module {module!r} is missing ({error}). Install "
                  "AIOpsLab's dependencies into this Python environment ({python}): cd AIOpsLab && pip install -e . "
                  "(or pip install {package}), then retry.")
OTHER = ("importing aiopslab.orchestrator failed ({error}, raised at {where}). Fix that error (AIOpsLab's "
         "aiopslab/config.yml, its dependencies or the file named), then retry.")
NETWORK = ("ConnectionError", "TimeoutError", "URLError", "RequestException", "gaierror", "HTTPError", "SSLError")


class AIOpsLabMissing(RuntimeError):
    """AIOpsLab, its configuration or its cluster is missing; the message says how to set it up."""


def require_aiopslab() -> Path:
    """Return AIOpsLab's package folder; raise AIOpsLabMissing when it is absent or has no cluster configured.

    Example:
        >>> require_aiopslab()  # doctest: +SKIP
        PosixPath('/src/AIOpsLab/aiopslab')
    """
    spec = importlib.util.find_spec("aiopslab")
    if spec is None or not spec.submodule_search_locations:
        raise AIOpsLabMissing(INSTALL)
    folder = Path(list(spec.submodule_search_locations)[0])
    if not (folder / "config.yml").is_file():
        raise AIOpsLabMissing(f"AIOpsLab has no {folder / 'config.yml'}: copy config.yml.example to it and set "
                              "k8s_host (kind for a kind cluster)")
    kubeconfig = Path(os.environ.get("KUBECONFIG", "~/.kube/config").split(os.pathsep)[0]).expanduser()
    if not kubeconfig.is_file():
        raise AIOpsLabMissing(f"no cluster is configured ({kubeconfig} does not exist): create one with "
                              "`kind create cluster --config kind/kind-config-x86.yaml` in AIOpsLab, or set KUBECONFIG")
    return folder


def orchestrator():
    """Return a new AIOpsLab Orchestrator (checking the installation first)."""
    require_aiopslab()
    try:
        from aiopslab.orchestrator import Orchestrator
    except Exception as exc:
        raise AIOpsLabMissing(import_failure(exc)) from exc
    return Orchestrator()


def import_failure(exc: BaseException) -> str:
    """Return what made importing AIOpsLab fail and how to fix it: a missing module, tiktoken's fetch, or the error.

    Example:
        >>> "the module 'wandb' is missing" in import_failure(ModuleNotFoundError("No module", name="wandb"))
        True
    """
    error = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, ModuleNotFoundError) and exc.name:
        return MISSING_MODULE.format(module=exc.name, error=error, python=sys.executable,
                                     package=exc.name.split(".")[0].replace("_", "-"))
    frames = traceback.extract_tb(exc.__traceback__)
    if any("tiktoken" in frame.filename for frame in frames) or _network(exc):
        return TIKTOKEN.format(error=error)
    where = f"{frames[-1].filename}:{frames[-1].lineno}" if frames else "import time"
    return OTHER.format(error=error, where=where)


def _network(exc: BaseException) -> bool:
    """Return whether an exception (or one it chains) is a network failure, as an offline tiktoken fetch raises."""
    seen = exc
    for _ in range(8):  # bounded: chains are short, and a cycle must not hang the error path
        if seen is None:
            return False
        if any(klass.__name__ in NETWORK for klass in type(seen).__mro__):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def run_problem(problem_id: str, config: RunConfig, *, models: dict[str, Model] | None = None, attempt: int = 0,
                out: Path = Path("runs/aiopslab"), make_orchestrator: Callable[[], object] | None = None,
                store: TrajectoryStore | None = None, **agent_options) -> dict:
    """Run one problem through AIOpsLab's Orchestrator with the AOI agent; save and return the episode record.

    Example:
        >>> record = run_problem("misconfig_app_hotel_res-detection-1", load_config())  # doctest: +SKIP
        >>> record["aiopslab"]["results"]["Detection Accuracy"]  # doctest: +SKIP
        'Correct'
    """
    orch = (make_orchestrator or orchestrator)()
    max_steps = config.env.max_steps
    agent = AOIAgent(config, models, max_steps=max_steps, **agent_options)
    orch.register_agent(agent, name="aoi")
    description, instructions, apis = orch.init_problem(problem_id)
    agent.init_context(description, instructions, apis, problem_id=problem_id)
    outcome, error = {}, None
    try:
        outcome = asyncio.run(orch.start_problem(max_steps=max_steps)) or {}
    except Exception as exc:  # noqa: BLE001 - AIOpsLab recovers the fault and re-raises; the record keeps why
        error = f"{type(exc).__name__}: {exc}"
    traj = agent.finish(outcome.get("results"))
    traj.attempt, traj.error = attempt, traj.error or error
    record = episode_record(problem_id, attempt, max_steps, outcome, traj, agent.exchanges, error)
    save_record(record, out)
    (store or TrajectoryStore(config.store.path)).save(traj)
    return record


def episode_record(problem_id: str, attempt: int, max_steps: int, outcome: dict, traj, exchanges: list[dict],
                   error: str | None) -> dict:
    """Return the JSON-ready record of one episode: AIOpsLab's outcome and AOI's trajectory side by side."""
    return {"problem_id": problem_id, "task_type": traj.task_type, "attempt": attempt, "agent": "aoi",
            "max_steps": max_steps, "success": succeeded(outcome.get("results")), "error": error,
            "env_version": traj.env_version,
            "aiopslab": {"results": outcome.get("results"), "history": [_item(i) for i in outcome.get("history", [])],
                         "final_state": outcome.get("final_state"),
                         "framework_overhead": outcome.get("framework_overhead")},
            "exchanges": exchanges, "trajectory": traj.to_dict()}


def _item(item) -> dict:
    """Return a session item (AIOpsLab's pydantic SessionItem or a dict) as {role, content}."""
    if isinstance(item, dict):
        return {"role": item.get("role"), "content": item.get("content")}
    return {"role": getattr(item, "role", None), "content": getattr(item, "content", None)}


def episode_path(out: Path, problem_id: str, attempt: int) -> Path:
    """Return where an episode's record is saved."""
    return Path(out) / f"{problem_id}__a{attempt}.json"


def save_record(record: dict, out: Path) -> Path:
    """Write an episode record atomically (a kill never leaves half a file that resume would trust)."""
    path = episode_path(out, record["problem_id"], record["attempt"])
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(record, indent=1, default=str))
    tmp.replace(path)
    return path


def select_problems(spec: str = "all", task_type: str | None = None, registry=None) -> list[str]:
    """Return the ids to run: all (AIOpsLab's registry when given, else AOI's) or a comma list, by task substring.

    Example:
        >>> select_problems("a-detection-1, b-mitigation-1", "detection")
        ['a-detection-1']
        >>> len(select_problems("all", "mitigation"))
        14
    """
    from aoi.problems.registry import problem_ids

    if spec == "all":
        ids = registry.get_problem_ids(task_type) if registry is not None else problem_ids()
    else:
        ids = [s.strip() for s in spec.split(",") if s.strip()]
    return [i for i in ids if not task_type or task_type in i]


def eval_problems(ids: list[str], config: RunConfig, *, k: int = 1, out: Path = Path("runs/aiopslab"),
                  models: dict[str, Model] | None = None, make_orchestrator: Callable[[], object] | None = None,
                  on_episode: Callable[[dict], None] | None = None) -> dict:
    """Run k attempts of each problem one after another (one cluster), skipping saved episodes; return the summary.

    Example:
        >>> summary = eval_problems(["wrong_bin_usage-detection-1"], load_config(), k=2)  # doctest: +SKIP
    """
    from aoi.agents.runtime import models_from_config

    models = models or models_from_config(config)
    store = TrajectoryStore(config.store.path)
    for problem_id in ids:
        for attempt in range(k):
            if episode_path(out, problem_id, attempt).is_file():
                continue  # resumed: this episode finished before
            record = run_problem(problem_id, config, models=models, attempt=attempt, out=out,
                                 make_orchestrator=make_orchestrator, store=store)
            if on_episode:
                on_episode(record)
    return write_summary(Path(out), ids, k)


def write_summary(out: Path, ids: list[str], k: int) -> dict:
    """Rewrite results.jsonl (one line per saved episode) and summary.json from the episode files."""
    rows = []
    for problem_id in ids:
        for attempt in range(k):
            path = episode_path(out, problem_id, attempt)
            if path.is_file():
                record = json.loads(path.read_text())
                rows.append({key: record[key] for key in ("problem_id", "task_type", "attempt", "success", "error")}
                            | {"results": record["aiopslab"]["results"], "env_version": record.get("env_version"),
                               "trajectory_id": record["trajectory"]["id"]})
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.jsonl").write_text("".join(json.dumps(r, default=str) + "\n" for r in rows))
    summary = summarize(rows)
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    return summary


def summarize(rows: list[dict]) -> dict:
    """Return per task type and overall: episodes, problems, avg@k (mean success) and best@k (any attempt succeeds).

    Example:
        >>> summarize([{"problem_id": "p", "task_type": "detection", "success": True},
        ...            {"problem_id": "p", "task_type": "detection", "success": False}])["detection"]
        {'episodes': 2, 'problems': 1, 'avg@k': 0.5, 'best@k': 1.0}
    """
    groups: dict[str, list[dict]] = {}
    for row in rows:
        groups.setdefault(row["task_type"], []).append(row)
        groups.setdefault("overall", []).append(row)
    summary = {}
    for name, group in groups.items():
        problems = {r["problem_id"] for r in group}
        best = sum(any(r["success"] for r in group if r["problem_id"] == p) for p in problems)
        summary[name] = {"episodes": len(group), "problems": len(problems),
                         "avg@k": round(sum(bool(r["success"]) for r in group) / len(group), 4),
                         "best@k": round(best / len(problems), 4)}
    return summary
