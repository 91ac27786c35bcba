"""Print expert episodes per hour over every twin problem (k=1) with 1 and with 2 process workers, the way
`aoi eval --problems all -k 1 --model expert --workers N` runs them, plus the CPU seconds per episode (all processes:
the eval, its fork server and workers, and the kubectl runs) and the load average around each run.

Each run is a fresh process (so its pool, fork server and base twins start from nothing); this script adopts every
process the run leaves behind (Linux PR_SET_CHILD_SUBREAPER) and reaps them all, so their CPU counts. Episodes/h is
measured around run_eval; the child's own start-up before run_eval (interpreter, imports) is left out of the CPU.
Run: python benchmarks/episodes.py [--workers 1,2] [--repeat N] [--problems N]
Before/after: PYTHONPATH=<other tree>/src python benchmarks/episodes.py

Measured 2026-12-02, second session (2 cores of a VM whose speed drifts: the same code's CPU per episode moved by
~20% within an hour), `--workers 2 --repeat 1` alternating before (9a373ab) and after, seven pairs: before 8047,
8326, 7243, 7379, 6873, 7033, 7463 episodes/h at 0.80-0.93 CPU s/episode; after 8644, 10402, 8129, 7453, 8243, 7670,
8406 at 0.60-0.78 (medians 7379 -> 8243/h, 0.87 -> 0.75 CPU s; three more after-runs in a fast spell: 9716, 9456,
8583). 10,000/h needs <= 0.72 CPU s/episode with the fork server's ~3 s serial start. One worker: 4109 -> 4080 and
4451 -> 4651/h. Per episode after, in one forked worker running all 87 ids: the kubectl processes 0.53-0.59 s
(8.8 per episode at ~60 ms, almost all Go start-up), the worker's Python ~0.16 s (API server ~30 ms, traffic ~25 ms,
agents and expert ~20 ms, the Python kube client ~15 ms), the fork server's start ~0.04 s, the eval process ~8 ms.

Third session (same day), 16 alternating pairs before (5d948d8) and after (the fork server parses the apps with
libyaml and collects only new objects after each twin; a freed worker gets its next job before the last is
recorded): the first episode starts after 3.0-4.0 s before, 2.5-3.3 s after (in three other pairs timed around
run_eval: 3.3-4.3 -> 2.1-2.7 s); episodes/h before 7825-10495 (median 8555), after 7270-9968 (median 8466), CPU
s/episode medians 0.725 and 0.735: the ~1 s saved at the start is below what this VM's drift lets 16 pairs resolve.
With 3 workers on the 2 cores, in one fast spell: 10601 and 10537/h against 10009/h with 2, so ~5% of the 2 cores
idle in mid-run.

Fourth session (2026-12-02, 07:13-10:13 UTC). Workers pinned one per core (8 alternating pairs against d3bc695, both
compiled: median 8312 -> 8979/h, CPU s/episode 0.745 -> 0.705, pinned faster in 7 of 8); kubectl's cache in /dev/shm
(7 pairs against the pinned commit: faster in 5, ~3% in the 3 pairs timed with /proc/stat, iowait 0.2-0.7% in both);
`make setup` byte-compiles src. Six alternating pairs of the whole, d3bc695 uncompiled (as its setup left it on a
machine with PYTHONDONTWRITEBYTECODE) against the final commit, in a fast spell (0.53-0.70 CPU s/episode): before
9115-11031/h (median 10694; 9683-11929 in an hour-long run), after 10754-12441/h (median 11474; 11576-13367), faster
in 5 of 6, the first episode after 2.0-2.4 s before and 1.7-2.1 s after. In a slow spell earlier the same day the
pinned tree ran 7907-8815/h (0.69-0.76 CPU s/episode): whether a run meets 10,000/h still depends on the VM's speed.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

PR_SET_CHILD_SUBREAPER = 36  # linux/prctl.h


def run_child(workers: int, problems: int) -> None:
    """In the child: run the expert over the problems once and print what happened as one JSON line."""
    from rich.console import Console

    from aoi.config import load_config
    from aoi.evaluate.runner import run_eval
    from aoi.evaluate.select import select
    from aoi.store.sqlite import TrajectoryStore

    pairs, _ = select("all")
    if problems:
        pairs = pairs[::max(1, len(pairs) // problems)][:problems]
    config = load_config(overrides={"model": "expert"}, environ={})
    out = tempfile.mkdtemp(prefix=f"aoi-episodes-w{workers}-")
    usage = resource.getrusage(resource.RUSAGE_SELF)
    started, clock = time.monotonic(), time.time()  # episodes record their start by the wall clock
    summary = run_eval(pairs, 1, workers, config, out, executor="process", console=Console(quiet=True))
    wall, end = time.monotonic() - started, resource.getrusage(resource.RUSAGE_SELF)
    first = min(row["started_at"] for row in TrajectoryStore(os.path.join(out, "trajectories.db")).summaries())
    print(json.dumps({"episodes": summary.overall["episodes"], "strict": summary.overall["strict_avg_at_k"],
                      "wall": wall, "first": first - clock, "start_cpu": usage.ru_utime + usage.ru_stime,
                      "eval_cpu": end.ru_utime + end.ru_stime - usage.ru_utime - usage.ru_stime}))


def children_cpu() -> float:
    """Return the CPU seconds of every process this one has reaped."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def reap_all() -> None:
    """Wait for every adopted descendant (a fork server outlives its parent by a moment) so its CPU counts."""
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


