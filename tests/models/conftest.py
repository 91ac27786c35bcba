"""A fake OpenAI-compatible server on 127.0.0.1: scripted answers to /v1/chat/completions, requests recorded."""

from __future__ import annotations

import json
import socket
import struct
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest


def chat_body(text: str = "hello", usage: dict | None = None) -> dict:
    """Return a chat.completion JSON body answering `text`."""
    body = {"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "fake-model",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}]}
    return body | ({"usage": usage} if usage else {})


class _Handler(BaseHTTPRequestHandler):
    """Answer a POST with the next answer of the FakeOpenAI the server carries (server.fake)."""

    def do_POST(self):
        """Record the request, then send the next scripted answer or the fault its headers ask for."""
        fake = self.server.fake
        length = int(self.headers.get("content-length", 0))
        fake.requests.append({"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()},
                              "json": json.loads(self.rfile.read(length) or b"{}")})
        status, headers, body = fake.script.pop(0) if fake.script else (500, {}, {"error": "unscripted"})
        time.sleep(float(headers.get("x-delay", 0)))  # lets a test provoke a client timeout
        if headers.get("x-reset"):  # drop the connection without an answer (RST, not FIN)
            self._reset()
            return
        raw = body if isinstance(body, bytes) else json.dumps(body).encode()
        if headers.get("x-drip-headers"):
            self._trickle_headers(status, raw, float(headers["x-drip-headers"]))
            return
        self.send_response(status)
        for key, value in ({"content-type": "application/json"} | headers).items():
            self.send_header(key, value)
        self.send_header("content-length", str(len(raw)))
        self.end_headers()
        try:
            self._send(raw, headers)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up first (the timeout tests)
            pass

    def _trickle_headers(self, status: int, raw: bytes, drip: float) -> None:
        """Send the status line and headers one byte every `drip` seconds, then the body."""
        head = (f"HTTP/1.1 {status} OK\r\ncontent-type: application/json\r\n"
                f"content-length: {len(raw)}\r\n\r\n").encode()
        try:
            for i in range(len(head)):
                self.wfile.write(head[i:i + 1])
                self.wfile.flush()
                time.sleep(drip)
            self.wfile.write(raw)
        except (BrokenPipeError, ConnectionResetError):
            pass
        self.close_connection = True

    def _send(self, raw: bytes, headers: dict) -> None:
        """Write the body at once, one byte every x-drip seconds, or its first half only (x-cut: then close,
        reset or stall)."""
        drip, cut = float(headers.get("x-drip", 0)), headers.get("x-cut")
        if cut:
            self._cut(raw[:len(raw) // 2], cut)
        elif not drip:
            self.wfile.write(raw)
        else:
            self._drip(raw, drip)

    def _cut(self, part: bytes, how: str) -> None:
        """Send part of the announced body, then close (FIN), reset (RST) or stall until the server closes."""
        self.wfile.write(part)
        self.wfile.flush()
        if how == "stall":
            self.server.fake.released.wait(30)
        elif how == "reset":
            self._reset()
        self.close_connection = True

    def _reset(self) -> None:
        """Make closing the socket send RST instead of FIN."""
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.close_connection = True

    def _drip(self, raw: bytes, drip: float) -> None:
        """Write the body one byte every `drip` seconds (a server that trickles its answer)."""
        for i in range(len(raw)):
            self.wfile.write(raw[i:i + 1])
            self.wfile.flush()
            time.sleep(drip)

    def log_message(self, *args):  # keep test output quiet
        pass


class FakeOpenAI:
    """Answer each POST with the next scripted (status, headers, body); body is a dict (JSON) or raw bytes.

    Headers steer faults: x-delay (seconds before answering), x-drip (seconds per body byte), x-drip-headers
    (seconds per byte of the status line and headers), x-reset (drop the connection unanswered), x-cut (announce
    the whole body's length, send half of it, then "close", "reset" or "stall" until the server stops).
    """

    def __init__(self):
        self.script: list[tuple[int, dict, dict | bytes]] = []
        self.requests: list[dict] = []
        self.released = threading.Event()  # set on close: frees handlers that stall
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.server.fake = self  # the handler reads its script from here
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def answer(self, status: int = 200, body: dict | bytes | None = None, headers: dict | None = None) -> None:
        """Queue one answer."""
        self.script.append((status, headers or {}, chat_body() if body is None else body))

    def reply(self, text: str = "hello", usage: dict | None = None, headers: dict | None = None) -> None:
        """Queue a 200 chat completion answering `text`, with server-reported usage when given."""
        self.answer(200, chat_body(text, usage), headers)

    def close(self) -> None:
        """Stop serving (stalled answers end too)."""
        self.released.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def fake_openai():
    """A running fake OpenAI-compatible server."""
    fake = FakeOpenAI()
    yield fake
    fake.close()


@pytest.fixture(autouse=True)
def _no_model_env(monkeypatch):
    """Keep the developer's own model settings out of the tests."""
    for var in ("AOI_MODEL", "AOI_BASE_URL", "AOI_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY",
                "OPENAI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
