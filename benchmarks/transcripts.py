"""Record what every twin problem id shows at the env level and at the agent level, to prove a refactor changed
nothing an agent sees.

Env level: a fixed action script per task type (look around with every action, a refused probe command, an unknown
action, a reply without a block, a submit its signature refuses, the reference fix for a mitigation, then the right
answer, or a wrong one for about a third of the ids) played through aoi.env; every observation, reward, flag and
info is kept. Agent level: the expert team (`model: expert`, every role) through aoi.agents.runtime.run_episode;
the trajectory is kept (each step's role, text, action, observation, status, tokens and messages; submission,
results). Wall-clock fields (durations, timestamps, ids) are dropped and the episode folder is masked; episodes run
in fixed folders under /tmp/aoi-transcripts (the results' in_tokens count the folder's name), one run at a time (a
second run waits for the first's lock). Two readings depend on the wall clock: exec_shell's 30 s timeout and the ages
kubectl prints for events; on a machine loaded far past its cores (load 10 on 2) they can differ for one id (seen:
redeploy_without_PV-mitigation-1, whose fix restarts every deployment at once): rerun that id with --only.

Run (niced, on 2 cores: 2.5-3.5 minutes beside a benchmark at load ~2, 18 minutes at load 10):
    python benchmarks/transcripts.py --out before.json [--only SUBSTRING]
    python benchmarks/transcripts.py --compare before.json after.json   # lists the ids that differ; exit 1 if any
    python benchmarks/transcripts.py --compare before.json after.json --ignore-info-keys refused,exit_status
        # the same, with env-level info keys a change added on purpose left out of both sides
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import json
import shutil
import sys
import zlib
from pathlib import Path

from aoi.agents.runtime import run_episode
from aoi.config import load_config
from aoi.env import make
from aoi.models.expert import ExpertModel
from aoi.problems import list_problems, solutions

SEED = 3
SCRATCH = Path("/tmp/aoi-transcripts")  # fixed: the env's token counts include the episode folder's name
WALL = ("wall_seconds", "latency", "t", "started_at", "ended_at", "id")  # wall clock or random per run
ROLES = ("observer", "probe", "executor", "compressor")
# plain strings, not aoi.tasks: the script must also run on trees older than aoi.tasks (a baseline's worktree)
WRONG = {"detection": "No", "localization": ["jaeger"],
         "analysis": {"system_level": "Hardware", "fault_type": "Code Defect"}}


def twin_ids(only: str | None = None) -> list[str]:
    """Return the twin problem ids of the catalogue (all 87), or those containing `only`."""
    return [p.id for p in list_problems() if p.backend == "twin" and (not only or only in p.id)]


def live_texts(env) -> dict[str, str]:
    """Read what a reference fix edits (mongod.conf, the flag file) from the twin, as tests/env does."""
    p, kube = env.problem, env.backend.kube
    if p.fault.mechanism == "mongo_tls":
        return {"mongod.conf": kube.get("configmaps", p.namespace, p.fault.expect["configmap"])["data"][
            p.fault.expect["key"]]}
    if p.fault.mechanism == "flagd_flag":
        return {"flags": kube.get("configmaps", p.namespace, "flagd-config")["data"]["demo.flagd.json"]}
    return {}


def looks(env) -> list[tuple[str, str | None]]:
    """Return the look-around actions and the role each runs as: every read action, a refusal, two bad replies."""
    p = env.problem
    service = sorted(p.valid_targets)[0] if p.valid_targets else "frontend"
    return [(solutions.shell(f"kubectl get pods -n {p.namespace} -o wide"), None),
            (solutions.action("get_logs", p.namespace, service), None),
            (solutions.action("get_metrics", p.namespace, 5), None),
            (solutions.action("get_traces", p.namespace, 5), None),
            (solutions.action("read_traces", "nowhere.csv"), None),
            (solutions.shell(f"kubectl delete pod --all -n {p.namespace}"), "probe"),
            (solutions.action("get_everything", p.namespace), None),
            ("I think the service is fine.", None),
            (solutions.action("submit", 1, 2), None)]


def answer(env) -> str:
    """Return the closing submit: the right answer, or a wrong one for the ids whose crc32 is divisible by 3."""
    p = env.problem
    if p.task_type == "mitigation" or zlib.crc32(p.id.encode()) % 3:
        return solutions.answer(p)
    return solutions.action("submit", WRONG[p.task_type])


def env_transcript(problem_id: str, workdir: Path) -> list:
    """Play the fixed script of the id's task type; return the reset text and every step's 5-tuple."""
    with make(problem_id, seed=SEED, workdir=workdir) as env:
        out: list = [list(env.reset())]
        script = looks(env)
        if env.problem.task_type == "mitigation":
            script += [(step, None) for step in solutions.mitigation(env.problem, live_texts(env))]
        for text, role in [*script, (answer(env), None)]:
            out.append(list(env.step(text, role=role)))
            if env.done:
                break
        return out


def agent_transcript(problem_id: str, workdir: Path) -> dict:
    """Run the expert team over one episode; return its trajectory."""
    config = load_config(overrides={"model": "expert", "env": {"seed": SEED}})
    with make(problem_id, seed=SEED, workdir=workdir) as env:
        return run_episode(env, config, dict.fromkeys(ROLES, ExpertModel())).to_dict()


def scrub(value, workdir: Path):
    """Drop wall-clock and random fields (any depth) and mask the episode folder."""
    if isinstance(value, dict):
        return {k: scrub(v, workdir) for k, v in value.items() if k not in WALL}
    if isinstance(value, list | tuple):
        return [scrub(v, workdir) for v in value]
    if isinstance(value, str):
        return value.replace(str(workdir), "<WORKDIR>")
    return value


def record(problem_id: str, scratch: Path) -> dict:
    """Return both transcripts of one id, scrubbed."""
    out = {}
    for level, play in (("env", env_transcript), ("agent", agent_transcript)):
        workdir = scratch / f"{level}-{problem_id}"
        out[level] = scrub(play(problem_id, workdir), workdir)
    return out


def digest(transcript: dict) -> str:
    """Return the sha256 of a transcript's canonical JSON."""
    return hashlib.sha256(json.dumps(transcript, sort_keys=True).encode()).hexdigest()