def hour_long(episodes: int, wall: float, first: float) -> float:
    """Return how many episodes a run lasting an hour would do: one start (`first` seconds until the first episode),
    then this run's pace after its start. That pace includes this run's end, where a worker idles while the other
    finishes the last episode, so an hour-long run is counted as if it ended that way every `episodes` episodes.

    Example:
        >>> round(hour_long(87, 33.0, 2.0))
        10098
    """
    return (3600 - first) * episodes / (wall - first)


def episodes_per_hour(workers: int, problems: int) -> tuple[int, float, float, float, float, float, float]:
    """Run the expert once in a fresh process; return (episodes, episodes/hour, strict success, wall seconds, seconds
    until the first episode started (the fork server's start, serial), CPU seconds per episode of all processes
    together, and of the eval process alone)."""
    before = children_cpu()
    done = subprocess.run([sys.executable, __file__, "--child", "--workers", str(workers), "--problems",
                           str(problems)], capture_output=True, text=True)
    if done.returncode:
        sys.exit(f"the eval failed ({done.returncode}): {done.stderr[-2000:]}")
    reap_all()
    got = json.loads(done.stdout.splitlines()[-1])
    cpu = children_cpu() - before - got["start_cpu"]
    episodes = got["episodes"]
    return (episodes, episodes * 3600 / got["wall"], got["strict"], got["wall"], got["first"], cpu / episodes,
            got["eval_cpu"] / episodes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--workers", default="1,2", help="comma-separated worker counts")
    parser.add_argument("--repeat", type=int, default=3, help="runs per worker count (the median is printed)")
    parser.add_argument("--problems", type=int, default=0, help="use every Nth problem's share (0: all)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return run_child(int(args.workers), args.problems)
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        sys.exit("could not become a child subreaper (Linux only): the fork server's CPU would go uncounted")
    for workers in (int(w) for w in args.workers.split(",")):
        rates, hours, cpus, loads = [], [], [], []
        for _ in range(args.repeat):
            before = os.getloadavg()[0]
            episodes, rate, strict, wall, first, cpu, parent = episodes_per_hour(workers, args.problems)
            rates.append(rate)
            hours.append(hour_long(episodes, wall, first))
            cpus.append(cpu)
            loads.append(f"{before:.1f}->{os.getloadavg()[0]:.1f}")
            print(f"  workers={workers} {episodes} episodes in {wall:.1f} s (the first after {first:.1f} s): "
                  f"{rate:.0f} episodes/h ({hours[-1]:.0f} in an hour-long run), "
                  f"{cpu:.2f} CPU s/episode ({parent * 1000:.0f} ms in the eval process), strict {strict:.0%} "
                  f"[load {loads[-1]}]", flush=True)
        # CPU per episode hardly depends on others' load; it bounds what N idle cores could do
        bound = min(workers, os.cpu_count() or 1) * 3600 / statistics.median(cpus)
        print(f"workers={workers}: median {statistics.median(rates):.0f} episodes/h over {len(rates)} runs, "
              f"{statistics.median(hours):.0f} in an hour-long run (target >= 10,000/h with 2 workers); "
              f"{statistics.median(cpus):.2f} CPU s/episode, so at most "
              f"{bound:.0f} episodes/h on {min(workers, os.cpu_count() or 1)} idle core(s)")


if __name__ == "__main__":
    main()
