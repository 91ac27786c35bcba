"""Time closing a served twin (the API server's stop) after one request: median and spread over 20 closes.

    .venv/bin/python benchmarks/api_shutdown.py [--rounds 20]
    PYTHONPATH=/tmp/aoi-team/base/src .venv/bin/python benchmarks/api_shutdown.py   # an older tree's server
"""

from __future__ import annotations

import argparse
import http.client
import ssl
import statistics
import time
from urllib.parse import urlsplit

from aoi.twin import build_twin
from aoi.twin.serving import serve


def one_close(twin) -> float:
    """Serve the twin, answer one request, and return the seconds stop() takes."""
    server = serve(twin)
    url = urlsplit(server.url)
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE  # loopback, self-signed
    conn = http.client.HTTPSConnection(url.hostname, url.port, context=context, timeout=10)
    conn.request("GET", "/version", headers={"Authorization": f"Bearer {twin.credentials['admin']}"})
    conn.getresponse().read()
    conn.close()
    start = time.perf_counter()
    server.stop()
    return time.perf_counter() - start


def main() -> None:
    """Print the median, min and max close time in milliseconds."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    twin = build_twin(["hotel-reservation"])
    times = [one_close(twin) * 1000 for _ in range(args.rounds)]
    print(f"close ms over {args.rounds}: median={statistics.median(times):.2f} min={min(times):.2f} "
          f"max={max(times):.2f}")


if __name__ == "__main__":
    main()
