"""An Echo run's options and the parts its drivers share (aoi.echo.engine prepares them, the drivers use them)."""

from __future__ import annotations

from dataclasses import dataclass

from aoi.echo.metrics import Clock, MetricsLog, step_line
from aoi.echo.sampler import SamplerSpec
from aoi.echo.trainer import TrainSpec
from aoi.train.grpo import GrpoOptions

MODES = ("colocated", "sequential", "async")


@dataclass(kw_only=True)
class EchoOptions:
    """An Echo run: Learning I's GRPO options plus the mode, the samplers, the staleness bound and the cluster."""

    grpo: GrpoOptions
    mode: str = "colocated"
    samplers: int = 1
    staleness: int = 1  # S: async takes groups drawn at most S versions before the trainer's
    ray_address: str | None = None  # None: a local Ray instance; "auto" or host:port: an existing cluster
    buffer_capacity: int | None = None  # groups the buffer holds (None: 2 steps' worth)
    name: str | None = None  # names the Ray actors "<name>-sampler-<i>", "<name>-trainer"... (None: unnamed)
    sampler_url: str | None = None  # samplers draw on this OpenAI-compatible server (vLLM), in every mode
    sampler_model: str | None = None  # the base's model name on that server (None: the first it lists)
    sampler_adapter_dir: str | None = None  # where samplers write adapters for the server (None: a temp folder)


@dataclass(kw_only=True)
class Run:
    """What the drivers share: options, dataset rows, sampler and trainer settings, the clock and the log."""

    options: EchoOptions
    rows: list[dict]
    sampler: SamplerSpec
    train: TrainSpec
    policy: dict  # base, init, lora, device, seed, threads: how both ends load the policy
    groups_per_step: int
    log: MetricsLog
    clock: Clock

    def rows_of(self, step: int) -> list[int]:
        """Return the dataset rows of a step's groups (sequential and colocated walk the dataset in order)."""
        return [(step * self.groups_per_step + i) % len(self.rows) for i in range(self.groups_per_step)]

    def record(self, groups: list, update: dict, sampler_busy: float, dropped: int = 0, depth: int = 0) -> dict:
        """Write the step's metrics line and return it."""
        line = step_line(mode=self.options.mode, groups=groups, update=update, clock=self.clock,
                         weights=self.sampler.weights, sampler_busy=sampler_busy, dropped=dropped, queue_depth=depth)
        self.log.write(line)
        return line
