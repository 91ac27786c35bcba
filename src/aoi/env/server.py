"""The environment over HTTP: sessions of AIOpsLab problems on the twin, for remote agents and rollout workers.

Served on 127.0.0.1 only; every route but /health needs `Authorization: Bearer <token>`, the OpenAPI schema
(/openapi.json) included. There are no /docs or /redoc pages: a browser cannot send the bearer token with a page
load, and Swagger UI's scripts would come from the internet. No CORS: browsers on other origins get nothing.
Blocking work (building a twin, stepping it) runs in worker threads, so one slow session never stalls the others.
"""

from __future__ import annotations

import secrets
import socket
import time
from contextlib import asynccontextmanager
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as package_version
from pathlib import Path

import uvicorn
from fastapi import APIRouter, Depends, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.exceptions import HTTPException

from aoi import runtime_dirs
from aoi.env import schemas as s
from aoi.env import tokens
from aoi.env.sessions import (
    IDLE_TIMEOUT,
    EpisodeOver,
    InvalidRequest,
    Session,
    SessionPool,
    TooManySessions,
    UnknownSession,
)
from aoi.problems.registry import list_problems

DESCRIPTION = """Play AIOpsLab problems on the Kubernetes digital twin over HTTP.

Create a session for a problem id (`POST /sessions`; each session gets its own twin), read the task text it
returns, then `POST /sessions/{id}/step` actions in AIOpsLab's format until the episode ends with a submission
(`POST /sessions/{id}/submit` renders one for you) or the step budget. `DELETE` the session when done; idle sessions
close by themselves. Every route except `/health` needs `Authorization: Bearer <token>`, this schema included."""

ERRORS = {code: {"model": s.ErrorBody} for code in (401, 404, 409, 422, 429, 500)}
_bearer = HTTPBearer(auto_error=False, description="The token `aoi serve-env` wrote to its token file.")


def create_app(token: str, max_sessions: int = 16, workdir: Path | None = None,
               idle_timeout: float = IDLE_TIMEOUT) -> FastAPI:
    """Build the environment server's app; `workdir` keeps each session's files under workdir/<session id>.

    Example:
        >>> app = create_app(token=secrets.token_urlsafe(), max_sessions=4)
        >>> app.title
        'AOI environment server'
    """
    if len(token) < 16:
        raise ValueError("the token is too short (under 16 characters); use secrets.token_urlsafe() or omit it")
    pool = SessionPool(max_sessions, idle_timeout, workdir)

    @asynccontextmanager
    async def lifespan(_: FastAPI):
        yield
        pool.close_all()

    app = FastAPI(title="AOI environment server", description=DESCRIPTION, version=_version(), lifespan=lifespan,
                  docs_url=None, redoc_url=None, openapi_url=None)  # the schema is served below, behind the token
    app.state.pool = pool
    _add_error_handlers(app)

    @app.get("/health", response_model=s.Health, tags=["server"])
    def health():
        """Report liveness, version and load; needs no token."""
        return s.Health(version=_version(), active_sessions=len(pool), max_sessions=pool.max_sessions)

    require_token = _auth(token)
    app.include_router(_router(pool, require_token))

    @app.get("/openapi.json", include_in_schema=False, dependencies=[Depends(require_token)])
    def openapi():
        """Return the OpenAPI schema (needs the token)."""
        return app.openapi()

    return app


def _auth(token: str):
    """Return the dependency that checks the bearer token (in constant time)."""
    def require_token(credentials: HTTPAuthorizationCredentials | None = Depends(_bearer)) -> None:
        if credentials is None or not secrets.compare_digest(credentials.credentials.encode(), token.encode()):
            raise HTTPException(401, "missing or wrong bearer token; send 'Authorization: Bearer <token>' with the "
                                     "token from the server's token file", headers={"WWW-Authenticate": "Bearer"})
    return require_token


