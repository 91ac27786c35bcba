"""`aoi view`'s HTTP server: the viewer's page and a read-only JSON API over the run folders, on 127.0.0.1 only.

Requests name runs by key and files by name; a key not among the runs found is 404, a file that is not a run file
or leads outside its run folder (a link) is 403. Only GET and HEAD are answered. The folders are searched again on
every listing, so runs started after the viewer appear too.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from aoi.store.sqlite import StoreError
from aoi.view import content
from aoi.view.compare import compare
from aoi.view.runs import Refused, Run, find_runs, inside

HOST = "127.0.0.1"  # never another address: the runs hold prompts, configs and cluster output
ASSETS = {"app.js": "text/javascript", "episode.js": "text/javascript", "app.css": "text/css",
          "index.html": "text/html"}


def asset(name: str) -> bytes:
    """Return one of the viewer's files shipped in the package (aoi/view/assets)."""
    return resources.files("aoi.view").joinpath("assets", name).read_bytes()


class NotFound(LookupError):
    """The request names nothing the viewer has (HTTP 404)."""


class Viewer:
    """The folders given and what each API route answers."""

    def __init__(self, roots: list[Path]):
        self.roots = [Path(root).resolve() for root in roots]

    def run(self, query: dict) -> Run:
        """Return the run the query's `key` names; NotFound when none."""
        key = query.get("key", "")
        found = find_runs(self.roots).get(key)
        if found is None:
            raise NotFound(f"no run {key!r} in the folders given ({', '.join(map(str, self.roots))})")
        return found

    def answer(self, route: str, query: dict):
        """Return the JSON-ready answer of an API route."""
        if route == "runs":
            return {"roots": [str(r) for r in self.roots],
                    "runs": [content.run_info(r) for r in find_runs(self.roots).values()]}
        if route == "compare":
            a, b = self.run({"key": query.get("a", "")}), self.run({"key": query.get("b", "")})
            return {"a": a.key, "b": b.key, **compare(content.rows_of(a), content.rows_of(b))}
        run = self.run(query)
        if route == "episode":
            found = content.episode(run, query.get("id", ""))
            if found is None:
                raise NotFound(f"no trajectory {query.get('id', '')!r} in run {run.key}")
            return found
        routes = {"run": content.run_data, "stamp": lambda r: {"stamp": content.live_stamp(r)},
                  "training": content.training}
        if route not in routes:
            raise NotFound(f"no API route {route!r}")
        return routes[route](run)


class Handler(BaseHTTPRequestHandler):
    """GET / (the page), /assets/NAME, /api/ROUTE?..., /file?key=K&name=N (a run file as it is)."""

    viewer: Viewer  # set on the subclass serve() makes
    server_version = "aoi-view"

    def do_GET(self) -> None:
        """Answer one GET."""
        url = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        try:
            self._route(url.path, query)
        except NotFound as exc:
            self._send(HTTPStatus.NOT_FOUND, str(exc).encode(), "text/plain")
        except Refused as exc:
            self._send(HTTPStatus.FORBIDDEN, str(exc).encode(), "text/plain")
        except (StoreError, sqlite3.Error, OSError) as exc:  # a damaged store, an unreadable file: say which
            self._send(HTTPStatus.INTERNAL_SERVER_ERROR, f"cannot read {query.get('key', '')}: {exc}".encode(),
                       "text/plain")

    def do_HEAD(self) -> None:
        """Answer a HEAD as its GET."""
        self.do_GET()

    def _route(self, path: str, query: dict) -> None:
        if path in ("/", "/index.html"):
            return self._send(HTTPStatus.OK, asset("index.html"), ASSETS["index.html"])
        if path.startswith("/assets/") and path[len("/assets/"):] in ASSETS:
            name = path[len("/assets/"):]
            return self._send(HTTPStatus.OK, asset(name), ASSETS[name])
        if path.startswith("/api/"):
            body = json.dumps(self.viewer.answer(path[len("/api/"):], query), default=str).encode()
            return self._send(HTTPStatus.OK, body, "application/json")
        if path == "/file":
            return self._send(HTTPStatus.OK, inside(self.viewer.run(query), query.get("name", "")).read_bytes(),
                              "text/plain; charset=utf-8")
        raise NotFound(f"nothing at {path}; the viewer starts at /")

    def _send(self, status: HTTPStatus, body: bytes, kind: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")  # a run in progress changes under the same URL
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def log_message(self, format: str, *args) -> None:
        """Log nothing: the terminal shows the URL, not every request."""


class ViewServer(ThreadingHTTPServer):
    """The viewer's server; `url` is where it listens."""

    daemon_threads = True

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.server_address[1]}/"

    def start(self) -> ViewServer:
        """Serve in a background thread (tests, scripts); `shutdown()` stops it."""
        threading.Thread(target=self.serve_forever, name="aoi-view", daemon=True).start()
        return self


def serve(roots: list[Path], port: int = 0) -> ViewServer:
    """Return a server for the runs under `roots`, bound to 127.0.0.1:`port` (0 picks a free one); not yet serving.

    Example:
        >>> server = serve([Path(".")]); server.server_address[0]
        '127.0.0.1'
        >>> server.server_close()
    """
    handler = type("BoundHandler", (Handler,), {"viewer": Viewer(roots)})
    return ViewServer((HOST, port), handler)
