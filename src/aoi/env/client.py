"""A Python client for `aoi serve-env`: RemoteEnv is an Env over HTTP (aoi.protocols.Env: reset, step, close)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from aoi.env.core import reset_options
from aoi.env.tokens import read_token
from aoi.problems.registry import make as make_problem


class EnvServerError(RuntimeError):
    """The server refused a request; `status` is the HTTP code and `message` the server's explanation."""

    def __init__(self, status: int, message: str, method: str, path: str):
        super().__init__(f"{method} {path} failed with HTTP {status}: {message}")
        self.status, self.message = status, message


class EnvClient:
    """A connection to one environment server.

    Example:
        >>> with EnvClient("http://127.0.0.1:8765", token) as client:  # doctest: +SKIP
        ...     with client.make("k8s_target_port-misconfig-detection-1", seed=3) as env:
        ...         task, info = env.reset()
        ...         obs, reward, terminated, truncated, info = env.submit("Yes")
    """

    def __init__(self, base_url: str, token: str, timeout: float = 120.0):
        self._http = httpx.Client(base_url=base_url.rstrip("/"), timeout=timeout,
                                  headers={"Authorization": f"Bearer {token}"})

    @classmethod
    def from_token_file(cls, base_url: str, token_file: str | Path, timeout: float = 120.0) -> EnvClient:
        """Connect with the token a server wrote to its token file."""
        return cls(base_url, read_token(Path(token_file)), timeout)

    def health(self) -> dict:
        """Return the server's status, version and session count."""
        return self.request("GET", "/health")

    def problems(self, task_type: str | None = None, app: str | None = None) -> list[dict]:
        """List the problems, filtered by exact task type and app."""
        params = {k: v for k, v in (("task_type", task_type), ("app", app)) if v is not None}
        return self.request("GET", "/problems", params=params)

    def make(self, problem_id: str, *, seed: int = 0, target: str | None = None, max_steps: int = 30) -> RemoteEnv:
        """Return the env of one problem served here (as aoi.env.make); its reset() opens a session on the server."""
        return RemoteEnv(self, problem_id, seed=seed, target=target, max_steps=max_steps)

    def sessions(self) -> list[dict]:
        """Return the status of every open session."""
        return self.request("GET", "/sessions")

    def request(self, method: str, path: str, **kwargs) -> Any:
        """Send one request; return the decoded JSON (None for 204) or raise EnvServerError."""
        try:
            response = self._http.request(method, path, **kwargs)
        except httpx.TransportError as exc:
            raise EnvServerError(0, f"cannot reach {self._http.base_url} ({exc}); is `aoi serve-env` running there?",
                                 method, path) from exc
        if response.is_error:
            raise EnvServerError(response.status_code, _message(response), method, path)
        return None if response.status_code == 204 else response.json()

    def close(self) -> None:
        """Close the HTTP connection pool (sessions stay open on the server)."""
        self._http.close()

    def __enter__(self) -> EnvClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class RemoteEnv:
    """An Env served by `aoi serve-env`: reset() opens a fresh session (a fresh twin), step() plays in it.

    The problem is resolved by this side's registry (ValueError for an unknown id or target, as make() raises);
    the server checks it again and its reset info carries the server's env_version.
    """

    def __init__(self, client: EnvClient, problem_id: str, *, seed: int = 0, target: str | None = None,
                 max_steps: int = 30):
        self._client = client
        self.problem = make_problem(problem_id, target)
        self.seed, self.target, self.max_steps = seed, target, max_steps
        self.session_id: str | None = None
        self.description = ""
        self.steps, self.done, self.results = 0, False, None

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[str, dict]:
        """Close the last session, open a fresh one; return its task text and info (as Env.reset)."""
        options = reset_options(options)
        self.close()
        self.seed = self.seed if seed is None else seed
        self.target = options.get("target", self.target)
        body = {"problem_id": self.problem.id, "seed": self.seed, "target": self.target, "max_steps": self.max_steps}
        created = self._client.request("POST", "/sessions", json=body)
        self.problem = make_problem(self.problem.id, self.target)
        self.session_id, self.description = created["session_id"], created["info"]["description"]
        self.steps, self.done, self.results = 0, False, None
        return created["task"], created["info"]

    def step(self, action: str, role: str | None = None) -> tuple[str, float, bool, bool, dict]:
        """Play one action; return (observation, reward, terminated, truncated, info)."""
        return self._played(self._client.request("POST", f"{self._path}/step", json={"action": action, "role": role}))

    def submit(self, answer: Any = None, role: str | None = None) -> tuple[str, float, bool, bool, dict]:
        """Submit an answer ('Yes', ['geo'], {...}, or None for mitigation) as one step."""
        return self._played(self._client.request("POST", f"{self._path}/submit", json={"answer": answer, "role": role}))

    def status(self) -> dict:
        """Return the session's status: steps, done, results, trace length, creation time."""
        return self._client.request("GET", self._path)

    def trace(self) -> list[dict]:
        """Return the recorded trace (each action and its observation)."""
        return self._client.request("GET", f"{self._path}/trace")

    def close(self) -> None:
        """Close the session on the server; closing one that is gone (or none) does nothing."""
        if self.session_id is None:
            return
        try:
            self._client.request("DELETE", self._path)
        except EnvServerError as exc:
            if exc.status != 404:
                raise

    @property
    def _path(self) -> str:
        """Return the session's route; refuse before reset() opened one."""
        if self.session_id is None:
            raise RuntimeError("no session yet: call reset() first to open one on the server")
        return f"/sessions/{self.session_id}"

    def _played(self, r: dict) -> tuple[str, float, bool, bool, dict]:
        """Mirror the step's bookkeeping locally and return the 5-tuple."""
        info = r["info"]
        self.steps = info.get("steps", self.steps + 1)
        if r["terminated"] or r["truncated"]:
            self.done, self.results = True, info.get("results")
        return r["observation"], r["reward"], r["terminated"], r["truncated"], info

    def __enter__(self) -> RemoteEnv:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _message(response: httpx.Response) -> str:
    """Return the server's error message, or the raw body when it is not the server's JSON."""
    try:
        return str(response.json()["error"])
    except (ValueError, KeyError, TypeError):
        return response.text[:500] or response.reason_phrase