def _router(pool: SessionPool, require_token) -> APIRouter:
    """Declare the authenticated routes; blocking ones are plain `def`, which FastAPI runs in worker threads."""
    router = APIRouter(dependencies=[Depends(require_token), Depends(lambda: pool.reap())], responses=ERRORS)

    @router.get("/problems", response_model=list[s.ProblemInfo], tags=["problems"])
    def problems(task_type: str | None = Query(None, description="detection, localization, analysis, mitigation"),
                 app: str | None = Query(None, description="e.g. hotel-reservation, social-network")):
        """List the problem ids, filtered by task type and app."""
        return [_problem_info(p) for p in list_problems(task_type, app)]

    @router.post("/sessions", status_code=201, response_model=s.Session, tags=["sessions"])
    def create(body: s.CreateSession):
        """Create a session: deploy the problem's app on a fresh twin, inject the fault, return the task."""
        return _session(pool.create(body.problem_id, body.seed, body.target, body.max_steps))

    @router.get("/sessions", response_model=list[s.SessionStatus], tags=["sessions"])
    def sessions():
        """List the open sessions."""
        return [_status(x) for x in pool.list()]

    @router.get("/sessions/{session_id}", response_model=s.SessionStatus, tags=["sessions"])
    def status(session_id: str):
        """Show where a session stands: steps, done, and the results once done."""
        return _status(pool.get(session_id))

    @router.post("/sessions/{session_id}/step", response_model=s.StepResult, tags=["sessions"])
    def step(session_id: str, body: s.StepRequest):
        """Play one action (AIOpsLab format) as a role."""
        return _step(pool.get(session_id), body.action, body.role)

    @router.post("/sessions/{session_id}/submit", response_model=s.StepResult, tags=["sessions"])
    def submit(session_id: str, body: s.SubmitRequest):
        """Submit an answer: renders submit(<answer>) positionally and steps it."""
        return _step(pool.get(session_id), submit_action(body.answer), body.role)

    @router.get("/sessions/{session_id}/trace", response_model=list[s.TraceEntry], tags=["sessions"])
    def trace(session_id: str):
        """Return the recorded trace: each action and its observation."""
        return list(pool.get(session_id).env.trace)

    @router.delete("/sessions/{session_id}", status_code=204, response_class=Response, tags=["sessions"])
    def delete(session_id: str):
        """Close a session and its twin."""
        pool.close(session_id)
        return Response(status_code=204)

    return router


def serve(port: int = 0, token: str | None = None, *, token_file: Path | None = None, max_sessions: int = 16,
          idle_timeout: float = IDLE_TIMEOUT, workdir: Path | None = None, log_level: str = "warning") -> None:
    """Serve the environment on 127.0.0.1 until interrupted; print one line with the URL once ready.

    Without `token`, the token is read from `token_file` or generated into it (mode 0600); without either, it goes
    to a private temporary file removed at exit. The token itself is never printed or logged.

    Example:
        >>> serve(8765, token_file=Path("~/.aoi/env.token"))  # doctest: +SKIP
        aoi serve-env ready at http://127.0.0.1:8765 (schema: /openapi.json); bearer token in /home/me/.aoi/env.token
    """
    sock = bind(port)
    scratch = None if token or token_file else runtime_dirs.private_dir("serve-env")  # 0700, gone at exit
    cleanup = (lambda: runtime_dirs.remove(scratch)) if scratch else (lambda: None)
    try:
        token, where = _token(token, token_file or (scratch / "token" if scratch else None))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        app = create_app(token, max_sessions, workdir, idle_timeout)
        config = uvicorn.Config(app, log_level=log_level, access_log=log_level in ("debug", "info"))
        ready = f"aoi serve-env ready at {url} (schema: {url}/openapi.json); {where}"
        _ReadyServer(config, ready, cleanup).run(sockets=[sock])
    finally:
        sock.close()
        cleanup()


