"""A loopback OpenAI-compatible completions server on the local transformers policy, with vLLM's fields Echo uses.

    python -m aoi.echo.serve --base tiny --port 8000        # then: --sampler-url http://127.0.0.1:8000/v1

It binds 127.0.0.1 only and serves `GET /v1/models`, `POST /v1/completions` (one prompt, as text or token ids;
max_tokens, temperature, seed, logprobs, return_tokens_as_token_ids, prompt_logprobs, and a JSON schema through
`structured_outputs.json`, `guided_json` or `response_format.json_schema.schema`), `POST /v1/load_lora_adapter`
`{"lora_name", "lora_path"}` and `POST /v1/unload_lora_adapter` (a PEFT adapter folder; the model name then selects
it). Sampling is aoi.models.local's (the schema mask of aoi.models.constrained, the stop at the JSON's close, no
top-k/top-p cut: a request asking for a cut or a penalty is refused), seeded by the request's seed, so it draws
exactly what a local sampler draws. Log-probs are raw
(before temperature, as vLLM's default `--logprobs-mode raw_logprobs`) and unmasked. One request at a time: it is for
tests and small runs without vLLM, not for throughput.
"""

from __future__ import annotations

import argparse
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from aoi.echo.loopback import PolicyServer
from aoi.train.common import Lora

__all__ = ["PolicyServer", "Running", "main"]


class _Handler(BaseHTTPRequestHandler):
    """JSON in, JSON (or text) out, through the PolicyServer of the HTTP server."""

    def do_GET(self) -> None:  # http.server's names
        """Answer a GET."""
        self._answer(*self.server.policy.route("GET", self.path, {}))

    def do_POST(self) -> None:
        """Answer a POST with a JSON body."""
        try:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        except ValueError as err:
            self._answer(400, {"error": {"message": f"the body is not JSON ({err})", "code": 400}})
            return
        self._answer(*self.server.policy.route("POST", self.path, body))

    def _answer(self, status: int, payload: Any) -> None:
        """Write the status and the body."""
        data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain" if isinstance(payload, str) else "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        """Stay quiet (a sampler makes two requests per decision)."""


class Running:
    """A PolicyServer served over HTTP on 127.0.0.1 in a thread; `url` ends in /v1; `close()` stops it."""

    def __init__(self, policy: PolicyServer, port: int = 0):
        self.http = ThreadingHTTPServer(("127.0.0.1", port), _Handler)
        self.http.policy = policy
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.http.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        """Stop serving and free the port."""
        self.http.shutdown()
        self.http.server_close()

    def __enter__(self) -> Running:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def main(argv: list[str] | None = None) -> None:
    """Serve a base (+ runtime LoRA adapters) on 127.0.0.1 until interrupted."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base", default="tiny", help="tiny, smollm2 or a model directory (the trainer's --base)")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--lora-r", type=int, default=Lora().r, help="LoRA rank of the adapters it will load")
    parser.add_argument("--lora-alpha", type=int, default=Lora().alpha, help="LoRA alpha of those adapters")
    parser.add_argument("--served-model-name", default=None, help="the base's model name (default: --base)")
    args = parser.parse_args(argv)
    policy = PolicyServer(args.base, device=args.device, lora=Lora(r=args.lora_r, alpha=args.lora_alpha),
                          name=args.served_model_name)
    running = Running(policy, args.port)
    print(f"serving {policy.name} at {running.url}", flush=True)
    try:
        running.thread.join()
    except KeyboardInterrupt:
        running.close()


if __name__ == "__main__":
    main()
