"""Print the trajectory store's size per episode with messages inline (schema 1) and deduplicated (schema 2).

Usage:
    python benchmarks/store_size.py --problems 10            # run the expert on 10 problems first (~20 s)
    python benchmarks/store_size.py --from runs/expert       # or read the trajectories of an `aoi eval --out` run

Both stores hold the same trajectories; each file is checkpointed and vacuumed before it is measured. The dedup
ratio is the bytes of messages the steps reference over the bytes of the distinct messages kept.
"""

from __future__ import annotations

import argparse
import sqlite3
import tempfile
from pathlib import Path

import orjson

from aoi.store.messages import stats
from aoi.store.sqlite import TrajectoryStore, _create_v1
from aoi.trajectory import Trajectory


def expert_run(problems: int, out: Path) -> Path:
    """Run the expert on `problems` problems spread evenly over the registry (every task type comes up); return it."""
    from rich.console import Console

    from aoi.config import load_config
    from aoi.evaluate.runner import run_eval
    from aoi.evaluate.select import select

    pairs = select("all")[0]
    pairs = pairs[::max(1, len(pairs) // max(problems, 1))][:problems]
    run_eval(pairs, 1, 1, load_config(overrides={"model": "expert"}), out, console=Console(quiet=True))
    return out


def inline_store(path: Path, trajs: list[Trajectory]) -> None:
    """Write the trajectories as schema 1 kept them: each record whole, messages inline."""
    with sqlite3.connect(path) as conn:
        _create_v1(conn)
        for traj in trajs:
            conn.execute("INSERT INTO episodes (id, problem_id, task_type, success, data) VALUES (?, ?, ?, 0, ?)",
                         (traj.id, traj.problem_id, traj.task_type, orjson.dumps(traj.to_dict()).decode()))


def file_size(path: Path) -> int:
    """Return the file's bytes once its WAL is folded in and free pages are dropped."""
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("VACUUM")
    conn.close()
    return path.stat().st_size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", type=int, default=10)
    parser.add_argument("--from", dest="run", type=Path, help="an `aoi eval --out` directory to read instead")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        run = args.run or expert_run(args.problems, Path(tmp) / "run")
        trajs = TrajectoryStore(run / "trajectories.db").query()
        inline_store(Path(tmp) / "inline.db", trajs)
        deduped = TrajectoryStore(Path(tmp) / "dedup.db")
        for traj in trajs:
            deduped.save(traj)
        with sqlite3.connect(deduped.path) as conn:
            kept = stats(conn)
        referenced = sum(len(orjson.dumps(m)) for t in trajs for s in t.steps for m in s.messages or [])
        calls = sum(1 for t in trajs for s in t.steps if s.messages)
        before, after = file_size(Path(tmp) / "inline.db"), file_size(deduped.path)
    n = len(trajs)
    print(f"{n} episodes, {calls} model calls with messages, {referenced / 1e6:.2f} MB of messages referenced")
    print(f"store per episode: inline {before / n / 1024:.1f} KiB, deduplicated+compressed {after / n / 1024:.1f} "
          f"KiB ({before / after:.1f}x smaller)")
    dedup, packed = referenced / kept["stored_bytes"], kept["stored_bytes"] / kept["compressed_bytes"]
    print(f"messages: {kept['stored']} distinct; dedup ratio {dedup:.1f}x, zlib {packed:.1f}x, together "
          f"{dedup * packed:.1f}x")


if __name__ == "__main__":
    main()
