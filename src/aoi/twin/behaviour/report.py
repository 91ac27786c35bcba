"""The wrk2 report a finished workload job prints to its log."""

from __future__ import annotations


def _ms(seconds: float) -> str:
    """Format a latency as wrk2 does (ms up to 1 s, then s)."""
    return f"{seconds * 1000:.2f}ms" if seconds < 1 else f"{seconds:.2f}s"


def _percentile(values: list[float], q: float) -> float:
    """Return the q-quantile (0..1) of values by nearest rank."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, int(round(q * len(ordered))) - 1))]


def wrk_report(source, now: float) -> list[str]:
    """Return wrk2's summary for a finished source: latency distribution, totals, errors."""
    lat = source.latencies or [0.0]
    mean = sum(lat) / len(lat)
    std = (sum((x - mean) ** 2 for x in lat) / len(lat)) ** 0.5
    duration = (source.end or now) - source.start
    lines = [f"Running {int(duration)}s test @ {source.url}", "  2 threads and 2 connections",
             "  Thread Stats   Avg      Stdev     Max   +/- Stdev",
             f"    Latency   {_ms(mean):>8} {_ms(std):>8} {_ms(max(lat)):>8}   {75.0:.2f}%",
             f"    Req/Sec   {source.rate / 2:>8.2f} {source.rate / 10:>8.2f} {source.rate:>8.2f}   {90.0:.2f}%",
             "  Latency Distribution (HdrHistogram - Recorded Latency)"]
    for q in (0.5, 0.75, 0.9, 0.99, 0.999, 0.9999, 0.99999, 1.0):
        lines.append(f" {q * 100:7.3f}%  {_ms(_percentile(lat, q)):>8}")
    lines.append(f"  {source.sent} requests in {duration:.2f}s, {source.sent * 0.27:.2f}KB read")
    if source.timeouts:
        lines.append(f"  Socket errors: connect 0, read 0, write 0, timeout {source.timeouts}")
    if source.failed - source.timeouts > 0:
        lines.append(f"  Non-2xx or 3xx responses: {source.failed - source.timeouts}")
    lines += [f"Requests/sec: {source.sent / max(duration, 1e-9):>10.2f}",
              f"Transfer/sec: {source.sent * 0.27 / max(duration, 1e-9):>10.2f}KB"]
    return lines