def write(path: Path, only: str | None) -> None:
    """Record every id and write {"sha256": {id: digest}, "transcripts": {id: transcript}}."""
    transcripts = {}
    with open(f"{SCRATCH}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another run in the same folders would change both
        shutil.rmtree(SCRATCH, ignore_errors=True)
        for problem_id in twin_ids(only):
            transcripts[problem_id] = record(problem_id, SCRATCH)
            print(f"{digest(transcripts[problem_id])[:12]} {problem_id}", flush=True)
        shutil.rmtree(SCRATCH, ignore_errors=True)
    data = {"sha256": {k: digest(v) for k, v in transcripts.items()}, "transcripts": transcripts}
    path.write_text(json.dumps(data, indent=1, sort_keys=True))


def without(transcript: dict, keys: set[str]) -> dict:
    """Return a transcript whose env-level infos (the last item of the reset and of every step) lack `keys`."""
    env = [[*entry[:-1], {k: v for k, v in entry[-1].items() if k not in keys}] for entry in transcript["env"]]
    return {**transcript, "env": env}


def compare(first: Path, second: Path, ignore: set[str] = frozenset()) -> int:
    """Print the ids whose transcripts differ (or are missing from one file) and at which levels, leaving the
    env-level info keys `ignore` out of both; return 1 if any id differs, else 0."""
    a, b = (json.loads(p.read_text())["transcripts"] for p in (first, second))
    differ = 0
    for problem_id in sorted(a.keys() | b.keys()):
        one, two = (without(t[problem_id], ignore) if problem_id in t else {} for t in (a, b))
        levels = [level for level in ("env", "agent") if one.get(level) != two.get(level)]
        if levels:
            differ += 1
            print(f"{problem_id}: {', '.join(levels)}")
    print(f"{differ} of {len(a.keys() | b.keys())} ids differ", file=sys.stderr)
    return 1 if differ else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="write the transcripts of every id to this JSON file")
    parser.add_argument("--only", help="record only ids containing this text")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("A", "B"), help="compare two --out files")
    parser.add_argument("--ignore-info-keys", default="", metavar="K1,K2",
                        help="with --compare: leave these env-level info keys out of both files")
    args = parser.parse_args()
    if args.compare:
        return compare(*args.compare, set(filter(None, args.ignore_info_keys.split(","))))
    if not args.out:
        parser.error("pass --out FILE to record, or --compare A B")
    write(args.out, args.only)
    return 0


if __name__ == "__main__":
    sys.exit(main())
