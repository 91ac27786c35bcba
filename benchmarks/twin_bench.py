"""Print medians for the twin: start with all three apps, one `kubectl get pods` round trip, in-process reads.

Run: python benchmarks/twin_bench.py [--repeat N]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from aoi.twin import build_twin
from aoi.twin.api.authz import ADMIN
from aoi.twin.api.handlers import Call, list_objects
from aoi.twin.api.routes import parse
from aoi.twin.testing import Served


def median_ms(fn, repeat: int) -> float:
    """Return the median wall time of fn() in milliseconds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    build_twin(["hotel-reservation"])  # warm imports and caches once
    start = median_ms(lambda: build_twin(), max(3, args.repeat // 3))
    twin = build_twin()
    served = Served(twin, Path(tempfile.mkdtemp()))
    served.ok("get pods -n test-hotel-reservation")  # discovery cache warm, as in a session
    get_pods = median_ms(lambda: served.ok("get pods -n test-hotel-reservation"), args.repeat)
    pod = twin.list("pods", "test-hotel-reservation")[0]["metadata"]["name"]
    read_one = median_ms(lambda: twin.get("pods", "test-hotel-reservation", pod), 1000)
    call = Call("GET", parse("/api/v1/namespaces/test-hotel-reservation/pods"), ADMIN, {"accept": "application/json"},
                b"")
    read_list = median_ms(lambda: list_objects(twin, call), 200)
    served.close()
    print(f"twin start, all three apps (build + 5 min settle): median {start:.0f} ms   (target <= 1000 ms)")
    print(f"kubectl get pods round trip (real kubectl, HTTPS):  median {get_pods:.0f} ms   (target <= 150 ms)")
    print(f"in-process read of one pod:                        median {read_one * 1000:.1f} us")
    print(f"in-process API list of 19 pods as JSON:            median {read_list:.2f} ms (target <= 1 ms)")


if __name__ == "__main__":
    main()
