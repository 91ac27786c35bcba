"""`aoi serve-env`: the environment server's command (mounted by aoi.cli)."""

from __future__ import annotations

from pathlib import Path

import typer

from aoi.env.sessions import IDLE_TIMEOUT


def serve_env(
    port: int = typer.Option(8765, "--port", min=0, max=65535, help="Port on 127.0.0.1 (0 picks a free one). The "
                             "server never listens on other interfaces."),
    token_file: Path | None = typer.Option(None, "--token-file", help="Read the bearer token from this file, or "
                                              "generate one into it (mode 0600) when it does not exist. Default: a "
                                              "private temporary file, removed at exit."),
    max_sessions: int = typer.Option(16, "--max-sessions", min=1, help="Most sessions open at once (each holds "
                                                                       "its own twin); more get 429."),
    idle_timeout: float = typer.Option(IDLE_TIMEOUT, "--idle-timeout", min=1.0, help="Seconds after which an "
                                       "unused session is closed."),
    workdir: Path | None = typer.Option(None, "--workdir", help="Keep each session's files (kubeconfigs, "
                                           "telemetry exports) under WORKDIR/<session id>. Default: temporary "
                                           "folders removed with the session."),
    log_level: str = typer.Option("warning", "--log-level", help="uvicorn's log level; 'info' adds the access log."),
) -> None:
    """Serve AIOpsLab problems on the twin over HTTP to remote agents and rollouts (help line: aoi.cli.LAZY)."""
    from aoi.clierrors import os_message
    from aoi.env.server import serve

    try:  # sessions write under --workdir long after start: an unusable one is refused now, not per session
        workdir and workdir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise typer.BadParameter(os_message(exc, "pick another --workdir"), param_hint="--workdir") from exc
    try:
        serve(port, token_file=token_file, max_sessions=max_sessions, idle_timeout=idle_timeout, workdir=workdir,
              log_level=log_level)
    except OSError as exc:
        if exc.filename:  # the token file or its folder
            raise typer.BadParameter(f"cannot use {exc.filename} ({exc.strerror}); pick another --token-file",
                                     param_hint="--token-file") from exc
        raise typer.BadParameter(f"cannot listen on 127.0.0.1:{port} ({exc.strerror or exc}); pick another --port",
                                 param_hint="--port") from exc
    except ValueError as exc:  # an unreadable token file: the message names the fix
        raise typer.BadParameter(str(exc), param_hint="--token-file") from exc
