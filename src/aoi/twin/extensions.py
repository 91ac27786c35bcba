"""The add-ons a twin carries beside its store, each under a typed name: the behaviour model, app state, programs.

A bare twin (controllers only) has none of them; `aoi.twin.behaviour.install` attaches the behaviour model and the
MongoDB state, the chaos controller its network faults, `register_program` the state-aware programs, and the
programs their per-pod data on first use. `Twin.clone` copies them with the rest of the twin.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # types only: the twin does not depend on what plugs into it
    from aoi.twin.behaviour.model import Behaviour
    from aoi.twin.behaviour.mongo import MongoState
    from aoi.twin.behaviour.programs.redis_data import RedisServer
    from aoi.twin.controllers.chaos import NetworkFaults


@dataclass
class Extensions:
    """What is attached to one twin.

    Example:
        >>> ext = Extensions()
        >>> ext.behaviour is None, ext.programs, ext.redis
        (True, {}, {})
    """

    behaviour: Behaviour | None = None  # the behaviour model (health, traffic, logs, traces, metrics)
    mongo: MongoState | None = None  # MongoDB users, roles and data per volume
    chaos: NetworkFaults | None = None  # active NetworkChaos, created by the chaos controller on first use
    programs: dict[str, Callable[..., Any]] = field(default_factory=dict)  # name -> program(twin, argv, ctx)
    redis: dict[tuple[str, str], RedisServer] = field(default_factory=dict)  # (pod uid, container) -> server
    mongo_docs: dict = field(default_factory=dict)  # documents inserted through mongo shells, by database
