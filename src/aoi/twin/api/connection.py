"""The HTTP layer of one API connection: timeouts, bounded body reads, Status answers for unparsable requests,
whole replies, chunked streams and the WebSocket upgrade."""

from __future__ import annotations

import select
import socket
import ssl
import time
from http.server import BaseHTTPRequestHandler

from aoi.twin.api import bodies
from aoi.twin.api.handlers import Reply
from aoi.twin.core.errors import ApiError

LINGER_SECONDS = 0.5  # how long a refused body may keep arriving before the connection closes
READ_TIMEOUT = 60.0  # seconds a connection may sit idle or stall mid-body before the server closes it


class Connection(BaseHTTPRequestHandler):
    """One HTTPS connection; the API semantics live in the subclass (server.Handler)."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # one response, one segment: avoids the 40 ms delayed-ACK stall
    streaming = head_only = unread = False

    def setup(self):
        """Do the TLS handshake in this connection's own thread, not in the accept loop, under the read timeout."""
        self.timeout = self.server.read_timeout  # StreamRequestHandler applies it to every read and write
        self.request.settimeout(self.timeout)  # a client that never finishes its handshake cannot hold a thread
        self.request = self.server.tls.wrap_socket(self.request, server_side=True)
        super().setup()

    def handle(self):
        """Serve the connection; a client that drops mid-handshake is not an error."""
        try:
            super().handle()
        except (ssl.SSLError, ConnectionResetError, BrokenPipeError, TimeoutError):
            self.close_connection = True

    def log_message(self, format, *args):
        """Keep quiet; the twin is not a web server for humans."""

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """Answer a request the HTTP layer could not parse with a Status, and close the connection."""
        self.close_connection = True
        reasons = {400: "BadRequest", 414: "RequestURITooLong", 431: "RequestHeaderFieldsTooLarge"}
        reason = reasons.get(code, "BadRequest")
        self.send_reply(Reply(code, *ApiError(code, reason, message or self.responses.get(code, ("",))[0]).body()))

    def declares_body(self) -> bool:
        """Tell whether the request says a body follows."""
        return (self.headers.get("Content-Length") or "0").strip() != "0" or "Transfer-Encoding" in self.headers

    def read_body(self) -> bytes:
        """Read the body (Content-Length or chunked), bounded in size and time; reject deep nesting."""
        try:
            if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
                body = bodies.read_chunked(self.rfile)
            else:
                body = bodies.read_exactly(self.rfile, bodies.content_length(self.headers.get("Content-Length")))
        except ApiError:
            self.close_connection = self.unread = True  # the rest of the body, if any, is still on the wire
            raise
        if "protobuf" not in (self.headers.get("Content-Type") or ""):
            bodies.check_depth(body)
        return body

    def linger(self) -> None:
        """Drop what a refused body still sends, briefly, so closing does not reset the connection (and lose the
        answer) before the client has read it."""
        deadline, left = time.monotonic() + LINGER_SECONDS, bodies.MAX_BYTES
        try:
            self.connection.settimeout(LINGER_SECONDS)
            while left > 0 and time.monotonic() < deadline and (chunk := self.rfile.read1(65536)):
                left -= len(chunk)
        except (OSError, ValueError):
            pass

    def send_reply(self, reply: Reply) -> None:
        """Write a whole response in one send."""
        closing = "Connection: close\r\n" if self.close_connection else ""  # the client must not reuse it
        head = (f"HTTP/1.1 {reply.code} {self.responses.get(reply.code, ('',))[0]}\r\n"
                f"Content-Type: {reply.content_type}\r\nContent-Length: {len(reply.body)}\r\n"
                f"Cache-Control: no-cache, private\r\n{closing}\r\n")
        self.wfile.write(head.encode() + (b"" if getattr(self, "head_only", False) else reply.body))
        self.wfile.flush()

    def start_stream(self, content_type: str) -> None:
        """Begin a chunked response (watch)."""
        self.streaming = True
        # the stream ends by closing the connection, so say so: clients must not reuse it
        self.wfile.write(f"HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nTransfer-Encoding: chunked\r\n"
                         f"Cache-Control: no-cache, private\r\nConnection: close\r\n\r\n".encode())
        self.wfile.flush()

    def write_chunk(self, data: bytes) -> bool:
        """Write one chunk; return False when the client has gone."""
        try:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()
            return True
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError, OSError):
            self.close_connection = True
            return False

    def end_stream(self) -> None:
        """Finish a chunked response."""
        self.write_chunk(b"")
        self.close_connection = True

    def connection_alive(self, wait: float = 0.0) -> bool:
        """Tell whether the client is still connected, waiting up to `wait` seconds for it to hang up."""
        try:
            readable, _, _ = select.select([self.connection], [], [], wait)
            if not readable:
                return True
            return bool(self.connection.recv(1, socket.MSG_PEEK))
        except (OSError, ssl.SSLError, ValueError):
            return False

    def upgrade(self, accept: str, protocol: str) -> None:
        """Switch the connection to WebSocket with the chosen channel protocol."""
        self.streaming = True
        self.wfile.write(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                          f"Sec-WebSocket-Accept: {accept}\r\nSec-WebSocket-Protocol: {protocol}\r\n\r\n").encode())
        self.wfile.flush()
        self.close_connection = True

    def send_raw(self, data: bytes) -> None:
        """Write raw bytes on an upgraded connection."""
        self.wfile.write(data)
        self.wfile.flush()