def bind(port: int = 0) -> socket.socket:
    """Bind a listening TCP socket on 127.0.0.1 (port 0 picks a free one); raise OSError when the port is taken."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(("127.0.0.1", port))
    except OSError:
        sock.close()
        raise
    return sock


def _token(token: str | None, token_file: Path | None) -> tuple[str, str]:
    """Return the token to require and where a client finds it."""
    if token:
        return token, "bearer token as given to serve()"
    return tokens.load_or_create(token_file), f"bearer token in {Path(token_file).expanduser()}"


class _ReadyServer(uvicorn.Server):
    """A uvicorn server that prints one line once it listens and cleans up as it shuts down."""

    def __init__(self, config, ready_line: str, on_shutdown):
        super().__init__(config)
        self.ready_line, self.on_shutdown = ready_line, on_shutdown

    async def startup(self, sockets=None) -> None:
        await super().startup(sockets)
        if self.started:
            print(self.ready_line, flush=True)

    async def shutdown(self, sockets=None) -> None:
        # uvicorn re-raises SIGTERM once it has stopped, which ends the process before any `finally` runs
        await super().shutdown(sockets)
        self.on_shutdown()


def submit_action(answer) -> str:
    """Render a submission in AIOpsLab's action format, with a positional argument.

    Example:
        >>> submit_action(["geo"]), submit_action(None)
        ("```\\nsubmit(['geo'])\\n```", '```\\nsubmit()\\n```')
    """
    return "```\nsubmit(" + ("" if answer is None else repr(answer)) + ")\n```"


def _step(session: Session, action: str, role: str | None) -> s.StepResult:
    observation, reward, terminated, truncated, info = session.step(action, role)
    return s.StepResult(observation=observation, reward=reward, terminated=terminated, truncated=truncated, info=info)


def _problem_info(p) -> s.ProblemInfo:
    return s.ProblemInfo(id=p.id, task_type=p.task_type, app=p.app, namespace=p.namespace, family=p.family,
                         target=p.target, backend=p.backend, valid_targets=list(p.valid_targets))


def _session(x: Session) -> s.Session:
    env = x.env
    return s.Session(session_id=x.id, problem_id=env.problem.id, problem=_problem_info(env.problem), seed=env.seed,
                     max_steps=env.max_steps, task=x.task, info=x.info, created_at=x.created_at)


def _status(x: Session) -> s.SessionStatus:
    env = x.env
    return s.SessionStatus(session_id=x.id, problem=_problem_info(env.problem), seed=env.seed, steps=env.steps,
                           max_steps=env.max_steps, done=env.done, results=env.results if env.done else None,
                           trace_length=len(env.trace), created_at=x.created_at,
                           idle_seconds=round(time.monotonic() - x.last_used, 3))


def _add_error_handlers(app: FastAPI) -> None:
    """Answer every error as {"error": message}, mapping the pool's exceptions to status codes."""
    for exc_type, code in ((InvalidRequest, 422), (EpisodeOver, 409), (TooManySessions, 429)):
        app.add_exception_handler(exc_type, lambda _r, e, code=code: JSONResponse({"error": str(e)}, code))
    app.add_exception_handler(HTTPException, _http_error)
    app.add_exception_handler(UnknownSession, _unknown_session)
    app.add_exception_handler(RequestValidationError, _invalid_body)
    app.add_exception_handler(Exception, _internal_error)


async def _http_error(_: Request, exc: HTTPException) -> JSONResponse:
    return JSONResponse({"error": str(exc.detail)}, exc.status_code, exc.headers)


async def _unknown_session(_: Request, exc: UnknownSession) -> JSONResponse:
    return JSONResponse({"error": f"no open session {exc.args[0]!r}: it was never created, was deleted, or closed "
                                  f"after idling; create one with POST /sessions"}, 404)


async def _internal_error(_: Request, exc: Exception) -> JSONResponse:
    return JSONResponse({"error": f"the environment failed ({type(exc).__name__}: {exc}); the server log has the "
                                  f"traceback, please report it with the problem id and actions"}, 500)


async def _invalid_body(_: Request, exc: RequestValidationError) -> JSONResponse:
    """Summarize pydantic's errors in one sentence and keep them as details."""
    from fastapi.encoders import jsonable_encoder

    where = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())
    return JSONResponse({"error": f"invalid request ({where}); GET /openapi.json has the schema",
                         "details": jsonable_encoder(exc.errors())}, 422)


def _version() -> str:
    try:
        return package_version("aoi")
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "0+unknown"
