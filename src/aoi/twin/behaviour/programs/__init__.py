"""Container programs that need application state: mongo, redis-cli, nc, curl, wget, DNS tools, netstat."""

from __future__ import annotations

from aoi.twin.behaviour.programs import curl, dns, mongo_cli, netcat, netstat, redis_cli, wget


def programs() -> dict:
    """Return every program of this package by name."""
    return {"mongo": mongo_cli.mongo, "mongosh": mongo_cli.mongosh, **redis_cli.PROGRAMS, **netcat.PROGRAMS,
            **curl.PROGRAMS, **wget.PROGRAMS, **dns.PROGRAMS, **netstat.PROGRAMS}


def register_all(twin) -> None:
    """Make the programs runnable in every container of the twin (`execution.register_program`)."""
    from aoi.twin.kubelet.execution import register_program

    for name, program in programs().items():
        register_program(twin, name, program)
