"""The Ray modes: sampler actors, one trainer actor, the replay buffer and the weight store as actors.

`sequential` (pull): each step the driver asks the samplers for the step's groups at the trainer's version; each
refreshes its adapter first, so staleness is 0. `async` (push-pull): samplers draw and push continuously; each step
the driver takes groups no older than S versions from the buffer (older ones are dropped and counted) and hands them
to the trainer. A sampler that dies is restarted by Ray and started again; the group it was drawing was never pushed,
so it is simply lost, never half-counted. A trainer that dies restarts from its newest checkpoint and version.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from aoi.echo.buffer import ReplayBuffer
from aoi.echo.run import Run
from aoi.echo.sampler import Sampler
from aoi.echo.trainer import Trainer
from aoi.echo.weights import WeightStore

POLL_S = 0.05  # how often an idle trainer looks into the buffer
RESTART_S = 300.0  # how long to wait for an actor Ray is restarting


def connect(address: str | None) -> Any:
    """Connect to the Ray cluster at `address` (None: start a local one); return the ray module."""
    import ray

    from aoi.evaluate.ray_pool import connect_ray

    connect_ray(ray, address)
    return ray


class Swarm:
    """The actors of one run and the driver's view of them (restarts, sampler busy time)."""

    def __init__(self, run: Run, ray: Any):
        grpo = run.options.grpo
        self.ray, self.run = ray, run
        self.store = self._actor(WeightStore, "store").remote(str(Path(grpo.out) / "weights"),
                                                              keep=run.options.staleness + 2)
        self.buffer = self._actor(ReplayBuffer, "buffer").remote(run.options.buffer_capacity
                                                                 or 2 * run.groups_per_step)
        # Constructor arguments are put by the driver and held by it, so a restarted actor is built from them again.
        self.args = [ray.put(run.train), ray.put(run.policy), ray.put(run.rows)]
        self.trainer = self._actor(Trainer, "trainer", max_restarts=3).remote(
            self.args[0], self.args[1], str(grpo.out), store=self.store, resume=grpo.resume)
        self.samplers = [self._actor(Sampler, f"sampler-{i}", max_restarts=-1, scheduling_strategy="SPREAD")
                         .remote(i, run.sampler, self.args[2], store=self.store, buffer=self.buffer)
                         for i in range(run.options.samplers)]
        self.state = ray.get(self.trainer.state.remote())
        ray.get([s.ready.remote() for s in self.samplers])

    def _actor(self, cls: type, role: str, **options: Any) -> Any:
        """Return the Ray actor class for a part (no CPU reserved: the parts take turns on the cores they share)."""
        name = {"name": f"{self.run.options.name}-{role}"} if self.run.options.name else {}
        return self.ray.remote(cls).options(num_cpus=0, **name, **options)

    def update(self, groups: list) -> dict:
        """Train on the groups; if the trainer died before its step landed, train the restarted one on them."""
        try:
            return self.ray.get(self.trainer.update.remote(groups))
        except self.ray.exceptions.RayActorError:
            state = self.when_up(self.trainer.state)
            if state["step"] != self.state["step"]:
                raise RuntimeError("the trainer died after saving its step but before reporting it; rerun with "
                                   "--resume to continue from that checkpoint") from None
            return self.when_up(self.trainer.update, groups)

    def when_up(self, method: Any, *args: Any) -> Any:
        """Call an actor's method, waiting while Ray restarts the actor (it reloads its model: tens of seconds)."""
        deadline = time.monotonic() + RESTART_S
        while True:
            try:
                return self.ray.get(method.remote(*args))
            except self.ray.exceptions.ActorUnavailableError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(POLL_S * 4)

    def sequential_step(self) -> tuple[list, float]:
        """Pull the step's groups from every sampler at once at the trainer's version; return them, busy seconds."""
        rows = self.run.rows_of(self.state["step"])
        shares = {i: rows[i::len(self.samplers)] for i in range(len(self.samplers)) if rows[i::len(self.samplers)]}
        calls = {i: self._ask(i, share) for i, share in shares.items()}
        groups = [g for i in shares for g in self._answer(i, shares[i], calls[i])]
        return groups, sum(g.busy_s for g in groups)

    def _ask(self, index: int, rows: list[int]) -> Any:
        """Ask one sampler for groups of these rows at the trainer's version (it refreshes first)."""
        return self.samplers[index].generate.remote(self.state["version"], rows)

    def _answer(self, index: int, rows: list[int], ref: Any) -> list:
        """Return a sampler's groups; one that died mid-group is restarted by Ray and asked again."""
        while True:
            try:
                return self.ray.get(ref)
            except self.ray.exceptions.RayActorError:
                time.sleep(POLL_S * 4)  # Ray is restarting it: ask again (the half-drawn groups are gone)
                ref = self._ask(index, rows)

    def async_steps(self) -> None:
        """Let the samplers push; train on fresh groups from the buffer until --max-steps."""
        runs = {i: sampler.run.remote() for i, sampler in enumerate(self.samplers)}
        while self.state["step"] < self.run.options.grpo.max_steps:
            groups, dropped = self._collect(runs)
            update = self.update(groups)
            self.state = {"step": update["step"], "version": update["policy_version"]}
            stats = self.ray.get(self.buffer.stats.remote())
            self.run.record(groups, update, stats["busy_s"], dropped, stats["depth"])

    def _collect(self, runs: dict) -> tuple[list, int]:
        """Wait for the step's groups drawn at most S versions ago; return them and how many stale ones went."""
        need, floor = self.run.groups_per_step, self.state["version"] - self.run.options.staleness
        groups, dropped = [], 0
        while len(groups) < need:
            taken, stale = self.ray.get(self.buffer.take.remote(need - len(groups), floor))
            groups, dropped = groups + taken, dropped + stale
            if len(groups) < need:
                self._revive(runs)
                time.sleep(POLL_S)
        return groups, dropped

    def _revive(self, runs: dict) -> None:
        """Start the push loop again on a sampler Ray restarted (its unfinished group was never pushed)."""
        done, _ = self.ray.wait(list(runs.values()), num_returns=len(runs), timeout=0)
        for index, ref in list(runs.items()):
            if ref in done:
                try:
                    self.ray.get(ref)
                except self.ray.exceptions.RayActorError:
                    pass  # Ray restarts it; the group it was drawing was never pushed
                runs[index] = self.samplers[index].run.remote()

    def sequential_steps(self) -> None:
        """Pull, then train, until --max-steps."""
        busy = 0.0
        while self.state["step"] < self.run.options.grpo.max_steps:
            groups, spent = self.sequential_step()
            busy += spent
            update = self.update(groups)
            self.state = {"step": update["step"], "version": update["policy_version"]}
            self.run.record(groups, update, busy)

    def close(self) -> tuple[dict, dict[str, bytes]]:
        """Stop the samplers, take the trainer's final adapter, end every actor; return summary and files."""
        self.ray.get(self.buffer.close.remote())
        files = self.ray.get(self.trainer.files.remote())
        trainer = self.ray.get(self.trainer.state.remote())
        stats = self.ray.get(self.buffer.stats.remote())
        for actor in [*self.samplers, self.trainer, self.buffer, self.store]:
            self.ray.kill(actor, no_restart=True)
        summary = {"steps": self.state["step"], "version": self.state["version"],
                   "sampler_restarts": sum(stats["incarnations"].values()),
                   "trainer_resumed_from": trainer["resumed_from"],
                   "buffer": {key: stats[key] for key in ("accepted", "consumed", "dropped_stale", "depth",
                                                          "incarnations")}}
        return summary, files


def swarm(run: Run) -> tuple[dict, dict[str, bytes]]:
    """Run the sequential or async mode on Ray (local, or the cluster at --ray-address); return summary, files."""
    ray = connect(run.options.ray_address)
    parts = Swarm(run, ray)
    run.clock.started = time.perf_counter()  # the clock starts when every actor has loaded its model
    try:
        (parts.async_steps if run.options.mode == "async" else parts.sequential_steps)()
    except BaseException:
        for actor in [*parts.samplers, parts.trainer, parts.buffer, parts.store]:
            ray.kill(actor, no_restart=True)
        raise
    return parts.close()
